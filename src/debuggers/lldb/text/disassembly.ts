/**
 * Parser for `disassemble` (x86-64 in AT&T syntax). LLVM's disassembler spells every mnemonic with
 * its operand size (`movq %rsp, %rbp`, `callq`, `retq`); gdb leaves the size out where a register
 * operand already says it. The model takes gdb's spelling, so that an instruction reads the same
 * whichever debugger printed it.
 */
import type { Disassembly, Instruction } from "../../model.js";
import { normalizeAddress } from "../../model.js";
import { splitOperands } from "../../att-text.js";

const ROW = /^(->)?\s*(0x[0-9a-f]+)(?: <\+(\d+)>)?:\s+(.*)$/;
const PREFIXES = new Set(["rep", "repz", "repe", "repnz", "repne", "lock", "notrack", "bnd", "data16", "addr32"]);
/** Mnemonics whose size suffix LLVM always prints and gdb prints only when no register says the size. */
const SIZED = /^(mov|add|sub|adc|sbb|and|or|xor|cmp|test|lea|push|pop|call|ret|jmp|inc|dec|neg|not|shl|shr|sal|sar|rol|ror|imul|mul|idiv|div|xchg|cmpxchg|xadd|bt|bts|btr|btc|leave|nop)([bwlq])$/;

