/**
 * Sessions damaged as a user's machine damages them (a copy cut short, a full disk during an
 * earlier run): copies of one real session with session.json or evidence.db cut or overwritten at
 * several offsets. Each is listed as damaged with what is wrong; `chat`, `resume` and `report` on it
 * say what is damaged and what still works; the report is re-rendered from report.json; the whole
 * session beside them is untouched; `sessions rm` and `cleanup` remove them.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, readdirSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ReportSchema } from "../../src/report/schema.js";
import { EvidenceStore } from "../../src/evidence/store.js";
import { pipeChat, runCli } from "../helpers/cli.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

let built: BuiltCore;
let sessions: string;
let whole: string;
let dir: string;
let wholeMeta: string;

/** A copy of the whole session under a new id, damaged by `damage(folder)`. */
function damagedCopy(suffix: string, damage: (folder: string) => void): string {
  const id = `${whole}-${suffix}`;
  cpSync(join(sessions, whole), join(sessions, id), { recursive: true });
  damage(join(sessions, id));
  return id;
}

const cut = (file: string, keep: (size: number) => number) => (folder: string) => truncateSync(join(folder, file), keep(statSync(join(folder, file)).size));
const overwrite = (file: string, at: (size: number) => number, bytes: number) => (folder: string) => {
  const path = join(folder, file);
  const content = readFileSync(path);
  content.fill(0x5a, at(content.length), at(content.length) + bytes);
  writeFileSync(path, content);
};
const interrupted = (folder: string) => {
  const path = join(folder, "session.json");
  writeFileSync(path, readFileSync(path, "utf8").replace('"state": "done"', '"state": "interrupted"'));
};

const META_DAMAGE = {
  empty: cut("session.json", () => 0),
  half: cut("session.json", (size) => Math.floor(size / 2)),
  "last-bytes": cut("session.json", (size) => size - 3),
  fields: (folder: string) => writeFileSync(join(folder, "session.json"), "{}\n"),
};
const DB_DAMAGE = {
  "db-header": cut("evidence.db", () => 60),
  "db-one-page": cut("evidence.db", () => 4096),
  "db-half": cut("evidence.db", (size) => Math.floor(size / 2)),
  "db-last-page": cut("evidence.db", (size) => size - 4096),
  "db-magic": overwrite("evidence.db", () => 0, 16),
};

const ids: Record<string, string> = {};

beforeAll(async () => {
  built = await buildCore("null-deref");
  dir = tempDir("dumpdbg-damaged-sessions-");
  sessions = join(dir, "sessions");
  const run = await runCli(["analyze", built.core, "--exe", built.exe, "--provider", "offline", "--sessions-dir", sessions, "--out", join(dir, "reports"), "--json"]);
  expect(run.code).toBe(0);
  whole = ReportSchema.parse(JSON.parse(run.stdout)).session.id;
  wholeMeta = readFileSync(join(sessions, whole, "session.json"), "utf8");
  for (const [name, damage] of Object.entries(META_DAMAGE)) ids[name] = damagedCopy(name, damage);
  for (const [name, damage] of Object.entries(DB_DAMAGE)) {
    ids[name] = damagedCopy(name, (folder) => {
      interrupted(folder);
      damage(folder);
    });
  }
});

const at = (...args: string[]) => [...args, "--sessions-dir", sessions];

