import { describe, it, expect } from "vitest";
import { runGuarded } from "../../src/debuggers/guard.js";
import type { Backend, CommandResult, DebuggerSession, RunOptions, SessionContext } from "../../src/debuggers/session.js";

/** A session that records what reaches the debugger and answers every command with "ran". */
function recordingSession(backend: Backend): { session: DebuggerSession; ran: Array<{ command: string; options?: RunOptions }> } {
  const ran: Array<{ command: string; options?: RunOptions }> = [];
  const context: SessionContext = { backend, targetLoaded: true, threadCount: 1, selectedThread: null, selectedFrame: null };
  const session: Pick<DebuggerSession, "backend" | "run" | "context"> = {
    backend,
    context: () => context,
    run: async (command, options): Promise<CommandResult> => {
      ran.push({ command, ...(options ? { options } : {}) });
      return { command, ok: true, output: "ran", ms: 1, context };
    },
  };
  return { session: session as DebuggerSession, ran };
}

describe("runGuarded", () => {
  it.each([
    ["gdb", "shell id", '"shell" runs a shell command'],
    ["lldb", "platform shell id", '"platform shell" runs a shell command'],
    ["cdb", ".shell dir", '".shell" runs a shell command'],
  ] as const)("turns a refusal by %s's policy into a not_allowed result that never reaches the debugger", async (backend, command, why) => {
    const { session, ran } = recordingSession(backend);
    const result = await runGuarded(session, command);
    expect(ran).toEqual([]);
    expect(result).toMatchObject({ command, ok: false, output: "", errorType: "not_allowed", ms: 0, context: session.context() });
    expect(result.error).toContain(why);
  });

  it("asks the policy of the session's own debugger", async () => {
    const { session, ran } = recordingSession("lldb");
    // "fr v" is lldb's frame variable; to gdb it would be an unknown "fr" command.
    expect(await runGuarded(session, "fr v")).toMatchObject({ ok: true, output: "ran" });
    expect(ran).toEqual([{ command: "fr v", options: {} }]);
  });

  it("passes an allowed command and its timeout to the debugger", async () => {
    const { session, ran } = recordingSession("gdb");
    await runGuarded(session, "bt", { timeoutMs: 5000 });
    expect(ran).toEqual([{ command: "bt", options: { timeoutMs: 5000 } }]);
  });

  it("lets everything through with --unsafe", async () => {
    const { session, ran } = recordingSession("gdb");
    expect(await runGuarded(session, "shell id", { unsafe: true })).toMatchObject({ ok: true, output: "ran" });
    expect(ran.map((r) => r.command)).toEqual(["shell id"]);
  });
});
