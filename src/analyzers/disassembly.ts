/**
 * Parser for `x/i`, `x/Ni` and `disassemble` (x86-64, AT&T syntax: gdb's default), and what an
 * instruction tells about a crash: which way it touches memory, and what a call was passed.
 */
import { lines, normalizeAddress } from "./gdb-text.js";

export interface Instruction {
  address: string;
  /** `leaf+12` from x/i, or `+12` from disassemble; null when gdb knows no symbol there. */
  location: string | null;
  mnemonic: string;
  operands: string[];
  /** gdb's `# 0xADDR <symbol>` annotation of a rip-relative operand. */
  reference: { address: string; symbol: string | null } | null;
  /** Marked `=>`: the selected frame's pc. */
  current: boolean;
}

export interface Disassembly {
  function: string | null;
  instructions: Instruction[];
  /** gdb could not read the code (e.g. the pc is not in mapped memory). */
  unreadable: boolean;
}

export function parseDisassembly(output: string): Disassembly {
  const instructions: Instruction[] = [];
  let fn: string | null = null;
  let unreadable = false;
  for (const line of lines(output)) {
    const header = /^Dump of assembler code for function (.*):$/.exec(line);
    if (header) fn = header[1] ?? null;
    if (/Cannot access memory at address/.test(line)) unreadable = true;
    const row = /^(=>)?\s*(0x[0-9a-f]+)(?: <([^>]*)>)?:\t(.*)$/.exec(line);
    if (!row) continue;
    const text = (row[4] ?? "").trim();
    // Through MI the error goes to the result record and the console keeps only `=> 0x0:\t`.
    if (text === "" || /^Cannot access memory/.test(text)) {
      unreadable = true;
      continue;
    }
    const comment = /\s+# (0x[0-9a-f]+)(?: <(.*)>)?$/.exec(text);
    const code = comment ? text.slice(0, comment.index) : text;
    const words = code.trim().split(/\s+/);
    while (words.length > 1 && PREFIXES.has(words[0] ?? "")) words.shift();
    const [mnemonic = "", ...rest] = words;
    instructions.push({
      address: normalizeAddress(row[2] ?? "0"),
      location: row[3] ?? null,
      mnemonic,
      operands: splitOperands(rest.join(" ")),
      reference: comment ? { address: normalizeAddress(comment[1] ?? "0"), symbol: comment[2] ?? null } : null,
      current: row[1] === "=>",
    });
  }
  return { function: fn, instructions, unreadable };
}

const PREFIXES = new Set(["rep", "repz", "repe", "repnz", "repne", "lock", "notrack", "bnd", "data16", "addr32", "cs", "ds"]);

/** AT&T operands are comma separated, but `8(%rax,%rbx,4)` has commas of its own. */
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

function isMemoryOperand(operand: string): boolean {
  const bare = operand.replace(/^\*/, "");
  if (bare.startsWith("$") || /^%[a-z0-9]+$/.test(bare)) return false;
  // A direct branch target prints as `0x401136 <main+16>`: an address, not a memory operand.
  if (/<.*>$/.test(bare) && !bare.includes("(")) return false;
  return bare.includes("(") || /^(?:%[a-z]s:)?-?(?:0x[0-9a-f]+|\d+)$/.test(bare);
}

const READ_ONLY = /^(cmp(?!xchg)|test|bt|ucomis|comis|ptest|vptest|div|idiv|mul|imul|push|jmp|call|ret|pop)/;

/**
 * Which way the instruction touches memory: "write" when it stores (its destination, the last
 * AT&T operand, is memory; or it pushes onto the stack), "read" when it only loads, null when it
 * touches no data memory (lea, register arithmetic).
 */
export function memoryAccess(instruction: Instruction): "read" | "write" | null {
  const { mnemonic, operands } = instruction;
  if (/^(lea|nop|prefetch|endbr|ud)/.test(mnemonic)) return null;
  const memory = operands.map(isMemoryOperand);
  if (/^(push|call)/.test(mnemonic)) return memory.some(Boolean) ? "read" : "write";
  if (/^(ret|pop)/.test(mnemonic)) return "read";
  if (READ_ONLY.test(mnemonic) || (operands.length === 1 && /^j/.test(mnemonic))) {
    return memory.some(Boolean) ? "read" : null;
  }
  if (memory.at(-1)) return "write";
  return memory.some(Boolean) ? "read" : null;
}

const REGISTER_FAMILIES = [
  ["%rdi", "%edi"], ["%rsi", "%esi"], ["%rdx", "%edx"], ["%rcx", "%ecx"], ["%r8", "%r8d"], ["%r9", "%r9d"],
  ["%rax", "%eax"], ["%rbx", "%ebx"], ["%rbp", "%ebp"], ["%r12", "%r12d"], ["%r13", "%r13d"], ["%r14", "%r14d"], ["%r15", "%r15d"],
];

function sameRegister(a: string, b: string): boolean {
  return a === b || REGISTER_FAMILIES.some((family) => family.includes(a) && family.includes(b));
}

/**
 * The constant address a call was passed in `register`, recovered from the code before the call
 * that returns to `returnAddress`: typically `lea 0x2bad(%rip),%rax  # 0x... <sym>` followed by
 * `mov %rax,%rsi`. This is how an argument is found when the callee has no debug info and the
 * register itself has long been reused (the type_info given to __cxa_throw, the mutex given to
 * pthread_mutex_lock). Null when the value was not a constant.
 */
export function callArgumentAddress(
  instructions: Instruction[],
  returnAddress: string,
  register: string,
): { address: string; symbol: string | null } | null {
  const next = instructions.findIndex((insn) => insn.address === normalizeAddress(returnAddress));
  if (next <= 0 || !/^call/.test(instructions[next - 1]?.mnemonic ?? "")) return null;
  let wanted = register;
  for (let index = next - 2; index >= 0; index--) {
    const insn = instructions[index];
    if (!insn || /^call/.test(insn.mnemonic)) return null;
    const destination = insn.operands.at(-1);
    if (insn.operands.length !== 2 || !destination || !sameRegister(destination, wanted)) continue;
    const source = insn.operands[0] ?? "";
    if (/^(lea|mov)/.test(insn.mnemonic) && insn.reference) return insn.reference;
    const immediate = /^\$(0x[0-9a-f]+)$/.exec(source);
    if (/^mov/.test(insn.mnemonic) && immediate) return { address: normalizeAddress(immediate[1] ?? "0"), symbol: null };
    if (/^mov/.test(insn.mnemonic) && /^%[a-z0-9]+$/.test(source)) {
      wanted = source;
      continue;
    }
    return null;
  }
  return null;
}
