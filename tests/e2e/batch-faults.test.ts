/**
 * `dumpdbg batch` against the machine's faults, made for real: folders on small tmpfs mounts, full
 * before the batch or filled during it (by a gdb wrapper, at a chosen command of a chosen dump), and
 * one dump's gdb killed (tests/helpers/faulty-gdb.mjs). Each case: the exit code, the one line, and
 * what is on disk after.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";
import { fillToTheLastByte, mountingAllowed, mountTmpfs, unmount } from "../helpers/tmpfs.js";

const FAULTY_GDB = fileURLToPath(new URL("../helpers/faulty-gdb.mjs", import.meta.url));
const tempDir = tempDirs();
const canMount = mountingAllowed();
if (!canMount) console.warn("batch-faults: mounting a tmpfs is not permitted here; the full-disk cases are skipped");

let built: BuiltCore;
let dir: string;
let dumps: string;
const mounts: string[] = [];

beforeAll(async () => {
  built = await buildCore("null-deref");
  dir = tempDir("dumpdbg-batch-faults-");
  // Three copies of one core: three dumps of one bug, each read by its own gdb.
  dumps = join(dir, "dumps");
  mkdirSync(dumps);
  for (const n of [1, 2, 3]) copyFileSync(built.core, join(dumps, `core.${n}`));
});

afterAll(() => {
  for (const mount of mounts.reverse()) unmount(mount);
});

function tmpfs(name: string, size: string): string {
  const mount = mountTmpfs(join(dir, name), size);
  mounts.push(mount);
  return mount;
}

const batch = (out: string, sessions: string, ...flags: string[]) => ["batch", dumps, "--jobs", "1", "--exe", built.exe, "--json", "--out", out, "--sessions-dir", sessions, ...flags];
const errorLines = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("dumpdbg:") && !line.startsWith("dumpdbg: warning:"));
/** The triage cache's entries, by dump file name. */
const cached = (sessions: string) => Object.keys(JSON.parse(readFileSync(join(sessions, "batch-triage.json"), "utf8")) as Record<string, unknown>).map((key) => key.split("\u0000")[0]!.split("/").at(-1));

describe.skipIf(!canMount)("a batch on a full disk, said before the first dump is read", () => {
  it("--out with no room: exit 6, one line with what is free and what the batch needs; nothing triaged", async () => {
    const out = tmpfs("full-out", "256k");
    fillToTheLastByte(join(out, "filler"));
    const sessions = join(dir, "sessions-a");
    const run = await runCli(batch(out, sessions));
    expect(run.code).toBe(6);
    expect(run.stderr).toBe(`dumpdbg: cannot write ${out}: no space left on device (0 bytes free, a batch of 3 dumps needs about 280 KB); free some space there or choose another --out folder\n`);
    expect(run.stdout).toBe("");
    expect(existsSync(join(sessions, "batch-triage.json"))).toBe(false);
    expect(readdirSync(out)).toEqual(["filler"]);
  });

  it("a sessions folder (the triage cache) with less room than the batch needs: exit 6, nothing written there", async () => {
    const sessions = tmpfs("small-sessions", "64k");
    const run = await runCli(batch(join(dir, "reports-b"), sessions));
    expect(run.code).toBe(6);
    expect(run.stderr).toMatch(new RegExp(`^dumpdbg: cannot write ${sessions}: no space left on device \\(\\d+ KB free, a batch of 3 dumps needs about 76 KB\\); free some space there or choose another --sessions-dir\\n$`));
    expect(readdirSync(sessions)).toEqual([]);
  });
});

describe.skipIf(!canMount)("a disk that fills during the batch", () => {
  it("the sessions folder, as the second dump is triaged: the first is kept, one line, and the same batch goes on after", async () => {
    const sessions = tmpfs("fills-sessions", "1m");
    const out = join(dir, "reports-c");
    // The last command of core.2's triage: its result cannot be kept.
    const run = await runCli(batch(out, sessions, "--gdb", FAULTY_GDB), { env: { FAULTY_GDB_CORE: "core.2", FAULTY_GDB_ON: '"x/i $pc"', FAULTY_GDB_DO: `fill:${join(sessions, "filler")}` } });
    expect(run.code).toBe(6);
    expect(errorLines(run.stderr)).toEqual([
      `dumpdbg: cannot write ${join(sessions, "batch-triage.json")}: no space left on device; free some space there or choose another --sessions-dir; 1 dump triaged before it is kept: run the same batch again to go on`,
    ]);
    expect(run.stdout).toBe("");
    // The cache is the last whole one, with no temporary file beside it; no batch report.
    expect(readdirSync(sessions).sort()).toEqual(["batch-triage.json", "filler"]);
    expect(cached(sessions)).toEqual(["core.1"]);
    expect(existsSync(out) ? readdirSync(out) : []).toEqual([]);

    rmSync(join(sessions, "filler"));
    const again = await runCli(batch(out, sessions));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/^dumpdbg: 1 dump was triaged by an earlier batch and reused$/m);
    const doc = JSON.parse(again.stdout);
    expect(doc.groups).toHaveLength(1);
    expect(doc.groups[0].count).toBe(3);
  });

  it("--out, as the last dump is triaged: exit 6, no part of the batch report, and every dump's triage kept", async () => {
    const out = tmpfs("fills-out", "1m");
    const sessions = join(dir, "sessions-d");
    const run = await runCli(batch(out, sessions, "--gdb", FAULTY_GDB), { env: { FAULTY_GDB_CORE: "core.3", FAULTY_GDB_ON: '"x/i $pc"', FAULTY_GDB_DO: `fill:${join(out, "filler")}` } });
    expect(run.code).toBe(6);
    expect(errorLines(run.stderr)).toEqual([
      expect.stringMatching(
        new RegExp(`^dumpdbg: cannot write ${out}/batch-\\d{8}-\\d{6}\\.md: no space left on device; free some space there or choose another --out folder; the triage of every dump is kept: run the same batch again to write its report$`),
      ),
    ]);
    expect(readdirSync(out)).toEqual(["filler"]);
    expect(cached(sessions).sort()).toEqual(["core.1", "core.2", "core.3"]);
  });
});

