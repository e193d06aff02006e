/**
 * Where a command runs, for a debugger with no per-command thread and frame prefix (gdb has `thread
 * apply N` and `frame apply level F`; LLDB has none, cdb's `~T e CMD` has no frame): dumpdbg's LLDB
 * and cdb sessions take one of their own. `[thread 2, frame 3] CMD` selects thread 2 (the debugger's
 * own number) and its frame 3, runs CMD, and puts the selection back. Either part may be left out.
 */
import type { Place } from "./probe.js";

/** A command's thread and frame; null where the prefix names none. */
export interface CommandPlace {
  thread: number | null;
  frame: number | null;
}

export interface Placed {
  place: CommandPlace;
  command: string;
}

const PREFIX = /^\s*\[\s*(?:thread\s+(\d{1,9}))?\s*(?:,\s*)?(?:frame\s+(\d{1,9}))?\s*\]\s*/;

/** A command with the place it must run in; no prefix when it runs where the debugger stands. */
export function placedCommand(place: Place, command: string): string {
  const parts = [
    place.thread !== undefined && place.thread !== null ? `thread ${place.thread}` : null,
    place.frame !== undefined && place.frame !== 0 ? `frame ${place.frame}` : null,
  ].filter((part) => part !== null);
  return parts.length === 0 ? command : `[${parts.join(", ")}] ${command}`;
}

/** The place and the debugger's command of a line that may carry the prefix. */
export function parsePlaced(text: string): Placed {
  const match = PREFIX.exec(text);
  if (!match || (match[1] === undefined && match[2] === undefined)) return { place: { thread: null, frame: null }, command: text };
  return {
    place: { thread: match[1] === undefined ? null : Number(match[1]), frame: match[2] === undefined ? null : Number(match[2]) },
    command: text.slice(match[0].length),
  };
}

/** A parsed prefix as a probe's place: only the parts it names. */
export function probePlace(place: CommandPlace): Place {
  const at: Place = {};
  if (place.thread !== null) at.thread = place.thread;
  if (place.frame !== null) at.frame = place.frame;
  return at;
}
