/**
 * The crashing thread's stack: unwound by the debugger, a recursion measured rather than walked,
 * rebuilt from stack memory where the unwind was lost or went astray, and the function found whose
 * `ret` popped an overwritten return address.
 */
import { hex } from "../../debuggers/dumpfile/file.js";
import type { Inspector } from "../../debuggers/inspector.js";
import { toBigInt, type Frame } from "../../debuggers/model.js";
import type { TargetFiles } from "../../debuggers/probe.js";
import { coreSegmentAt } from "../address-space.js";
import { placeFrames, type ModuleLocator, type PlacedFrame } from "../culprit.js";
import { textBytes } from "../fault.js";
import { RECURSION_WINDOW, RECURSION_WINDOW_SKIP, recursionOf, repeatingCycle, type Cycle, type Recursion } from "../recursion.js";
import { SIGSEGV } from "../signals.js";
import { bytesOf, endsWithCall } from "../stack-scan.js";
import { repairUnwind, scanNote, scanStack } from "./scan.js";
import type { Stop } from "./stop.js";
import { pcInCode, unwindLost, type Target } from "./target.js";

/** Words below the stack pointer searched for the last call of a function that returned through a smashed address. */
const STALE_RETURN_WORDS = 64;

export interface Stack {
  /** The crashing thread's frames, innermost first: the debugger's unwind, else the stack scan's or the repaired one. */
  frames: PlacedFrame[];
  /** Those within the frame limit: the innermost end, which the kind is read from. */
  innermost: PlacedFrame[];
  /** Frames on the stack (measured for a recursion). */
  depth: number;
  recursion: Recursion | null;
  /** The frames were found by scanning the stack: the debugger's unwind was lost. */
  scanned: boolean;
  /** A `ret` popped an overwritten return address: the pc is the word it popped. */
  popped: boolean;
  /** That word lies in code, but where no call returns (the code before it ends with none). */
  poppedIntoCode: boolean;
  /** The function that returned through it, found from the last call it made. */
  returner: PlacedFrame | null;
}

export async function readStack(q: Inspector, target: Target, stop: Stop, limit: number): Promise<Stack> {
  const { files, pc, sp } = target;
  const top = await q.backtrace(limit);
  let frames: Frame[] = top.frames;
  let depth = frames.length;
  let recursion: Recursion | null = null;
  if (top.truncated) {
    // A recursion is measured, not unwound: the debugger would walk every one of its frames for the outermost.
    let cycle = repeatingCycle(frames);
    if (cycle === null) {
      // The stack may have run out deep inside a library call: the cycle starts below these frames.
      const deeper = await q.backtrace(RECURSION_WINDOW);
      cycle = repeatingCycle(deeper.frames, RECURSION_WINDOW_SKIP);
      if (cycle) frames = deeper.frames;
    }
    const estimate = cycle ? await estimateDepth(q, files, frames, cycle) : null;
    if (cycle && estimate !== null) {
      depth = estimate;
      recursion = recursionOf(cycle, estimate, true);
    } else {
      const bottom = (await q.backtrace(limit, {}, true)).frames;
      const outermost = bottom.at(-1);
      depth = outermost ? outermost.level + 1 : depth;
      recursion = recursionOf(cycle, depth, false);
      frames = [...frames, ...bottom.filter((frame) => frame.level >= frames.length)];
    }
  }
  const unwound = placeFrames(frames, target.moduleAt, target.keyRegisters.pc);
  const scan = unwindLost(unwound, files, target.foreign, target.libraries) ? await scanStack(q, unwound, sp, target) : null;
  // Windows code the debugger has no unwind tables for (mingw's SEH-only runtime under LLDB) sends
  // its unwind astray past the program's frames: checked there, and redone from the stack if so.
  const repaired = !scan && target.os === "windows" ? await repairUnwind(q, unwound, sp, target) : null;
  // A `ret` popped an overwritten return address that is canonical but maps nothing: the pc is the
  // popped word, still just below the stack pointer, and the function that returned is gone from the unwind.
  // A call through a bad pointer looks the same from the pc, but left its return address at the stack
  // pointer, right after the indirect call in the caller: that is no `ret`, whatever lies below it.
  const popped =
    stop.signal === SIGSEGV && !stop.sent && pc !== null && sp !== null && toBigInt(stop.siginfo?.address ?? null) === pc && pcInCode(target) === false
      ? (await q.readMemory(hex(sp - 8n), 1))[0] === pc && !(await calledFrom(q, (await q.readMemory(hex(sp), 1))[0] ?? null, target.isOwnCode))
      : false;
  // The same `ret` can land inside code: a string's NUL over the low byte of main's return address
  // sends it into the middle of libc's __libc_start_call_main. The popped word is still the pc, and
  // the code before it, shown in the dump, ends with no call: nothing returns there.
  const poppedIntoCode = !popped && stop.signal === SIGSEGV && !stop.sent && pc !== null && sp !== null && pcInCode(target) !== false ? await returnedIntoCode(q, target, pc, sp) : false;
  const returner = (popped || poppedIntoCode) && sp !== null ? await returningFrame(q, sp, target.isOwnCode, target.moduleAt) : null;
  const placed = returner ? [{ ...(unwound[0] as PlacedFrame), level: 0 }, returner] : (scan ?? repaired?.frames ?? unwound);
  if (scan) q.problems.push(scanNote(scan, target.pcForeign));
  if (repaired) q.problems.push(repaired.note);
  if (popped || poppedIntoCode) {
    q.problems.push(
      returner
        ? `the function that returned is no longer on the unwound stack: ${returner.function ?? "it"} was found from the last call it made, whose return address is still below the stack pointer`
        : "the function that returned is no longer on the stack, and no call it made was found below the stack pointer",
    );
  }
  return { frames: placed, innermost: placed.filter((frame) => frame.level < limit), depth, recursion, scanned: scan !== null, popped: popped || poppedIntoCode, poppedIntoCode, returner };
}

