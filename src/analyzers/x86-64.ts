/**
 * x86-64 knowledge over the model's instructions (AT&T operand order, as gdb prints them and as
 * other backends are asked to): which way an instruction touches memory, what a call was passed.
 */
import { normalizeAddress, type Instruction, type Platform } from "../debuggers/model.js";

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
  let wanted = register.startsWith("%") ? register : `%${register}`;
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

/** The System V x86-64 ABI's integer argument registers, in order. */
export const ARGUMENT_REGISTERS = ["rdi", "rsi", "rdx", "rcx", "r8", "r9"] as const;
/** Windows x64's. */
export const WINDOWS_ARGUMENT_REGISTERS = ["rcx", "rdx", "r8", "r9"] as const;

/** The integer argument registers of the calling convention of a dump's operating system. */
export function argumentRegisters(os: Platform["os"] | undefined): readonly string[] {
  return os === "windows" ? WINDOWS_ARGUMENT_REGISTERS : ARGUMENT_REGISTERS;
}

/** Linux x86-64's tgkill(tgid, tid, sig): how abort(), raise() and pthread_kill() send a signal. */
export const SYS_TGKILL = 0xea;

/**
 * The system call a thread stopped right after was made with, from the code bytes that end at its
 * pc: a `syscall` (0f 05) whose number the instruction before it loads as a constant
 * (`mov $imm32,%eax`, b8 imm32, as glibc's and musl's inline calls do). Null when the bytes end in
 * no syscall, or its number was put in %eax some other way.
 */
export function syscallNumberBefore(before: Uint8Array): number | null {
  const at = before.length - 7;
  if (at < 0 || before[at] !== 0xb8 || before[at + 5] !== 0x0f || before[at + 6] !== 0x05) return null;
  return new DataView(before.buffer, before.byteOffset + at + 1, 4).getUint32(0, true);
}
