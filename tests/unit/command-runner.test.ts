/**
 * The runner's answer to a debugger that dies: the dump reopened and the command asked once more;
 * a second death on the same command is its result; a debugger that cannot reopen the dump is a
 * DebuggerError naming the command. A scripted CommandLine stands in for a backend.
 */
import { describe, expect, it } from "vitest";
import { CommandRunner, type CommandLine } from "../../src/debuggers/command-runner.js";
import { DebuggerError, SessionDead } from "../../src/debuggers/errors.js";

/** A line whose debugger dies on the commands of `dies` (as many times as listed), and whose reopens fail from `reopenFailsFrom` on. */
function scriptedLine(dies: string[], reopenFailsFrom = Infinity): CommandLine & { reopens: number; asked: string[] } {
  const line = {
    reopens: 0,
    asked: [] as string[],
    running: () => true,
    reopen: async () => {
      line.reopens++;
      if (line.reopens >= reopenFailsFrom) throw new SessionDead("gdb killed by SIGKILL while loading the core file");
    },
    exchange: async (command: string) => {
      line.asked.push(command);
      const at = dies.indexOf(command);
      if (at >= 0) {
        dies.splice(at, 1);
        throw new SessionDead("gdb killed by SIGKILL");
      }
      return { output: `${command}: done`, error: null };
    },
    recover: async () => ({ interrupted: true as const }),
    context: () => ({ backend: "gdb" as const, targetLoaded: true, threadCount: 1, selectedThread: null, selectedFrame: null }),
  };
  return line;
}

describe("CommandRunner and a debugger that dies", () => {
  it("once on a command: reopens the dump, asks it again, and the answer is the command's", async () => {
    const line = scriptedLine(["bt 40"]);
    const result = await new CommandRunner(line, 1000).run("bt 40");
    expect(result).toMatchObject({ ok: true, output: "bt 40: done", reopened: true });
    expect(line.asked).toEqual(["bt 40", "bt 40"]);
    expect(line.reopens).toBe(1);
  });

  it("twice on the same command: its result says so, the dump is reopened, and the next command runs", async () => {
    const line = scriptedLine(["bt 40", "bt 40"]);
    const runner = new CommandRunner(line, 1000);
    expect(await runner.run("bt 40")).toMatchObject({
      ok: false,
      errorType: "session_dead",
      reopened: true,
      error: "gdb killed by SIGKILL, and again when asked once more (gdb killed by SIGKILL): it may crash on this command every time; the dump was reopened",
    });
    expect(await runner.run("info registers")).toMatchObject({ ok: true, output: "info registers: done" });
    expect(line.reopens).toBe(2);
  });

  it("unable to reopen the dump: a DebuggerError naming the command it died on and the second death", async () => {
    const line = scriptedLine(["p session->client"], 1);
    await expect(new CommandRunner(line, 1000).run("p session->client")).rejects.toThrow(
      new DebuggerError('the debugger could not be started again: gdb killed by SIGKILL running "p session->client", then gdb killed by SIGKILL while loading the core file'),
    );
  });
});
