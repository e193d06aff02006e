/**
 * A gdb killed while it opens the dump or at any later phase, through a wrapper that kills the real
 * gdb at its Nth command or at a command's text (tests/helpers/faulty-gdb.mjs): killed once, it is
 * started again, the command asked once more, and the run completes with the same verdict and every
 * piece of evidence; killed every time it opens the dump, LLDB reads it under --debugger auto (the
 * report says why), and with --debugger gdb the run ends with one line naming both deaths and what
 * gdb was doing, exit 4.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { EvidenceStore } from "../../src/evidence/store.js";
import { pipeChat, runCli } from "../helpers/cli.js";
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

  it.each([3, 9])("every time, at its command %i, with --debugger gdb: exit 4, one line naming both deaths and what gdb was doing", async (at) => {
    const run = await runCli(["triage", built.core, "--exe", built.exe, "--debugger", "gdb", "--gdb", FAULTY_GDB], { env: { FAULTY_GDB_AT: String(at), FAULTY_GDB_DO: "kill" } });
    expect(run.code).toBe(4);
    const doing = "(starting|loading the executable|loading the core file|setting up its output|reading the dump's threads)";
    expect(run.stderr).toMatch(
      new RegExp(`^dumpdbg: gdb died twice opening ${built.core} \\(gdb killed by SIGKILL while ${doing}; then gdb killed by SIGKILL while ${doing}\\): it may crash on this dump every time; --debugger lldb reads it too\\n$`),
    );
  });
});

/** The one session under `root`, with its evidence. */
function onlySession(root: string): { id: string; evidence: { command: string; ok: boolean; summary: string }[] } {
  const [id] = readdirSync(root);
  const store = EvidenceStore.open(join(root, id!, "evidence.db"));
  try {
    return { id: id!, evidence: store.list() };
  } finally {
    store.close();
  }
}

const analyze = (name: string, ...flags: string[]) => [
  "analyze", built.core, "--exe", built.exe, "--provider", "offline", "--json", "--gdb", FAULTY_GDB,
  "--sessions-dir", join(dir, `sessions-${name}`), "--out", join(dir, `reports-${name}`), ...flags,
];

/** A command of each phase of an analysis of this core, as gdb is given it. */
const PHASES = {
  triage: '"bt 40"',
  "the hypothesis tests": '"p session->client"',
  investigation: '"frame apply level 1 -q info locals"',
  "the critic's answers": '"info locals"',
};

describe("a gdb killed once during an analysis", () => {
  it.each(Object.entries(PHASES))("during %s: asked again on a new gdb, the analysis completes with that command's evidence", async (phase, command) => {
    const name = phase.replace(/\W+/g, "-");
    const once = join(dir, `once-${name}`);
    const run = await runCli(analyze(name), { env: { FAULTY_GDB_ON: command, FAULTY_GDB_DO: "kill", FAULTY_GDB_ONCE: once } });
    expect(existsSync(once)).toBe(true);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/^dumpdbg: (?!warning)/m);
    const report = JSON.parse(run.stdout);
    expect(report.crash.kind).toBe("null-dereference");
    expect(report.crash.culprit.function).toBe("send_to_client");
    const { evidence } = onlySession(join(dir, `sessions-${name}`));
    expect(evidence.find((e) => e.command === JSON.parse(command))).toMatchObject({ ok: true });
    expect(evidence.filter((e) => !e.ok)).toEqual([]);
  });
});

describe("a gdb that hangs during an analysis", () => {
  it("once, in the hypothesis tests: the command times out, gdb is killed and the dump reopened, and the analysis completes", async () => {
    const once = join(dir, "once-hang");
    const run = await runCli(analyze("hang", "--timeout", "2"), { env: { FAULTY_GDB_ON: PHASES["the hypothesis tests"], FAULTY_GDB_DO: "hang", FAULTY_GDB_ONCE: once } });
    expect(existsSync(once)).toBe(true);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/^dumpdbg: (?!warning)/m);
    expect(JSON.parse(run.stdout).crash.kind).toBe("null-dereference");
    const { evidence } = onlySession(join(dir, "sessions-hang"));
    expect(evidence.filter((e) => !e.ok)).toEqual([
      expect.objectContaining({ command: "p session->client", summary: expect.stringMatching(/^timeout: command timed out after 2s; .*, so it was killed and the dump reopened$/) }),
    ]);
    expect(evidence.length).toBeGreaterThan(15);
  });
});