describe("damaged sessions", () => {
  it("are listed as damaged, each with what is wrong, beside the whole one", async () => {
    const run = await runCli(at("sessions", "list", "--json"));
    expect(run.code).toBe(0);
    const listed = JSON.parse(run.stdout) as Array<{ id: string; state: string; damage?: string }>;
    const byId = new Map(listed.map((s) => [s.id, s]));
    expect(byId.get(whole)?.state).toBe("done");
    expect(byId.get(ids.empty!)?.damage).toBe("session.json is cut short");
    expect(byId.get(ids.half!)?.damage).toBe("session.json is cut short");
    expect(byId.get(ids["last-bytes"]!)?.damage).toBe("session.json is cut short");
    expect(byId.get(ids.fields!)?.damage).toBe("session.json has fields missing or wrong");
    expect(byId.get(ids["db-header"]!)?.damage).toMatch(/^evidence\.db is not a database/);
    expect(byId.get(ids["db-magic"]!)?.damage).toMatch(/^evidence\.db is not a database/);
    for (const name of ["db-one-page", "db-half", "db-last-page"]) {
      expect(byId.get(ids[name]!)?.damage).toMatch(/^evidence\.db is cut short \(\d+ of its \d+ bytes\)$/);
    }
    for (const s of listed) expect(s.state === "damaged").toBe(s.id !== whole);
    const table = await runCli(at("sessions", "list"));
    expect(table.stdout).toMatch(new RegExp(`^${ids.half}\\s+damaged\\s+session\\.json is cut short`, "m"));
  });

  it("chat on a damaged session.json says what is damaged and that the report can still be written", async () => {
    const run = await runCli(at("chat", ids.half!, "--provider", "offline"));
    expect(run.code).toBe(3);
    const file = join(sessions, ids.half!, "session.json");
    expect(run.stderr).toBe(`dumpdbg: session ${ids.half} is damaged: ${file} is cut short; "dumpdbg report ${ids.half}" still writes its report; "dumpdbg sessions rm ${ids.half}" removes it\n`);
  });

  it("chat on a damaged evidence.db rebuilds it from what can still be read, says so in one line, and answers", async () => {
    for (const name of Object.keys(DB_DAMAGE)) {
      const id = ids[name]!;
      const folder = join(sessions, id);
      const chat = await pipeChat(at("chat", id, "--provider", "offline", "--out", join(dir, "chatted")), dir, "/exec bt 1\n");
      expect(chat.code, `${name}: ${chat.stderr}`).toBe(0);
      const warnings = chat.stderr.split("\n").filter((line) => line.startsWith("dumpdbg:"));
      expect(warnings[0], name).toMatch(
        new RegExp(
          `^dumpdbg: warning: session ${id}'s evidence\\.db (is cut short|is not a database|is damaged)[^:]*: rebuilt with (\\d+) of its (\\d+) pieces of evidence, from what SQLite still read, the transcript and the outputs kept in files; a question that needs evidence it lost runs its command again; the damaged file is kept as evidence\\.db\\.damaged-\\w+$`,
        ),
      );
      expect(warnings.slice(1).filter((line) => !line.startsWith("dumpdbg: warning:")), name).toEqual([]);
      expect(chat.stdout).toMatch(/send_to_client/);
      // The damaged file is kept; the new store is whole and holds what was rebuilt and the chat's command.
      expect(readdirSync(folder).filter((f) => f.startsWith("evidence.db.damaged-"))).not.toEqual([]);
      expect(execFileSync("sqlite3", [join(folder, "evidence.db"), "PRAGMA integrity_check;"], { encoding: "utf8" }).trim()).toBe("ok");
      const store = EvidenceStore.open(join(folder, "evidence.db"));
      try {
        const kept = Number(/rebuilt with (\d+)/.exec(warnings[0]!)![1]);
        expect(store.list().length, name).toBeGreaterThan(kept);
        expect(store.list().filter((e) => e.command === "bt 1").at(-1)).toMatchObject({ ok: true, source: "chat" });
      } finally {
        store.close();
      }
    }
  });

  it("a store cut only in its last page keeps what SQLite still reads: the evidence the report cites, under the same ids", async () => {
    const id = damagedCopy("db-tail", (folder) => {
      interrupted(folder);
      cut("evidence.db", (size) => size - 4096)(folder);
    });
    const chat = await pipeChat(at("chat", id, "--provider", "offline"), dir, "");
    expect(chat.code, chat.stderr).toBe(0);
    const kept = Number(/rebuilt with (\d+) of its (\d+)/.exec(chat.stderr)![1]);
    expect(kept).toBeGreaterThan(0);
    const store = EvidenceStore.open(join(sessions, id, "evidence.db"));
    try {
      const original = EvidenceStore.open(join(sessions, whole, "evidence.db"));
      try {
        for (const record of store.list()) expect(original.output(record.id)).toBe(store.output(record.id));
      } finally {
        original.close();
      }
    } finally {
      store.close();
    }
  });

  it("resume on a damaged evidence.db rebuilds it, says its checkpoints were lost, and runs the analysis to its report", async () => {
    for (const name of ["db-half", "db-magic"]) {
      const id = damagedCopy(`resume-${name}`, (folder) => {
        interrupted(folder);
        DB_DAMAGE[name as keyof typeof DB_DAMAGE](folder);
      });
      const out = join(dir, `resumed-${name}`);
      const run = await runCli(at("resume", id, "--provider", "offline", "--out", out));
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
      expect(run.stderr).not.toMatch(/^dumpdbg: /m);
      const warnings = run.stderr.split("\n").filter((line) => line.startsWith("warning: session"));
      expect(warnings).toEqual([
        expect.stringMatching(new RegExp(`^warning: session ${id}'s evidence\\.db .*: rebuilt with \\d+ of its \\d+ pieces of evidence, .*; its checkpoints were lost with it: the analysis starts again from triage; the damaged file is kept as evidence\\.db\\.damaged-\\w+$`)),
      ]);
      expect(JSON.parse(readFileSync(join(out, `${id}.json`), "utf8")).crash.kind).toBe("null-dereference");
    }
  });

  it("report re-renders from report.json whatever else is damaged", async () => {
    for (const id of [ids.empty!, ids.fields!, ids["db-half"]!]) {
      const out = join(dir, `again-${id}`);
      const run = await runCli(at("report", id, "--format", "json", "--out", out));
      expect(run.code).toBe(0);
      // The copies keep the document of the session they were copied from, and its id names the report.
      expect(run.stdout).toBe(`${join(out, `${whole}.json`)}\n`);
      expect(JSON.parse(readFileSync(join(out, `${whole}.json`), "utf8")).crash.kind).toBe("null-dereference");
    }
  });

  it("leaves the whole session untouched, and rm and cleanup remove the damaged ones", async () => {
    expect(readFileSync(join(sessions, whole, "session.json"), "utf8")).toBe(wholeMeta);
    const show = await runCli(at("sessions", "show", whole));
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^evidence +\d+$/m);
    const rm = await runCli(at("sessions", "rm", ids.fields!));
    expect(rm.code).toBe(0);
    expect(existsSync(join(sessions, ids.fields!))).toBe(false);
    const cleanup = await runCli(at("sessions", "cleanup", "--days", "0", "--keep", "0"));
    expect(cleanup.code).toBe(0);
    expect(readdirSync(sessions)).toEqual([]);
  });
});
