/**
 * Where an LLDB command runs. LLDB has no per-command thread or frame prefix (gdb has `thread apply N`
 * and `frame apply level F`), so dumpdbg's LLDB session takes one of its own: `[thread 2, frame 3]
 * frame variable` selects thread 2 (LLDB's index) and its frame 3, runs `frame variable`, and puts the
 * selection back. Either part may be left out.
 */
import type { Place } from "../probe.js";

export interface Placed {
  place: { thread: number | null; frame: number | null };
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

/** The place and the LLDB command of a line that may carry the prefix. */
export function parsePlaced(text: string): Placed {
  const match = PREFIX.exec(text);
  if (!match || (match[1] === undefined && match[2] === undefined)) return { place: { thread: null, frame: null }, command: text };
  return {
    place: { thread: match[1] === undefined ? null : Number(match[1]), frame: match[2] === undefined ? null : Number(match[2]) },
    command: text.slice(match[0].length),
  };
}