describe("a gdb that dies on one command every time", () => {
  it("in the hypothesis tests: that command fails saying so, the analysis completes, and the evidence before and after it is kept", async () => {
    const run = await runCli(analyze("every-test"), { env: { FAULTY_GDB_ON: PHASES["the hypothesis tests"], FAULTY_GDB_DO: "kill" } });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).crash.kind).toBe("null-dereference");
    const { evidence } = onlySession(join(dir, "sessions-every-test"));
    const failed = evidence.filter((e) => !e.ok);
    expect(failed).toEqual([
      expect.objectContaining({
        command: "p session->client",
        errorType: "session_dead",
        summary: expect.stringMatching(/^session_dead: gdb killed by SIGKILL[^;]*, and again when asked once more \(gdb killed by SIGKILL[^)]*\): it may crash on this command every time; the dump was reopened$/),
      }),
    ]);
    expect(evidence.length).toBeGreaterThan(15);
  });
});

describe("a gdb that cannot be started again mid-run", () => {
  it("ends the analysis with one line naming what it was doing, keeps the evidence so far, and resume finishes it", async () => {
    const once = join(dir, "once-restart");
    const sessions = join(dir, "sessions-restart");
    const run = await runCli(analyze("restart"), { env: { FAULTY_GDB_ON: PHASES["the hypothesis tests"], FAULTY_GDB_DO: "kill", FAULTY_GDB_ONCE: once, FAULTY_GDB_NEXT_AT: "3" } });
    const { id, evidence } = onlySession(sessions);
    expect(run.code).toBe(4);
    expect(run.stderr.split("\n").filter((line) => line.startsWith("dumpdbg:"))).toEqual([
      `dumpdbg: the debugger could not be started again: gdb killed by SIGKILL running "p session->client", then gdb killed by SIGKILL while loading the core file; the evidence so far is kept: "dumpdbg resume ${id}" goes on from the last step saved`,
    ]);
    expect(run.stdout).toBe("");
    // Triage's evidence, all of it answered.
    expect(evidence.length).toBeGreaterThanOrEqual(9);
    expect(evidence.filter((e) => !e.ok)).toEqual([]);
    const resumed = await runCli(["resume", id, "--sessions-dir", sessions, "--out", join(dir, "reports-restart")]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "reports-restart", `${id}.json`), "utf8")).crash.kind).toBe("null-dereference");
  });
});

describe("a gdb that dies every time it opens the dump, under --debugger auto", () => {
  it("triage: LLDB reads it, the verdict is the same, and a warning names gdb's deaths", async () => {
    const run = await runCli(["triage", built.core, "--exe", built.exe, "--json", "--gdb", FAULTY_GDB], { env: { FAULTY_GDB_AT: "3", FAULTY_GDB_DO: "kill" } });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).kind).toBe("null-dereference");
    expect(run.stderr).toMatch(
      new RegExp(`^dumpdbg: warning: gdb died twice opening ${built.core} \\(gdb killed by SIGKILL while [^;]+; then gdb killed by SIGKILL while [^)]+\\): it may crash on this dump every time: read with lldb instead$`, "m"),
    );
  });

  it("analyze: the analysis runs on LLDB, and the report says gdb crashed on this dump", async () => {
    const run = await runCli(analyze("lldb"), { env: { FAULTY_GDB_AT: "3", FAULTY_GDB_DO: "kill" } });
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.session.debugger).toMatch(/lldb/);
    expect(report.crash.kind).toBe("null-dereference");
    expect(report.crash.culprit.function).toBe("send_to_client");
    const markdown = readFileSync(join(dir, "reports-lldb", `${report.session.id}.md`), "utf8");
    expect(markdown).toMatch(new RegExp(`^gdb died twice opening ${built.core} \\([^)]+\\): it may crash on this dump every time: dumpdbg read it with lldb instead$`, "m"));
  });
});

describe("a gdb killed during a chat", () => {
  it("once, on the command a question runs: asked again on a new gdb, the answer has its output, and it is kept as evidence", async () => {
    const sessions = join(dir, "sessions-chat");
    const analysis = await runCli(["analyze", built.core, "--exe", built.exe, "--provider", "offline", "--json", "--sessions-dir", sessions, "--out", join(dir, "reports-chat")]);
    expect(analysis.code, analysis.stderr).toBe(0);
    const id = JSON.parse(analysis.stdout).session.id as string;
    const once = join(dir, "once-chat");
    const chat = await pipeChat(["chat", id, "--sessions-dir", sessions, "--out", join(dir, "reports-chat"), "--provider", "offline"], dir, "/exec info frame\n", {
      DUMPDBG_GDB: FAULTY_GDB,
      FAULTY_GDB_ON: '"info frame"',
      FAULTY_GDB_DO: "kill",
      FAULTY_GDB_ONCE: once,
    });
    expect(existsSync(once)).toBe(true);
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(/Stack level 0/);
    expect(onlySession(sessions).evidence.find((e) => e.command === "info frame")).toMatchObject({ ok: true });
  });
});
