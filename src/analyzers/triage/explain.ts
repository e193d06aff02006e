/**
 * dumpdbg's own sentence for what happened, where no program or runtime said anything: a signal a
 * process sent, a crash handler's re-raise, a return address overwritten on the stack, a write that
 * ran off the stack.
 */
import { hex } from "../../debuggers/dumpfile/file.js";
import type { Inspector } from "../../debuggers/inspector.js";
import { toBigInt } from "../../debuggers/model.js";
import { thousands } from "../../report/numbers.js";
import { signalStory, type SignalStoryFacts } from "../../report/origin.js";
import { normalizeFunctionName, type PlacedFrame } from "../culprit.js";
import { stringEndBytes, textBytes, type FaultExplanation, type Range } from "../fault.js";
import { signalName } from "../signals.js";
import type { CaughtFault } from "./fault.js";

/**
 * What a signal a process sent says: who sent it, or that the process raised it at itself (tgkill,
 * as raise() and pthread_kill() do) and where; in both cases that nothing faulted. Null for any other origin.
 */
export function sentMessage(facts: SignalStoryFacts): string | null {
  const story = signalStory(facts);
  if (story === null) return null;
  return `${story}; it was not a fault${facts.origin?.type === "raised" ? "" : ": the threads were where the signal found them"}`;
}

/**
 * A `ret` that returned into code where no call returns (an overwritten return address that still
 * points into code, such as one whose low byte a string's NUL cleared), and the saved frame pointer
 * below it, whose bytes show what overwrote both.
 */
export function returnedIntoCodeMessage(frame: PlacedFrame | null, popped: bigint, landed: PlacedFrame | null, savedFramePointer: bigint | null, codeShown: boolean): string {
  const fn = frame?.function ? normalizeFunctionName(frame.function) : "the function";
  const word = `0x${popped.toString(16).padStart(16, "0")}`;
  const module = landed?.module ?? landed?.from ?? null;
  const inside = landed?.function ? ` inside ${normalizeFunctionName(landed.function)}` : module ? ` inside ${module.split(/[\\/]/).at(-1)}` : "";
  const text = savedFramePointer === null ? null : textBytes(savedFramePointer);
  const what = text ? `; the saved frame pointer below it holds the bytes "${text}", text written past a buffer on the stack (input, not a pointer)` : "";
  const where = codeShown ? "where no call returns (the code before it ends with no call)" : "in a library whose code here is not the one that ran";
  return `${fn} returned to ${word}${inside}, ${where}: its return address on the stack was overwritten and still points into code${what}`;
}

/**
 * A `ret` that faulted: the word it popped, and what it looks like. Text bytes ('AAAAAAAA') are
 * input that ran past a buffer on the stack, and a senior engineer leads with that.
 */
export function smashedReturnMessage(frame: PlacedFrame | null, popped: bigint | null): string {
  const fn = frame?.function ? normalizeFunctionName(frame.function) : "the function";
  if (popped === null) return `${fn} returned through a return address that is no address: it was overwritten on the stack`;
  const word = `0x${popped.toString(16).padStart(16, "0")}`;
  const text = textBytes(popped);
  const end = text ? null : stringEndBytes(popped);
  const what = text
    ? ` with the bytes "${text}", text written past a buffer on the stack (input, not a pointer)`
    : end
      ? ` with the bytes "${end}" and the NUL that ends a string: a string copied past a buffer on the stack (input, not a pointer)`
      : "";
  return `${fn} returned to ${word}, which is no address: its return address on the stack was overwritten${what}`;
}

/** A fault a crash handler caught, told from the handler's side: who caught it, what it did next, where the fault was. */
export function caughtMessage(caught: CaughtFault, signal: number | null, frame: PlacedFrame | null): string {
  const name = signal === null ? "the signal" : signalName(signal);
  const caughtName = caught.record ? signalName(caught.record.signo) : caught.then === "re-raised" ? name : "a fault";
  const at = frame?.function ? normalizeFunctionName(frame.function) : frame?.module ? `code in ${frame.module.split("/").at(-1)}` : "the interrupted frame";
  const what = caught.explanation ? `: ${caught.explanation.text} (${caught.instruction})` : caught.instruction ? ` at \`${caught.instruction}\`` : "";
  const handler = `${caught.handler ?? "the program's signal handler"}${caught.handlerModule ? ` (${caught.handlerModule.split("/").at(-1)})` : ""}`;
  const next = caught.then === "re-raised" ? `re-raised ${name} with kill() from inside its signal handler, as a crash handler does` : "caught it in its signal handler and then aborted, as a crash handler does";
  if (caught.deliveredOnReturn) return `a signal handler (Node.js's is one) re-raised ${name} while it ran, and it arrived where the handler returned to, the instruction that faulted in ${at}${what}`;
  return `${handler} ${next}; the ${caughtName} it was handling arrived in ${at}${what}`;
}

export function underrunMessage(frame: PlacedFrame | null, fault: bigint | null, sp: bigint, stack: Range | null): string {
  const fn = frame?.function ? normalizeFunctionName(frame.function) : "the function";
  const below = fault === null ? "" : ` at ${hex(fault)}, ${thousands(Number(sp - fault))} bytes below the stack pointer`;
  const room = stack === null ? "far above it" : `${thousands(Number(sp - stack.start))} bytes above the stack's end`;
  return `${fn} wrote downwards past the start of a buffer on the stack and ran off the bottom of the stack${below}: not a stack overflow — the stack pointer is ${room} and nothing recursed — but a write below a buffer's start (an index or length gone negative or too large, a copy running backwards)`;
}

/** What a write that ran off the stack's top did, from where the buffer started (the access's base on the stack). */
export async function overrunMessage(q: Inspector, frame: PlacedFrame | null, fault: bigint | null, sp: bigint, explained: FaultExplanation | null): Promise<string> {
  const fn = frame?.function ? normalizeFunctionName(frame.function) : "the function";
  const base = toBigInt(explained?.base?.value ?? null);
  const start = base !== null && base >= sp && fault !== null && base < fault ? base : null;
  const span = start !== null && fault !== null ? ` ${thousands(Number(fault - start))} bytes past the start of a buffer at ${hex(start)} (the stack pointer${start === sp ? "" : ` + ${thousands(Number(start - sp))}`}), and` : "";
  // The word at the top of the stack held the environment's pointers: now what was copied.
  const last = fault === null ? null : ((await q.readMemory(hex(fault - 8n), 1))[0] ?? null);
  const text = last === null ? null : textBytes(last);
  return `${fn} wrote${span} ran off the top of the stack at ${fault === null ? "its end" : hex(fault)}: every frame above ${fn} was overwritten${text ? ` with the bytes "${text}" (input, not pointers)` : ""}; a copy into a buffer on the stack with no bound`;
}
