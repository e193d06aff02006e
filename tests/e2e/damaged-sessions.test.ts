/**
 * Sessions damaged as a user's machine damages them (a copy cut short, a full disk during an
 * earlier run): copies of one real session with session.json or evidence.db cut or overwritten at
 * several offsets. Each is listed as damaged with what is wrong; `chat`, `resume` and `report` on it
 * say what is damaged and what still works; the report is re-rendered from report.json; the whole
 * session beside them is untouched; `sessions rm` and `cleanup` remove them.
 */
import { cpSync, existsSync, readFileSync, readdirSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ReportSchema } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
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

  it("chat and resume on a damaged evidence.db say so, before opening the dump", async () => {
    for (const name of Object.keys(DB_DAMAGE)) {
      const id = ids[name]!;
      const db = join(sessions, id, "evidence.db");
      for (const command of ["chat", "resume"]) {
        const run = await runCli(at(command, id, "--provider", "offline", "--out", join(dir, "resumed")));
        expect(run.code, `${command} ${name}`).toBe(3);
        expect(run.stderr).toMatch(
          new RegExp(`^dumpdbg: session ${id} is damaged: ${db} is (cut short|not a database|damaged)[^\\n]*; "dumpdbg report ${id}" still writes its report; "dumpdbg analyze ${built.core}" runs the analysis again; "dumpdbg sessions rm ${id}" removes it\\n$`),
        );
      }
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
