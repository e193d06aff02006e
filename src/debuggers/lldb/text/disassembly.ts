/**
 * Parser for `disassemble` (x86-64 in AT&T syntax). LLVM's disassembler spells every mnemonic with
 * its operand size (`movq %rsp, %rbp`, `callq`, `retq`); gdb leaves the size out where a register
 * operand already says it. The model takes gdb's spelling, so that an instruction reads the same
 * whichever debugger printed it.
 */
import type { Disassembly, Instruction } from "../../model.js";
import { normalizeAddress } from "../../model.js";

const ROW = /^(->)?\s*(0x[0-9a-f]+)(?: <\+(\d+)>)?:\s+(.*)$/;
const PREFIXES = new Set(["rep", "repz", "repe", "repnz", "repne", "lock", "notrack", "bnd", "data16", "addr32"]);
/** Mnemonics whose size suffix LLVM always prints and gdb prints only when no register says the size. */
const SIZED = /^(mov|add|sub|adc|sbb|and|or|xor|cmp|test|lea|push|pop|call|ret|jmp|inc|dec|neg|not|shl|shr|sal|sar|rol|ror|imul|mul|idiv|div|xchg|cmpxchg|xadd|bt|bts|btr|btc|leave|nop)([bwlq])$/;

export function parseDisassembly(output: string): Disassembly {
  const rows: { instruction: Instruction; comment: string | null }[] = [];
  let fn: string | null = null;
  let unreadable = false;
  for (const line of output.split("\n")) {
    const header = /^(?:\S+?`)?(.+):$/.exec(line);
    if (header && !line.startsWith(" ") && !/^error:/.test(line)) fn = header[1] ?? null;
    if (/error: .*(?:memory|read)/i.test(line)) unreadable = true;
    const row = ROW.exec(line);
    if (!row) continue;
    const [code, comment] = splitComment(row[4] ?? "");
    const words = code.trim().split(/\s+/);
    while (words.length > 1 && PREFIXES.has(words[0] ?? "")) words.shift();
    const [spelled = "", ...rest] = words;
    const operands = splitOperands(rest.join(" "));
    const instruction: Instruction = {
      address: normalizeAddress(row[2] ?? "0x0"),
      location: row[3] === undefined ? null : `+${row[3]}`,
      mnemonic: gdbMnemonic(spelled, operands),
      operands,
      reference: null,
      current: row[1] === "->",
    };
    rows.push({ instruction, comment });
  }
  // A pc-relative operand names the address after its instruction plus the displacement.
  for (const [index, { instruction, comment }] of rows.entries()) {
    const relative = instruction.operands.map((operand) => /^(-?0x[0-9a-f]+|-?\d+)?\(%rip\)$/.exec(operand)).find(Boolean);
    const next = rows[index + 1]?.instruction;
    if (relative && next) {
      const displacement = relative[1] ?? "0";
      const target = BigInt(next.address) + (displacement.startsWith("-") ? -BigInt(displacement.slice(1)) : BigInt(displacement));
      instruction.reference = { address: normalizeAddress(`0x${target.toString(16)}`), symbol: comment === null ? null : symbolOfComment(comment) };
    }
  }
  const instructions = rows.map((row) => row.instruction);
  return { function: fn, instructions, unreadable: unreadable && instructions.length === 0 };
}

function gdbMnemonic(mnemonic: string, operands: string[]): string {
  const sized = SIZED.exec(mnemonic);
  if (!sized) return mnemonic;
  const base = sized[1] ?? mnemonic;
  // gdb never sizes these, and sizes the others only when no operand is a register.
  if (/^(push|pop|call|ret|jmp|leave|nop|lea)$/.test(base)) return base;
  return operands.some((operand) => /^%[a-z0-9]+$/.test(operand)) ? base : mnemonic;
}

function splitComment(text: string): [string, string | null] {
  const at = text.indexOf(" ; ");
  if (at < 0) return [text, null];
  return [text.slice(0, at), text.slice(at + 3).trim()];
}

/** `; typeinfo for std::runtime_error`, `; _ZTISt13runtime_error@GLIBCXX_3.4`, `; "text"`. */
function symbolOfComment(comment: string): string | null {
  if (comment.startsWith('"')) return null;
  return comment.replace(/^symbol stub for: /, "").replace(/ at \S+:\d+(?::\d+)?$/, "");
}

/** AT&T operands are comma separated, but `0x8(%rax,%rbx,4)` has commas of its own. */
function splitOperands(text: string): string[] {
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
