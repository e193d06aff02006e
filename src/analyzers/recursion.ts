/**
 * A stack thousands of frames deep is summarised, not listed: triage fetches only its innermost
 * frames, finds the repeating cycle in them, and estimates the depth from how many bytes of stack
 * one turn of the cycle takes, instead of making the debugger unwind every frame.
 */
import type { Frame } from "../debuggers/model.js";
import { isRuntimeFrame, normalizeFunctionName, type PlacedFrame } from "./culprit.js";

export interface Recursion {
  /** Number of frames on the stack (an estimate when `estimated`). */
  depth: number;
  estimated: boolean;
  /** The functions of one turn of the cycle, innermost first (one for direct recursion). */
  cycle: string[];
  /** How many times the cycle repeats. */
  repeats: number;
}

export interface Cycle {
  /** Frames above the cycle (e.g. the library function the recursion was calling when it ran out). */
  skip: number;
  functions: string[];
}

/** A stack at least this deep that repeats a cycle is taken as runaway recursion. */
const RECURSION_DEPTH = 1000;
const MAX_PERIOD = 8;
// A Rust overflow ends in its handler, abort and a dozen frames of std and hashbrown above the cycle.
const MAX_SKIP = 24;
/**
 * Frames read when the innermost ones show no cycle: the stack can run out deep inside a library
 * (a Rust overflow in the middle of hashing a key: the handler, abort and 25 inlined frames of std
 * and hashbrown above the first recursive one), so the cycle starts below the first window.
 */
export const RECURSION_WINDOW = 128;
/** How many frames may stand above the cycle in that deeper window. */
export const RECURSION_WINDOW_SKIP = 96;

/** The cycle the frames repeat to the end of the listing, at least three times; else null. */
export function repeatingCycle(frames: Frame[], maxSkip = MAX_SKIP): Cycle | null {
  const names = frames.map((frame) => normalizeFunctionName(frame.function ?? "??"));
  for (let skip = 0; skip <= maxSkip && skip < names.length; skip++) {
    const window = names.slice(skip);
    for (let period = 1; period <= MAX_PERIOD && window.length >= period * 3; period++) {
      if (window.every((name, index) => index < period || name === window[index - period])) {
        return { skip, functions: window.slice(0, period) };
      }
    }
  }
  return null;
}

export function recursionOf(cycle: Cycle | null, depth: number, estimated: boolean): Recursion | null {
  if (cycle === null || depth < RECURSION_DEPTH) return null;
  const repeats = Math.floor((depth - cycle.skip) / cycle.functions.length);
  return { depth, estimated, cycle: cycle.functions, repeats };
}

/**
 * The frame of a stack overflow to blame: the recursive call, whose line repeats in the deeper
 * frames, not the innermost frame, which stopped wherever the stack happened to run out (a
 * prologue, a library call). From `from` (the culprit) on, in the culprit's own function first (so
 * that a mutual recursion keeps its name and signature); null when no line repeats.
 */
export function recursiveCallIndex(frames: PlacedFrame[], from: number): number | null {
  const name = (frame: PlacedFrame | undefined) => (frame?.function ? normalizeFunctionName(frame.function) : null);
  const key = (frame: PlacedFrame) => (frame.function && frame.line !== null ? `${name(frame)}:${frame.file ?? ""}:${frame.line}` : null);
  const repeats = (index: number) => {
    const frame = frames[index];
    const own = frame && !isRuntimeFrame(frame) ? key(frame) : null;
    return own !== null && frames.slice(index + 1).some((deeper) => key(deeper) === own);
  };
  const indices = frames.map((_, index) => index).filter((index) => index >= from);
  return indices.find((index) => name(frames[index]) === name(frames[from]) && repeats(index)) ?? indices.find(repeats) ?? null;
}
