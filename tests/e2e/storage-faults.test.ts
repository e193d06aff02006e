/**
 * The machine's faults on the paths dumpdbg writes, made for real: small tmpfs mounts filled to the
 * last byte before a run and during one (by a gdb wrapper, at a chosen command), remounted
 * read-only, and a folder of mode 0555 for a user who is not root. Each case: exit 6, one line
 * naming the path and the cause and what to do, and what is still on disk.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, runCli } from "../helpers/cli.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";
import { fillToTheLastByte, mountingAllowed, mountTmpfs, remountReadOnly, unmount } from "../helpers/tmpfs.js";

const FAULTY_GDB = fileURLToPath(new URL("../helpers/faulty-gdb.mjs", import.meta.url));
const tempDir = tempDirs();
const canMount = mountingAllowed();
if (!canMount) console.warn("storage-faults: mounting a tmpfs is not permitted here; the full-disk and read-only cases are skipped");

let built: BuiltCore;
let dir: string;
const mounts: string[] = [];

beforeAll(async () => {
  built = await buildCore("null-deref");
  dir = tempDir("dumpdbg-storage-faults-");
});

afterAll(() => {
  for (const mount of mounts.reverse()) unmount(mount);
});

function tmpfs(name: string, size: string): string {
  const mount = mountTmpfs(join(dir, name), size);
  mounts.push(mount);
  return mount;
}

const analyze = (...flags: string[]) => ["analyze", built.core, "--exe", built.exe, "--provider", "offline", ...flags];

/** The one session under `root`, with its files. */
function onlySession(root: string): { id: string; dir: string; meta: { state: string } } {
  const ids = readdirSync(root).filter((entry) => entry !== "filler");
  expect(ids).toHaveLength(1);
  const sessionDir = join(root, ids[0]!);
  return { id: ids[0]!, dir: sessionDir, meta: JSON.parse(readFileSync(join(sessionDir, "session.json"), "utf8")) };
}

describe.skipIf(!canMount)("a full disk before the run", () => {
  it("--out on a full disk: exit 6 before the dump is opened, naming the folder and the cause", async () => {
    const out = tmpfs("full-out", "256k");
    fillToTheLastByte(join(out, "filler"));
    const sessions = join(dir, "sessions-a");
    const run = await runCli(analyze("--out", out, "--sessions-dir", sessions));
    expect(run.code).toBe(6);
    expect(run.stderr).toBe(`dumpdbg: cannot write ${out}: no space left on device (0 bytes free, a run needs about 1 MB); free some space there or choose another --out folder\n`);
    expect(existsSync(sessions) ? readdirSync(sessions) : []).toEqual([]);
    expect(readdirSync(out)).toEqual(["filler"]);
  });

  it("a sessions folder with less room than a run needs: exit 6, saying what is free and what is needed", async () => {
    const sessions = tmpfs("small-sessions", "2m");
    const run = await runCli(analyze("--out", join(dir, "reports-b"), "--sessions-dir", sessions));
    expect(run.code).toBe(6);
    expect(run.stderr).toMatch(new RegExp(`^dumpdbg: cannot write ${sessions}: no space left on device \\(2 MB free, a run needs about 8 MB\\); free some space there or choose another --sessions-dir\n$`));
    expect(readdirSync(sessions)).toEqual([]);
  });

  it("a read-only --out: exit 6, read-only file system", async () => {
    const out = tmpfs("ro-out", "1m");
    remountReadOnly(out);
    const run = await runCli(analyze("--out", out, "--sessions-dir", join(dir, "sessions-c")));
    expect(run.code).toBe(6);
    expect(run.stderr).toBe(`dumpdbg: cannot write ${out}: read-only file system; use a folder on a writable file system or choose another --out folder\n`);
  });
});

