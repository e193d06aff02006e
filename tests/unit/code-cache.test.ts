/**
 * Which code cache a command line uses: one per command of the program's command table, one for
 * anything else (help, a typo), so that a mistyped command never names a file of its own.
 */
import { describe, expect, it } from "vitest";
import { commandOf, COMMANDS } from "../../src/code-cache.js";
import { buildProgram } from "../../src/cli/main.js";

describe("the code cache's commands", () => {
  it("are the program's commands", () => {
    expect([...COMMANDS].sort()).toEqual(buildProgram().commands.map((c) => c.name()).sort());
  });

  it("name the cache by the command given first; anything else shares one", () => {
    expect(commandOf(["node", "dumpdbg", "analyze", "core", "--exe", "x"])).toBe("analyze");
    expect(commandOf(["node", "dumpdbg", "sessions", "list"])).toBe("sessions");
    expect(commandOf(["node", "dumpdbg", "frobnicate"])).toBe("other");
    expect(commandOf(["node", "dumpdbg", "--help"])).toBe("other");
    expect(commandOf(["node", "dumpdbg", "../../etc/passwd"])).toBe("other");
    expect(commandOf(["node", "dumpdbg"])).toBe("other");
  });
});