export function parseDisassembly(output: string): Disassembly {
  const rows: { instruction: Instruction; comment: string | null; end: bigint | null }[] = [];
  let fn: string | null = null;
  let unreadable = false;
  for (const line of output.split("\n")) {
    const header = /^(?:\S+?`)?(.+):$/.exec(line);
    if (header && !line.startsWith(" ") && !/^error:/.test(line)) fn = header[1] ?? null;
    if (/error: .*(?:memory|read)/i.test(line)) unreadable = true;
    const row = ROW.exec(line);
    if (!row) continue;
    const [listed, comment] = splitComment(row[4] ?? "");
    // `--bytes` puts the encoding before the instruction: `e8 89 fe ff ff  callq  0x1040`.
    const encoded = /^((?:[0-9a-f]{2} )+) +(\S.*)$/.exec(listed);
    const bytes = encoded ? (encoded[1] ?? "").trim().split(" ").map((byte) => parseInt(byte, 16)) : null;
    // An AArch64 encoding is one 32-bit word: `0xb9402000   ldr    w0, [x0, #0x20]`.
    const word = encoded ? null : /^0x[0-9a-f]{8} +(\S.*)$/.exec(listed);
    const code = encoded ? (encoded[2] ?? "") : word ? (word[1] ?? "") : listed;
    const words = code.trim().split(/\s+/);
    while (words.length > 1 && PREFIXES.has(words[0] ?? "")) words.shift();
    const [spelled = "", ...rest] = words;
    const address = normalizeAddress(row[2] ?? "0x0");
    const operands = splitOperands(rest.join(" "));
    const target = bytes ? branchTarget(BigInt(address), bytes) : null;
    if (target !== null && operands.length === 1 && !operands[0]?.startsWith("*")) {
      // A direct call or jump, named as gdb names it: the target's address and its symbol.
      const symbol = comment === null ? null : symbolOfComment(comment, fn);
      operands[0] = `0x${target.toString(16)}${symbol ? ` <${symbol}>` : ""}`;
    }
    const instruction: Instruction = {
      address,
      location: row[3] === undefined ? null : `+${row[3]}`,
      mnemonic: gdbMnemonic(spelled, operands),
      operands,
      reference: null,
      current: row[1] === "->",
    };
    rows.push({ instruction, comment, end: bytes ? BigInt(address) + BigInt(bytes.length) : word ? BigInt(address) + 4n : null });
  }
  // A pc-relative operand names the address after its instruction plus the displacement.
  for (const [index, { instruction, comment, end }] of rows.entries()) {
    const relative = instruction.operands.map((operand) => /^(-?0x[0-9a-f]+|-?\d+)?\(%rip\)$/.exec(operand)).find(Boolean);
    const next = end ?? toBigIntOrNull(rows[index + 1]?.instruction.address);
    if (relative && next !== null) {
      const displacement = relative[1] ?? "0";
      const target = next + (displacement.startsWith("-") ? -BigInt(displacement.slice(1)) : BigInt(displacement));
      instruction.reference = { address: normalizeAddress(`0x${target.toString(16)}`), symbol: comment === null ? null : symbolOfComment(comment, fn) };
    }
  }
  const instructions = rows.map((row) => row.instruction);
  return { function: fn, instructions, unreadable: unreadable && instructions.length === 0 };
}

function toBigIntOrNull(address: string | undefined): bigint | null {
  return address === undefined ? null : BigInt(address);
}

/**
 * The target of a direct (relative) call or jump from its encoding. LLDB 16 prints the target of
 * such a branch in a position-independent program as an address in the file, not in the process.
 */
function branchTarget(address: bigint, bytes: number[]): bigint | null {
  let at = 0;
  // Operand-size, segment and branch-hint prefixes, and a REX prefix.
  while (at < bytes.length && [0x66, 0x2e, 0x3e, 0xf2, 0xf3].includes(bytes[at] ?? -1)) at++;
  if ((bytes[at] ?? 0) >= 0x40 && (bytes[at] ?? 0) <= 0x4f) at++;
  const opcode = bytes[at];
  const end = address + BigInt(bytes.length);
  const signed = (offset: number, size: number) => {
    let value = 0n;
    for (let i = size - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[offset + i] ?? 0);
    const bits = BigInt(size * 8);
    return value >= 1n << (bits - 1n) ? value - (1n << bits) : value;
  };
  if ((opcode === 0xe8 || opcode === 0xe9) && bytes.length - at === 5) return end + signed(at + 1, 4);
  if ((opcode === 0xeb || (opcode !== undefined && opcode >= 0x70 && opcode <= 0x7f)) && bytes.length - at === 2) return end + signed(at + 1, 1);
  if (opcode === 0x0f && (bytes[at + 1] ?? 0) >= 0x80 && (bytes[at + 1] ?? 0) <= 0x8f && bytes.length - at === 6) return end + signed(at + 2, 4);
  return null;
}

function gdbMnemonic(mnemonic: string, operands: string[]): string {
  const sized = SIZED.exec(mnemonic);
  if (!sized) return mnemonic;
  const base = sized[1] ?? mnemonic;
  // gdb never sizes these, and sizes the others only when no operand is a register.
  if (/^(push|pop|call|ret|jmp|leave|nop|lea)$/.test(base)) return base;
  // SSE's `movq %xmm0, -0x20(%rbp)` (and `movq %rax, %xmm0`) is another instruction than `mov`.
  if (operands.some((operand) => /^%[xyz]?mm\d+$/.test(operand))) return mnemonic;
  return operands.some((operand) => /^%[a-z0-9]+$/.test(operand)) ? base : mnemonic;
}

function splitComment(text: string): [string, string | null] {
  const at = text.indexOf(" ; ");
  if (at < 0) return [text, null];
  return [text.slice(0, at), text.slice(at + 3).trim()];
}

/**
 * `; typeinfo for std::runtime_error`, `; _ZTISt13runtime_error@GLIBCXX_3.4`, `; "text"`, and
 * `; <+70> at f.c:34:23` for a place in the listed function `fn` (gdb's `<broadcast+70>`).
 */
function symbolOfComment(comment: string, fn: string | null): string | null {
  if (comment.startsWith('"')) return null;
  const inside = /^<\+(\d+)>/.exec(comment);
  if (inside) return fn === null ? null : inside[1] === "0" ? fn : `${fn}+${inside[1]}`;
  const stub = /^symbol stub for: (.*)$/.exec(comment);
  if (stub) return `${stub[1]}@plt`;
  // A PE's COFF section-group names: `.rdata$_ZTISt13runtime_error` is that symbol's data.
  return comment.replace(/ at \S+:\d+(?::\d+)?$/, "").replace(/^\.[a-z]+\$(?:\.refptr\.)?(?=\S)/, "");
}
