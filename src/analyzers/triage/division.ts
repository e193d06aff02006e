/**
 * arm64's integer division does not trap: `sdiv`/`udiv` by zero gives 0 and the program runs on,
 * so a division by zero is never the signal, only where a crash may have come from. Where the
 * function that faulted divided by zero on the straight-line way to the faulting instruction (its
 * divisor register still 0 and not written since: aarch64.ts' `zeroDivisionBefore`), a note says
 * so; the verdict stays the fault's. Only the frame whose registers are exact is read: the thread's
 * innermost, or the frame a caught fault interrupted (a caller's registers are guesses).
 */
import { hex } from "../../debuggers/dumpfile/file.js";
import type { Inspector } from "../../debuggers/inspector.js";
import { toBigInt, type Register } from "../../debuggers/model.js";
import { registerValues, zeroDivisionBefore } from "../aarch64.js";
import { normalizeFunctionName } from "../culprit.js";
import type { Verdict } from "./classify.js";
import type { Target } from "./target.js";

/** The longest function read for it (16 KiB of code). */
const FUNCTION_WORDS = 2048;

export async function zeroDivisionNote(q: Inspector, target: Target, verdict: Verdict): Promise<string | null> {
  if (target.arch !== "arm64") return null;
  const at: { pc: bigint | null; registers: Register[] } = verdict.caught ? { pc: toBigInt(verdict.caught.pc), registers: verdict.caught.registers } : { pc: target.pc, registers: target.registers };
  if (at.pc === null || !target.isOwnCode(at.pc)) return null;
  const listing = await q.disassemble(hex(at.pc));
  const first = toBigInt(listing?.instructions[0]?.address ?? null);
  const last = toBigInt(listing?.instructions.at(-1)?.address ?? null);
  if (!listing || first === null || last === null || first > at.pc || last < at.pc || (last - first) / 4n >= BigInt(FUNCTION_WORDS)) return null;
  const words = await q.readMemory(hex(first), Number((last - first) / 8n) + 1);
  const code = words.flatMap((word) => [Number(word & 0xffffffffn), Number(word >> 32n)]).slice(0, Number((last - first) / 4n) + 1);
  if (code.length * 4 < Number(at.pc - first) + 4) return null;
  const found = zeroDivisionBefore(code, first, at.pc, registerValues(at.registers));
  if (!found) return null;
  const { divide } = found;
  const name = (n: number) => `${divide.bits === 32 ? "w" : "x"}${n}`;
  const fn = listing.function ? normalizeFunctionName(listing.function) : "the function that faulted";
  return (
    `${divide.signed ? "sdiv" : "udiv"} ${name(divide.rd)}, ${name(divide.rn)}, ${name(divide.rm)} at ${hex(found.at)} in ${fn} divided by ${name(divide.rm)} = 0 on the way to the faulting instruction ` +
    `(${name(divide.rm)} is 0 at the fault and nothing between writes it, and no branch enters between them): arm64's integer division does not trap on a zero divisor but gives 0, so ${name(divide.rd)} was 0 from there, and the crash may follow from that zero (an index or a size of 0) — where x86-64 would have stopped at the division with SIGFPE`
  );
}
