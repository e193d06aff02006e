/** x86 instruction text in AT&T syntax, as every backend's disassembly is read (gdb's and LLDB's alike). */

/** AT&T operands are comma separated, but `0x8(%rax,%rbx,4)` has commas of its own. */
export function splitOperands(text: string): string[] {
  if (text.trim() === "") return [];
  const operands: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      operands.push(current.trim());
      current = "";
    } else current += ch;
  }
  operands.push(current.trim());
  return operands;
}
