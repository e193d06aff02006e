/**
 * Which bundle runs a command line (the lean one for the commands that run no agents, help and
 * typos), and which code cache it uses: one per command of the program's command table, one for
 * anything else (help, a typo), so that a mistyped command never names a file of its own.
 */
import { describe, expect, it } from "vitest";
import { cliBundle, commandOf, COMMANDS, LEAN_COMMANDS } from "../../src/code-cache.js";
import { buildProgram } from "../../src/cli/main.js";

describe("the code cache's commands", () => {
  it("are the program's commands, each known by its name alone (an alias would miss its bundle)", () => {
    expect([...COMMANDS].sort()).toEqual(buildProgram().commands.map((c) => c.name()).sort());
    expect(buildProgram().commands.flatMap((c) => c.aliases())).toEqual([]);
  });

  it("name the cache by the command given first; anything else shares one", () => {
    expect(commandOf(["node", "dumpdbg", "analyze", "core", "--exe", "x"])).toBe("analyze");
    expect(commandOf(["node", "dumpdbg", "sessions", "list"])).toBe("sessions");
    expect(commandOf(["node", "dumpdbg", "frobnicate"])).toBe("other");
    expect(commandOf(["node", "dumpdbg", "--help"])).toBe("other");
    expect(commandOf(["node", "dumpdbg", "../../etc/passwd"])).toBe("other");
    // The program's own options come before the command.
    expect(commandOf(["node", "dumpdbg", "--debug", "analyze", "core"])).toBe("analyze");
    expect(commandOf(["node", "dumpdbg", "--debug"])).toBe("other");
    expect(commandOf(["node", "dumpdbg"])).toBe("other");
  });
});

describe("the bundle a command runs from", () => {
  it("is the lean one for the commands that run no agents, and for help and typos", () => {
    for (const command of ["exec", "triage", "symbols", "report", "sessions", "config", "doctor"]) expect(cliBundle(["node", "dumpdbg", command, "x"])).toBe("dumpdbg-lean.cjs");
    expect(cliBundle(["node", "dumpdbg", "--help"])).toBe("dumpdbg-lean.cjs");
    expect(cliBundle(["node", "dumpdbg", "frobnicate"])).toBe("dumpdbg-lean.cjs");
    expect(cliBundle(["node", "dumpdbg"])).toBe("dumpdbg-lean.cjs");
  });

  it("is the whole one for every command that runs agents or serves them", () => {
    for (const command of ["analyze", "resume", "chat", "batch", "worker", "mcp"]) expect(cliBundle(["node", "dumpdbg", command, "core"])).toBe("dumpdbg.cjs");
    expect(cliBundle(["node", "dumpdbg", "--debug", "analyze", "core"])).toBe("dumpdbg.cjs");
    expect(COMMANDS.filter((command) => !LEAN_COMMANDS.includes(command)).sort()).toEqual(["analyze", "batch", "chat", "mcp", "resume", "worker"]);
  });
});
