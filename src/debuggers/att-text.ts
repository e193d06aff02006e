/** x86 instruction text, as every backend's disassembly is read (gdb's and LLDB's AT&T, cdb's Intel alike). */

/**
 * Operands are comma separated, but AT&T's `0x8(%rax,%rbx,4)` and Intel's `[rax+rcx*4]` or
 * `prog!f (00007ff6`1a2b1100)` have commas of their own.
 */
export function splitOperands(text: string): string[] {
  if (text.trim() === "") return [];
  const operands: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(" || ch === "[") depth++;
    if (ch === ")" || ch === "]") depth--;
    if (ch === "," && depth === 0) {
      operands.push(current.trim());
      current = "";
    } else current += ch;
  }
  operands.push(current.trim());
  return operands;
}
