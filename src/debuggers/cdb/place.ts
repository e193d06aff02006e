/**
 * Where a cdb command runs. cdb runs a command in another thread with `~T e CMD`, but has no such
 * prefix for a frame, and `.ecxr`'s exception context is lost once another thread is selected. So
 * dumpdbg's cdb session takes a prefix of its own, as its LLDB session does: `[thread 2, frame 3]
 * dv /i /t /v` selects thread 2 (cdb's number) and its frame 3, runs `dv`, and puts the selection
 * (and the exception context) back. `[source "C:\src\prog.c"] ls 0n10, 0n5` lists lines of a file,
 * which cdb does only for the file `lsf` made current.
 */
import type { Place } from "../probe.js";

export interface CdbPlace {
  thread: number | null;
  frame: number | null;
  /** A source file to make current (`lsf`) first. */
  source: string | null;
}

export interface PlacedCommand {
  place: CdbPlace;
  command: string;
}

const PREFIX = /^\s*\[\s*(?:thread\s+(\d{1,9}))?\s*,?\s*(?:frame\s+(\d{1,9}))?\s*\]\s*/;
const SOURCE = /^\s*\[\s*source\s+"([^"\u0000-\u001f]{1,1024})"\s*\]\s*/;

/** A command with the place it must run in; no prefix when it runs where the debugger stands. */
export function placedCommand(place: Place, command: string): string {
  const parts = [
    place.thread !== undefined && place.thread !== null ? `thread ${place.thread}` : null,
    place.frame !== undefined && place.frame !== 0 ? `frame ${place.frame}` : null,
  ].filter((part) => part !== null);
  return parts.length === 0 ? command : `[${parts.join(", ")}] ${command}`;
}

export function sourceCommand(file: string, command: string): string {
  return `[source "${file}"] ${command}`;
}

/** The place and the cdb command of a line that may carry the prefix. */
export function parsePlaced(text: string): PlacedCommand {
  const source = SOURCE.exec(text);
  if (source) return { place: { thread: null, frame: null, source: source[1] ?? null }, command: text.slice(source[0].length) };
  const match = PREFIX.exec(text);
  if (!match || (match[1] === undefined && match[2] === undefined)) return { place: { thread: null, frame: null, source: null }, command: text };
  return {
    place: { thread: match[1] === undefined ? null : Number(match[1]), frame: match[2] === undefined ? null : Number(match[2]), source: null },
    command: text.slice(match[0].length),
  };
}
