/** The one interface every debugger backend implements, and the shapes of what it returns. */
import type { Vocabulary } from "./probe.js";

export type Backend = "gdb" | "lldb" | "cdb" | "dlv";

export type CommandErrorType = "timeout" | "session_dead" | "debugger_error" | "not_allowed";

/** Where the session stands, sent along with every command result. */
export interface SessionContext {
  backend: Backend;
  /** True once the dump (and its executable, when known) is loaded. */
  targetLoaded: boolean;
  threadCount: number | null;
  selectedThread: { id: number; lwp: number | null; name: string | null } | null;
  selectedFrame: {
    level: number;
    function: string | null;
    file: string | null;
    line: number | null;
    address: string | null;
  } | null;
}

/** Where a session stands before its dump is loaded. */
export function emptyContext(backend: Backend): SessionContext {
  return { backend, targetLoaded: false, threadCount: null, selectedThread: null, selectedFrame: null };
}

/** The result of one command, as the design's contract names it. */
export interface CommandResult {
  command: string;
  ok: boolean;
  /** What the debugger printed for the command, as a user at its prompt would see it. */
  output: string;
  errorType?: CommandErrorType;
  error?: string;
  ms: number;
  context: SessionContext;
  /** Set when the debugger had to be killed and the dump reopened while running this command. */
  reopened?: boolean;
}

export interface RunOptions {
  /** Per-command timeout in milliseconds; the session's default when omitted. */
  timeoutMs?: number;
}

export interface CloseOptions {
  wait?: boolean;
}

/** How commands are read ahead: their timeout, and the commands that may be asked among them (CommandRunner.readAhead). */
export interface ReadAheadOptions extends RunOptions {
  among?: readonly string[];
}

export interface DebuggerSession {
  readonly backend: Backend;
  /** How this debugger says each probe, and reads its output into the model. */
  readonly vocabulary: Vocabulary;
  /** Starts the debugger and loads the dump. Throws a DebuggerError subclass when it cannot. */
  open(): Promise<void>;
  /** Runs one command. Never throws for a failing command: the failure is in the result. */
  run(command: string, options?: RunOptions): Promise<CommandResult>;
  /**
   * Starts these commands now, for whoever asks them next (see CommandRunner.readAhead): the
   * debugger works through them while the caller does something else. None may move the selection.
   * Resolves once the debugger has been handed them.
   */
  readAhead(commands: readonly string[], options?: ReadAheadOptions): Promise<void>;
  context(): SessionContext;
  /** What the debugger warned about while loading the dump (missing libraries, mismatched files). */
  readonly loadWarnings: readonly string[];
  /** The debugger's version line, e.g. "GNU gdb (Debian 13.1-3) 13.1". */
  version(): string | null;
  /**
   * Ends the debugger. By default this resolves once it has exited; `wait: false` is for a command
   * about to leave: the debugger is killed and its files removed, and the process may exit before
   * the kernel has finished tearing the debugger down (several milliseconds for a loaded core).
   */
  close(options?: CloseOptions): Promise<void>;
}
