/** C-like value text that debuggers print (gdb and lldb alike): string literals. */

/**
 * Reads a C string literal as a debugger prints it (`"abc\n"`, possibly with `<repeats N times>`
 * runs and a trailing `...` when `print elements` cut it) back into text.
 */
export function unquoteCString(text: string): string | null {
  const start = text.indexOf('"');
  if (start < 0) return null;
  let out = "";
  let index = start + 1;
  while (index < text.length) {
    const ch = text[index] ?? "";
    if (ch === '"') {
      // gdb joins pieces of a string with ", " around repeats: `"ab", 'c' <repeats 20 times>, "d"`
      const rest = text.slice(index + 1);
      const repeat = /^, '(\\?.)' <repeats (\d+) times>(?:, "|$)/.exec(rest);
      if (repeat) {
        out += (repeat[1] ?? "").replace(/^\\/, "").repeat(Number(repeat[2]));
        index += 1 + repeat[0].length;
        if (!repeat[0].endsWith('"')) break;
        continue;
      }
      if (rest.startsWith("...")) out += "...";
      break;
    }
    if (ch === "\\") {
      const next = text[index + 1] ?? "";
      const octal = /^[0-7]{1,3}/.exec(text.slice(index + 1));
      // lldb escapes other bytes in hex: `\x05`.
      const hex = next === "x" ? /^[0-9a-fA-F]{1,2}/.exec(text.slice(index + 2)) : null;
      if (hex) {
        out += String.fromCharCode(parseInt(hex[0], 16));
        index += 2 + hex[0].length;
        continue;
      }
      if (octal) {
        out += String.fromCharCode(parseInt(octal[0], 8));
        index += 1 + octal[0].length;
        continue;
      }
      out += ESCAPES[next] ?? next;
      index += 2;
      continue;
    }
    out += ch;
    index += 1;
  }
  return out;
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", f: "\f", v: "\v", e: "\x1b" };