describe.skipIf(!canMount)("a disk that fills up during the run", () => {
  it("reports that cannot be written leave the analysis saved, and `dumpdbg report` writes them later", async () => {
    const out = tmpfs("fills-out", "2m");
    const sessions = join(dir, "sessions-d");
    // The last command of the analysis: the disk fills just before the reports are written.
    const run = await runCli(analyze("--out", out, "--sessions-dir", sessions, "--gdb", FAULTY_GDB), { env: { FAULTY_GDB_AT: "31", FAULTY_GDB_DO: `fill:${join(out, "filler")}` } });
    const session = onlySession(sessions);
    expect(run.code).toBe(6);
    expect(run.stderr.split("\n").filter((line) => line.startsWith("dumpdbg:"))).toEqual([
      `dumpdbg: cannot write ${join(out, `${session.id}.md`)}: no space left on device; free some space there or choose another --out folder; the analysis is saved: "dumpdbg report ${session.id} --out DIR" writes its report`,
    ]);
    // Whole or not at all: no report, no temporary file.
    expect(readdirSync(out)).toEqual(["filler"]);
    expect(session.meta.state).toBe("done");
    const later = await runCli(["report", session.id, "--out", join(dir, "reports-d"), "--sessions-dir", sessions]);
    expect(later.code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "reports-d", `${session.id}.json`), "utf8")).crash.kind).toBe("null-dereference");
  });

  it("a sessions folder that fills mid-graph keeps every step before it, and `dumpdbg resume` finishes the run", async () => {
    const sessions = tmpfs("fills-sessions", "12m");
    const filler = join(sessions, "filler");
    const out = join(dir, "reports-e");
    // A command of the tester: the session's evidence and checkpoints have steps in them by then.
    const run = await runCli(analyze("--out", out, "--sessions-dir", sessions, "--gdb", FAULTY_GDB), { env: { FAULTY_GDB_AT: "22", FAULTY_GDB_DO: `fill:${filler}` } });
    const session = onlySession(sessions);
    expect(run.code).toBe(6);
    const errors = run.stderr.split("\n").filter((line) => line.startsWith("dumpdbg:"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^dumpdbg: cannot write ${session.dir}/\\S+: (no space left on device|input/output error \\(a full disk or a failing device\\)); free some space there or choose another --sessions-dir; then "dumpdbg resume ${session.id}" goes on from the last step saved$`));
    expect(existsSync(join(out, `${session.id}.md`))).toBe(false);
    // The store is whole: SQLite rolled back the write that failed.
    expect(execFileSync("sqlite3", [join(session.dir, "evidence.db"), "PRAGMA integrity_check;"], { encoding: "utf8" }).trim()).toBe("ok");
    rmSync(filler);
    const resumed = await runCli(["resume", session.id, "--out", out, "--sessions-dir", sessions]);
    expect(resumed.stderr).not.toMatch(/^dumpdbg: /m);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(readFileSync(join(out, `${session.id}.json`), "utf8")).crash.kind).toBe("null-dereference");
  });
});

describe.skipIf(process.getuid?.() !== 0)("a folder this user may not write", () => {
  it("--out of mode 0555, for a user who is not root: exit 6, permission denied", async () => {
    const home = tempDir("dumpdbg-storage-nobody-");
    chmodSync(home, 0o755);
    const core = join(home, "core");
    copyFileSync(built.core, core);
    chmodSync(core, 0o644);
    const out = join(home, "reports");
    execFileSync("mkdir", ["-m", "0555", out]);
    execFileSync("mkdir", ["-m", "0777", join(home, "sessions")]);
    const nobody = ["--reuid", "65534", "--regid", "65534", "--clear-groups", "env", `HOME=${home}`, "DUMPDBG_CODE_CACHE=off", process.execPath, BIN];
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn("setpriv", [...nobody, "analyze", core, "--exe", built.exe, "--provider", "offline", "--out", out, "--sessions-dir", join(home, "sessions")], { stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      child.on("close", (code) => resolve({ code, stderr }));
    });
    expect(run.code).toBe(6);
    expect(run.stderr).toBe(`dumpdbg: cannot write ${out}: permission denied; make it writable for this user or choose another --out folder\n`);
  });
});
