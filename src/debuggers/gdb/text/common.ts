/** Small helpers shared by the parsers of gdb's console text. */
export { normalizeAddress, toBigInt } from "../../model.js";
export { unquoteCString as unquoteGdbString } from "../../c-text.js";

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


/** The value after "$N = " in the output of `print`, or null when gdb printed none. */
export function printedValue(output: string): string | null {
  const match = /^\$\d+ = (.*)$/m.exec(withoutWarnings(output));
  return match?.[1]?.trim() ?? null;
}
