/** Small helpers shared by the parsers of gdb's console text. */

/**
 * gdb interleaves warnings with command output, sometimes in the middle of a line (on some
 * kernels every thread of a core warns that its `.reg-xstate` section is too small). Parsers
 * see the output without them.
 */
function withoutWarnings(output: string): string {
  return output
    .replace(/warning: [^\n]*?core file too small\.\n?/g, "")
    .split("\n")
    .filter((line) => !/^warning: /.test(line))
    .join("\n");
}

export function lines(output: string): string[] {
  return withoutWarnings(output).split("\n");
}

/** A hex address as gdb prints it, normalised: lower case, no leading zeros ("0x0" for zero). */
export function normalizeAddress(text: string): string {
  const value = BigInt(text);
  return `0x${value.toString(16)}`;
}

export function toBigInt(address: string | null): bigint | null {
  if (address === null) return null;
  try {
    return BigInt(address);
  } catch {
    return null;
  }
}

/** The value after "$N = " in the output of `print`, or null when gdb printed none. */
export function printedValue(output: string): string | null {
  const match = /^\$\d+ = (.*)$/m.exec(withoutWarnings(output));
  return match?.[1]?.trim() ?? null;
}

/**
 * Reads a C string literal as gdb prints it (`"abc\n"`, possibly with `<repeats N times>`
 * runs and a trailing `...` when `print elements` cut it) back into text.
 */
export function unquoteGdbString(text: string): string | null {
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
