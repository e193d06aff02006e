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
  return refusalOf(session, command, options) ?? session.run(command, options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {});
}

/**
 * The policy's refusal of a command, as a result (with the session's context now), or null when the
 * command may run.
 */
export function refusalOf(session: DebuggerSession, command: string, options: GuardOptions = {}): CommandResult | null {
  if (options.unsafe) return null;
  const verdict = checkCommand(session.backend, command);
  return verdict.allowed ? null : { command, ok: false, output: "", errorType: "not_allowed", error: verdict.reason, ms: 0, context: session.context() };
}
