/**
 * A dump that changes while dumpdbg reads it: replaced by another file, cut short in place, or
 * deleted, by a gdb wrapper at a chosen command (tests/helpers/faulty-gdb.mjs). The run notices at
 * the next command (the file's device, inode, size and modification time against those it opened)
 * and ends with one line, exit 3: no verdict mixed from two files. What was read before is kept.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { EvidenceStore } from "../../src/evidence/store.js";
import { runCli } from "../helpers/cli.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const FAULTY_GDB = fileURLToPath(new URL("../helpers/faulty-gdb.mjs", import.meta.url));
const tempDir = tempDirs();

let built: BuiltCore;
let dir: string;

beforeAll(async () => {
  built = await buildCore("null-deref");
  dir = tempDir("dumpdbg-changing-dumps-");
});

/** A copy of the core of its own, and another copy to put in its place. */
function copies(name: string): { core: string; other: string; size: number } {
  const core = join(dir, `${name}.core`);
  const other = join(dir, `${name}.other`);
  copyFileSync(built.core, core);
  copyFileSync(built.core, other);
  return { core, other, size: statSync(core).size };
}

const CHANGES = {
  replaced: (c: ReturnType<typeof copies>) => ({ action: `replace:${c.core}:${c.other}`, said: "was replaced by another file" }),
  "cut short": (c: ReturnType<typeof copies>) => ({ action: `cut:${c.core}:4096`, said: `was cut short \\(${c.size} bytes, now 4096\\)` }),
  deleted: (c: ReturnType<typeof copies>) => ({ action: `delete:${c.core}`, said: "was deleted" }),
};

describe("a dump that changes between triage and the hypothesis tests", () => {
  it.each(Object.keys(CHANGES) as (keyof typeof CHANGES)[])("%s: exit 3, one line, triage's evidence kept and nothing read after the change", async (change) => {
    const name = change.replace(/\W+/g, "-");
    const files = copies(name);
    const { action, said } = CHANGES[change](files);
    const sessions = join(dir, `sessions-${name}`);
    const out = join(dir, `reports-${name}`);
    const run = await runCli(["analyze", files.core, "--exe", built.exe, "--provider", "offline", "--json", "--gdb", FAULTY_GDB, "--sessions-dir", sessions, "--out", out], {
      env: { FAULTY_GDB_ON: '"p session->client"', FAULTY_GDB_DO: action },
    });
    expect(run.code).toBe(3);
    expect(run.stdout).toBe("");
    expect(run.stderr.split("\n").filter((line) => line.startsWith("dumpdbg:"))).toEqual([
      expect.stringMatching(new RegExp(`^dumpdbg: ${files.core} ${said} while dumpdbg read it: the run stops rather than mix two dumps in one verdict; run it again on a dump that stays as it is \\(a copy\\)$`)),
    ]);
    expect(existsSync(out) ? readdirSync(out) : []).toEqual([]);
    const [id] = readdirSync(sessions);
    expect(JSON.parse(readFileSync(join(sessions, id!, "session.json"), "utf8")).state).toBe("failed");
    const store = EvidenceStore.open(join(sessions, id!, "evidence.db"));
    try {
      const commands = store.list().map((e) => e.command);
      expect(commands).toContain("bt 40");
      expect(commands).not.toContain("p session->client");
    } finally {
      store.close();
    }
  });
});

describe("a dump replaced during triage", () => {
  it("triage: exit 3 and one line, no verdict", async () => {
    const files = copies("triage");
    const run = await runCli(["triage", files.core, "--exe", built.exe, "--json", "--gdb", FAULTY_GDB], { env: { FAULTY_GDB_ON: '"bt 40"', FAULTY_GDB_DO: `replace:${files.core}:${files.other}` } });
    expect(run.code).toBe(3);
    expect(run.stdout).toBe("");
    // One line says it; a warning gdb gave while loading (a source newer than a cached program) may come first.
    const said = run.stderr.trimEnd().split("\n").filter((line) => !line.startsWith("dumpdbg: warning: gdb warned"));
    expect(said).toEqual([`dumpdbg: ${files.core} was replaced by another file while dumpdbg read it: the run stops rather than mix two dumps in one verdict; run it again on a dump that stays as it is (a copy)`]);
  });
});

describe("a dump cut short during a batch", () => {
  it("that dump is an error row with the one line; the others are triaged", async () => {
    const dumps = join(dir, "batch");
    mkdirSync(dumps);
    for (const n of [1, 2, 3]) copyFileSync(built.core, join(dumps, `core.${n}`));
    const cutOne = join(dumps, "core.2");
    const size = statSync(cutOne).size;
    const run = await runCli(["batch", dumps, "--jobs", "1", "--exe", built.exe, "--json", "--gdb", FAULTY_GDB, "--out", join(dir, "batch-reports"), "--sessions-dir", join(dir, "batch-sessions")], {
      env: { FAULTY_GDB_CORE: "core.2", FAULTY_GDB_ON: '"bt 40"', FAULTY_GDB_DO: `cut:${cutOne}:4096` },
    });
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.errors).toEqual([
      { dump: cutOne, error: `${cutOne} was cut short (${size} bytes, now 4096) while dumpdbg read it: the run stops rather than mix two dumps in one verdict; run it again on a dump that stays as it is (a copy)` },
    ]);
    expect(doc.groups).toEqual([expect.objectContaining({ kind: "null-dereference", count: 2 })]);
  });
});

describe("a dump that changed after its session read it", () => {
  it("chat refuses it in one line, exit 3, naming what changed; the session is untouched", async () => {
    const files = copies("later");
    const sessions = join(dir, "sessions-later");
    const run = await runCli(["analyze", files.core, "--exe", built.exe, "--provider", "offline", "--json", "--sessions-dir", sessions, "--out", join(dir, "reports-later")]);
    expect(run.code, run.stderr).toBe(0);
    const id = JSON.parse(run.stdout).session.id as string;
    truncateSync(files.core, 8192);
    const meta = readFileSync(join(sessions, id, "session.json"), "utf8");
    const chat = await runCli(["chat", id, "--sessions-dir", sessions, "--provider", "offline"]);
    expect(chat.code).toBe(3);
    expect(chat.stderr).toBe(`dumpdbg: ${files.core} has changed since session ${id} read it (${files.size} bytes then, 8192 now): its evidence is of the dump as it was; "dumpdbg analyze ${files.core}" reads it as it is now\n`);
    expect(readFileSync(join(sessions, id, "session.json"), "utf8")).toBe(meta);
  });
});