/**
 * Whether a `ret` popped the pc into code where no call returns: the word just below the stack
 * pointer is the pc, and the code before it ends with no call. Where that code is not shown (a
 * library of another machine's, whose bytes here are not the ones that ran), the saved frame
 * pointer just below, overwritten with text, shows the write that reached the return address.
 */
async function returnedIntoCode(q: Inspector, target: Target, pc: bigint, sp: bigint): Promise<boolean> {
  const [saved, popped] = await q.readMemory(hex(sp - 16n), 2);
  if (popped !== pc) return false;
  const before = target.pcForeign === null ? bytesOf(await q.readMemory(hex(pc - 16n), 2)) : new Uint8Array(0);
  if (before.length === 16) return !endsWithCall(before);
  return saved !== undefined && textBytes(saved) !== null;
}

/** Whether `word` is a return address into the program's code right after an indirect call (`call *%rdx`). */
async function calledFrom(q: Inspector, word: bigint | null, isOwnCode: (address: bigint) => boolean): Promise<boolean> {
  if (word === null || !isOwnCode(word)) return false;
  const code = bytesOf(await q.readMemory(hex(word - 16n), 2));
  return code.length === 16 && endsWithCall(code) && code[code.length - 5] !== 0xe8;
}

/**
 * Frames on a recursing stack: the fetched ones, plus the rest of the stack segment divided by
 * the bytes one turn of the cycle takes (the distance between two of its frames' CFAs).
 */
async function estimateDepth(q: Inspector, files: TargetFiles, frames: Frame[], cycle: Cycle): Promise<number | null> {
  const deepest = frames.at(-1)?.level;
  if (deepest === undefined || deepest - cycle.functions.length < cycle.skip) return null;
  const cfa = async (level: number) => toBigInt(await q.frameCfa(level));
  const inner = await cfa(deepest - cycle.functions.length);
  const outer = await cfa(deepest);
  if (inner === null || outer === null || outer <= inner) return null;
  const stack = coreSegmentAt(files, outer);
  if (stack === null) return null;
  const turns = (BigInt(stack.end) - outer) / (outer - inner);
  return deepest + 1 + Number(turns) * cycle.functions.length;
}

/**
 * The function whose `ret` popped an overwritten return address: its frame was just below the
 * stack pointer, and the last call it made left a return address into it there. The nearest such
 * word (right after a call instruction, in the program's own code) names it; the frame is placed
 * at its `ret`, where it returned, as a stack protector's report would be.
 */
async function returningFrame(q: Inspector, sp: bigint, isOwnCode: (address: bigint) => boolean, moduleAt: ModuleLocator): Promise<PlacedFrame | null> {
  const below = sp - BigInt(STALE_RETURN_WORDS * 8);
  const words = await q.readMemory(hex(below), STALE_RETURN_WORDS);
  for (let i = words.length - 1; i >= 0; i--) {
    const word = words[i];
    if (word === undefined || !isOwnCode(word)) continue;
    const code = bytesOf(await q.readMemory(hex(word - 16n), 2));
    if (code.length < 16 || !endsWithCall(code)) continue;
    const caller = await q.symbolAt(hex(word - 1n));
    if (!caller?.symbol) continue;
    const body = await q.disassemble(hex(word - 1n));
    const ret = body?.instructions.find((instruction) => /^ret[qlw]?$/.test(instruction.mnemonic) && toBigInt(instruction.address) !== null && (toBigInt(instruction.address) ?? 0n) > word - 1n);
    const at = ret ? await q.sourceLine(ret.address) : null;
    return {
      level: 1,
      address: ret?.address ?? hex(word),
      function: caller.symbol,
      args: "",
      file: at?.file ?? caller.file ?? null,
      line: at?.line ?? null,
      from: null,
      found: "scan",
      module: moduleAt(word),
    };
  }
  return null;
}