describe.skipIf(!canMount)("a disk that fills during a batch's analysis", () => {
  it("--analyze with the sessions folder filled as the bug is analysed: exit 6, one line, the triage kept", async () => {
    const sessions = tmpfs("fills-analysis", "12m");
    const out = join(dir, "reports-h");
    // Only the analysis asks this; triage does not.
    const run = await runCli(batch(out, sessions, "--analyze", "--gdb", FAULTY_GDB), { env: { FAULTY_GDB_ON: '"p session->client"', FAULTY_GDB_DO: `fill:${join(sessions, "filler")}` } });
    expect(run.code).toBe(6);
    expect(errorLines(run.stderr)).toEqual([
      expect.stringMatching(
        new RegExp(`^dumpdbg: cannot write ${sessions}/\\S+: (no space left on device|input/output error \\(a full disk or a failing device\\)); free some space there or choose another --sessions-dir; .*the triage of every dump and the analyses before it are kept: run the same batch again to go on$`),
      ),
    ]);
    expect(cached(sessions).sort()).toEqual(["core.1", "core.2", "core.3"]);
    expect(existsSync(out) ? readdirSync(out).filter((f) => f.startsWith("batch-")) : []).toEqual([]);
  });
});

describe("one dump's debugger dies during a batch", () => {
  it("killed once as it reads the stack: started again, and every dump is triaged", async () => {
    const once = join(dir, "once-batch");
    const run = await runCli(batch(join(dir, "reports-e"), join(dir, "sessions-e"), "--gdb", FAULTY_GDB), {
      env: { FAULTY_GDB_CORE: "core.2", FAULTY_GDB_ON: '"bt 40"', FAULTY_GDB_DO: "kill", FAULTY_GDB_ONCE: once },
    });
    expect(existsSync(once)).toBe(true);
    expect(run.code, run.stderr).toBe(0);
    expect(errorLines(run.stderr)).toEqual([]);
    const doc = JSON.parse(run.stdout);
    expect(doc.errors).toEqual([]);
    expect(doc.groups).toEqual([expect.objectContaining({ kind: "null-dereference", count: 3 })]);
  });

  it("killed every time it opens that dump: the others are read with gdb, that one with LLDB, and a warning says why", async () => {
    const run = await runCli(batch(join(dir, "reports-f"), join(dir, "sessions-f"), "--gdb", FAULTY_GDB), { env: { FAULTY_GDB_CORE: "core.2", FAULTY_GDB_AT: "3", FAULTY_GDB_DO: "kill" } });
    expect(run.code, run.stderr).toBe(0);
    expect(errorLines(run.stderr)).toEqual([]);
    expect(run.stderr.split("\n").filter((line) => line.startsWith("dumpdbg: warning:"))).toEqual([
      expect.stringMatching(new RegExp(`^dumpdbg: warning: gdb died twice opening ${join(dumps, "core.2")} \\(gdb killed by SIGKILL while [^;]+; then gdb killed by SIGKILL while [^)]+\\): it may crash on this dump every time: dumpdbg read it with lldb instead$`)),
    ]);
    const doc = JSON.parse(run.stdout);
    expect(doc.errors).toEqual([]);
    expect(doc.groups).toEqual([expect.objectContaining({ kind: "null-dereference", count: 3 })]);
  });

  it("killed every time at the same command of that dump: the command fails, the dump is still triaged", async () => {
    const run = await runCli(batch(join(dir, "reports-g"), join(dir, "sessions-g"), "--gdb", FAULTY_GDB), { env: { FAULTY_GDB_CORE: "core.2", FAULTY_GDB_ON: '"info registers"', FAULTY_GDB_DO: "kill" } });
    expect(run.code, run.stderr).toBe(0);
    expect(errorLines(run.stderr)).toEqual([]);
    const doc = JSON.parse(run.stdout);
    expect(doc.errors).toEqual([]);
    expect(doc.groups.map((g: { kind: string }) => g.kind)).toContain("null-dereference");
    expect(doc.groups.reduce((n: number, g: { count: number }) => n + g.count, 0)).toBe(3);
  });
});
