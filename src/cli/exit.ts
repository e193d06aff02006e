/** Exit codes of the design's contract, and the error every command throws to leave with one. */

export const ExitCode = {
  ok: 0,
  /** `exec`: a command failed or was refused (as `gdb -batch` exits 1 when its last command fails). */
  commandFailed: 1,
  usage: 2,
  badInput: 3,
  debugger: 4,
  provider: 5,
  /** A file could not be written or read for a reason of the machine's: disk full, quota, permission, read-only. */
  storage: 6,
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** Thrown by commands; the one top-level handler prints `message` on one line and exits. */
export class ExitError extends Error {
  constructor(
    readonly code: ExitCodeValue,
    message: string,
  ) {
    super(message);
    this.name = "ExitError";
  }
}
