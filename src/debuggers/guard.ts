/**
 * The gate between a proposed command and the debugger: the safety policy decides, and a refusal
 * comes back as an ordinary result, never an exception and never sent to the debugger.
 */
import { checkCommand } from "./policy/index.js";
import type { CommandResult, DebuggerSession } from "./session.js";

export interface GuardOptions {
  /** Lifts the policy (`--unsafe`). */
  unsafe?: boolean;
  timeoutMs?: number;
}

export async function runGuarded(session: DebuggerSession, command: string, options: GuardOptions = {}): Promise<CommandResult> {
  if (!options.unsafe) {
    const verdict = checkCommand(session.backend, command);
    if (!verdict.allowed) {
      return { command, ok: false, output: "", errorType: "not_allowed", error: verdict.reason, ms: 0, context: session.context() };
    }
  }
  return session.run(command, options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {});
}
