/**
 * The abort message glibc keeps in `__abort_msg` (assertion text, malloc's integrity checks,
 * the stack protector and fortify messages), read with the one command that works with and
 * without glibc's debug info: `struct abort_msg_s { unsigned int size; char msg[]; }`, so the
 * text starts 4 bytes into the block `__abort_msg` points to.
 */
import { lines, unquoteGdbString } from "./common.js";

export const ABORT_MESSAGE_COMMAND = "x/s *(char **)&__abort_msg + 4";

/** The text, or null when there is none (`__abort_msg` is NULL: abort() was called directly). */
export function parseAbortMessage(output: string): string | null {
  for (const line of lines(output)) {
    const row = /^0x[0-9a-f]+(?: <[^>]*>)?:\s+(".*)$/.exec(line);
    if (!row) continue;
    const text = unquoteGdbString(row[1] ?? "");
    return text ? text.trim() : null;
  }
  return null;
}
