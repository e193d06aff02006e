/**
 * A gdb killed while it opens the dump, through a wrapper that kills the real gdb at its Nth
 * command (tests/helpers/faulty-gdb.mjs): killed once, it is started again and the run completes
 * with the same verdict, saying so; killed every time, the run ends with one line naming the death
 * and what gdb was doing, exit 4.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const FAULTY_GDB = fileURLToPath(new URL("../helpers/faulty-gdb.mjs", import.meta.url));
const tempDir = tempDirs();

let built: BuiltCore;
let dir: string;

beforeAll(async () => {
  built = await buildCore("null-deref");
  dir = tempDir("dumpdbg-dying-debuggers-");
});

/** The commands gdb is given while the dump is opened: -gdb-version, the executable, the core, the log file's four, the threads. */
const OPENING = [1, 2, 3, 5, 8, 9];

describe("a gdb killed while it opens the dump, or reads it", () => {
  it.each(OPENING)("once, at its command %i: started again, the same verdict, and a warning that says so", async (at) => {
    const once = join(dir, `once-${at}`);
    rmSync(once, { force: true });
    const run = await runCli(["triage", built.core, "--exe", built.exe, "--json", "--gdb", FAULTY_GDB], { env: { FAULTY_GDB_AT: String(at), FAULTY_GDB_DO: "kill", FAULTY_GDB_ONCE: once } });
    expect(existsSync(once)).toBe(true);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).kind).toBe("null-dereference");
    expect(run.stderr).toMatch(/^dumpdbg: warning: gdb killed by SIGKILL while (starting|loading the executable|loading the core file|setting up its output|reading the dump's threads); it was started again$/m);
  });

  it("once, during triage, as it reads the registers: the verdict is the same, not a bad jump", async () => {
    const once = join(dir, "once-registers");
    const run = await runCli(["triage", built.core, "--exe", built.exe, "--json", "--gdb", FAULTY_GDB], { env: { FAULTY_GDB_ON: '"info registers"', FAULTY_GDB_DO: "kill", FAULTY_GDB_ONCE: once } });
    expect(existsSync(once)).toBe(true);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).kind).toBe("null-dereference");
  });

  it("once, in an analysis: the analysis completes with its report", async () => {
    const once = join(dir, "once-analysis");
    const run = await runCli(["analyze", built.core, "--exe", built.exe, "--provider", "offline", "--json", "--gdb", FAULTY_GDB, "--sessions-dir", join(dir, "sessions"), "--out", join(dir, "reports")], {
      env: { FAULTY_GDB_AT: "3", FAULTY_GDB_DO: "kill", FAULTY_GDB_ONCE: once },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).crash.kind).toBe("null-dereference");
  });

  it.each([3, 9])("every time, at its command %i: exit 4, one line naming both deaths and what gdb was doing", async (at) => {
    const run = await runCli(["triage", built.core, "--exe", built.exe, "--gdb", FAULTY_GDB], { env: { FAULTY_GDB_AT: String(at), FAULTY_GDB_DO: "kill" } });
    expect(run.code).toBe(4);
    const doing = "(starting|loading the executable|loading the core file|setting up its output|reading the dump's threads)";
    expect(run.stderr).toMatch(
      new RegExp(`^dumpdbg: gdb died twice opening ${built.core} \\(gdb killed by SIGKILL while ${doing}; then gdb killed by SIGKILL while ${doing}\\): it may crash on this dump every time; --debugger lldb reads it too\\n$`),
    );
  });
});
