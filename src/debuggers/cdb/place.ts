/**
 * Where a cdb command runs: dumpdbg's `[thread T, frame F]` prefix (`../place-text.ts`; the session
 * also puts `.ecxr`'s exception context back, which cdb loses once another thread is selected), or
 * `[source "C:\src\prog.c"] ls 0n10, 0n5`, which lists lines of a file, as cdb does only for the file
 * `lsf` made current.
 */
import { parsePlaced as parseThreadAndFrame, type CommandPlace } from "../place-text.js";

export interface CdbPlace extends CommandPlace {
  /** A source file to make current (`lsf`) first. */
  source: string | null;
}

const SOURCE = /^\s*\[\s*source\s+"([^"\u0000-\u001f]{1,1024})"\s*\]\s*/;

export function sourceCommand(file: string, command: string): string {
  return `[source "${file}"] ${command}`;
}

/** The place and the cdb command of a line that may carry either prefix. */
export function parsePlaced(text: string): { place: CdbPlace; command: string } {
  const source = SOURCE.exec(text);
  if (source) return { place: { thread: null, frame: null, source: source[1] ?? null }, command: text.slice(source[0].length) };
  const { place, command } = parseThreadAndFrame(text);
  return { place: { ...place, source: null }, command };
}
