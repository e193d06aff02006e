/** Typed debugger failures: callers branch on the class, not on message text. */

export class DebuggerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The debugger binary is missing or would not start. */
export class DebuggerMissing extends DebuggerError {}

/** A command ran past its timeout; `partial` is what it had printed by then (whole lines), where the debugger streams its output. */
export class CommandTimeout extends DebuggerError {
  constructor(
    message: string,
    readonly partial = "",
  ) {
    super(message);
  }
}

/** The debugger process exited or its pipe broke. */
export class SessionDead extends DebuggerError {}
