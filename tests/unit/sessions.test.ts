import Database from "better-sqlite3";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  acquireSessionLock,
  cleanupSessions,
  createSession,
  listSessions,
  loadSession,
  removeSession,
  SessionBusy,
  SessionError,
  SessionNotFound,
  sessionPaths,
  Transcript,
  updateSession,
  type NewSession,
} from "../../src/evidence/sessions.js";
import { EvidenceStore } from "../../src/evidence/store.js";

const KILL_WRITER = join(import.meta.dirname, "../helpers/kill-writer.mjs");
const GDB: NewSession["debugger"] = { backend: "gdb", path: "/usr/bin/gdb", version: "GNU gdb (Debian 13.1-3) 13.1" };

let base: string;
let root: string;
const children: ChildProcess[] = [];

function newSession(dump = "/var/crash/core-null-deref"): string {
  return createSession(root, { dump, executable: "/srv/server", debugger: GDB, issue: "dies on disconnect" }).id;
}

/** Rewrites session.json as if the session were last updated `days` ago. */
function age(id: string, days: number): void {
  const path = sessionPaths(root, id).meta;
  const meta = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  meta.updatedAt = new Date(Date.now() - days * 24 * 60 * 60 * 1000).toISOString();
  writeFileSync(path, JSON.stringify(meta));
}

/** Starts the helper process and resolves once it prints `ready`, with the lines it printed. */
async function startHelper(args: string[], ready: string): Promise<{ child: ChildProcess; lines: string[] }> {
  const child = spawn(process.execPath, [KILL_WRITER, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const lines: string[] = [];
  let stderr = "";
  child.stderr?.on("data", (data: Buffer) => (stderr += data.toString()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      if (line === ready) resolve();
    });
    child.once("exit", (code) => reject(new Error(`helper exited with ${code} before "${ready}": ${stderr}`)));
  });
  return { child, lines };
}

async function kill9(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "dumpdbg-sessions-"));
  root = join(base, ".sessions");
});

afterEach(() => {
  vi.useRealTimers();
  for (const child of children.splice(0)) child.kill("SIGKILL");
  rmSync(base, { recursive: true, force: true });
});

describe("createSession", () => {
  it("names the session by UTC time and dump, and writes session.json", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-11-21T20:45:12.345Z"));
    const { id, dir, meta } = createSession(root, {
      dump: "/var/crash/core-null-deref",
      executable: "/srv/server",
      debugger: GDB,
      issue: "server dies when a client disconnects",
    });
    expect(id).toMatch(/^20261121-204512-core-null-deref-[0-9a-f]{4}$/);
    expect(dir).toBe(join(root, id));
    expect(meta).toEqual({
      id,
      dump: "/var/crash/core-null-deref",
      executable: "/srv/server",
      debugger: GDB,
      issue: "server dies when a client disconnects",
      state: "created",
      createdAt: "2026-11-21T20:45:12.345Z",
      updatedAt: "2026-11-21T20:45:12.345Z",
      finishedAt: null,
    });
    expect(JSON.parse(readFileSync(join(dir, "session.json"), "utf8"))).toEqual(meta);
  });

  it("makes a safe folder name of any dump name", () => {
    expect(newSession("/tmp/x/Core.Server 1234 (copy)!")).toMatch(/^\d{8}-\d{6}-core-server-1234-copy-[0-9a-f]{4}$/);
    expect(newSession("C:\\dumps\\..\\crash.dmp")).toMatch(/^\d{8}-\d{6}-c-dumps-crash-dmp-[0-9a-f]{4}$/);
    expect(newSession("/tmp/...")).toMatch(/^\d{8}-\d{6}-dump-[0-9a-f]{4}$/);
    expect(newSession(`/tmp/${"é".repeat(10)}${"a".repeat(100)}`)).toMatch(/^\d{8}-\d{6}-a{39}-[0-9a-f]{4}$/);
  });

  it("gives ids that sort by time, and distinct ids within one second", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const ids: string[] = [];
    for (const time of ["2026-01-02T03:04:05Z", "2026-01-02T03:04:06Z", "2026-11-21T00:00:00Z"]) {
      vi.setSystemTime(new Date(time));
      ids.push(newSession(`/dumps/${String.fromCharCode(122 - ids.length)}`));
    }
    expect([...ids].sort()).toEqual(ids);
    vi.setSystemTime(new Date("2026-11-21T00:00:00Z"));
    const same = Array.from({ length: 30 }, () => newSession("/dumps/core"));
    expect(new Set(same).size).toBe(30);
  });
});

describe("loadSession and updateSession", () => {
  it("reads back what was written and updates it atomically", () => {
    const id = newSession();
    const before = loadSession(root, id);
    const after = updateSession(root, id, { state: "done", finishedAt: "2026-11-21T21:00:00.000Z" });
    const finishedAt = "2026-11-21T21:00:00.000Z";
    expect(after).toEqual({ ...before, state: "done", finishedAt, updatedAt: after.updatedAt });
    expect(Date.parse(after.updatedAt)).toBeGreaterThanOrEqual(Date.parse(before.updatedAt));
    expect(loadSession(root, id)).toEqual(after);
    expect(readdirSync(join(root, id))).toEqual(["session.json"]);
  });

  it("says in one line that an unknown id is not a session", () => {
    newSession();
    const error = (() => {
      try {
        loadSession(root, "20260101-000000-core-ffff");
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(SessionNotFound);
    expect((error as Error).message).toBe(
      `no session "20260101-000000-core-ffff" in ${root}; run "dumpdbg sessions list" to see the sessions there`,
    );
    expect(() => updateSession(root, "nope", { state: "failed" })).toThrow(SessionNotFound);
  });

  it("reports a damaged session.json as such", () => {
    const id = newSession();
    writeFileSync(sessionPaths(root, id).meta, "{ not json");
    expect(() => loadSession(root, id)).toThrow(/is damaged: .*session\.json is cut short; "dumpdbg sessions rm .*" removes it$/);
    writeFileSync(sessionPaths(root, id).meta, JSON.stringify({ id, dump: "core" }));
    expect(() => loadSession(root, id)).toThrow(/session\.json has fields missing or wrong/);
  });
});

describe("listSessions", () => {
  it("lists the sessions oldest first, skipping what is not a session", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-11-21T10:00:00Z"));
    const older = newSession("/d/b");
    vi.setSystemTime(new Date("2026-11-21T11:00:00Z"));
    const newer = newSession("/d/a");
    mkdirSync(join(root, "not-a-session"));
    writeFileSync(join(root, "stray.txt"), "");
    mkdirSync(join(root, ".hidden"));
    writeFileSync(join(root, ".hidden", "session.json"), "{}");
    expect(listSessions(root).map((s) => s.id)).toEqual([older, newer]);
  });

  it("finds nothing in a root that does not exist yet", () => {
    expect(listSessions(join(base, "nowhere"))).toEqual([]);
  });
});

describe("removeSession", () => {
  it("removes the session folder and everything in it", () => {
    const id = newSession();
    const store = EvidenceStore.open(sessionPaths(root, id).evidenceDb, { inlineLimit: 0 });
    store.add({
      command: "bt",
      backend: "gdb",
      context: { thread: 1, frame: null },
      output: "#0  main () at prog.c:29\n",
      ok: true,
      summary: "",
      findings: null,
      ms: 1,
      source: "user",
    });
    store.close();
    const keep = newSession("/d/other");
    removeSession(root, id);
    expect(existsSync(join(root, id))).toBe(false);
    expect(listSessions(root).map((s) => s.id)).toEqual([keep]);
  });

  it("refuses ids that could reach outside the root, and touches nothing", () => {
    const outside = join(base, "precious");
    mkdirSync(outside);
    writeFileSync(join(outside, "session.json"), "{}");
    mkdirSync(root, { recursive: true });
    const ids = ["../precious", "..", ".", "", "a/b", "a\\b", outside, "x/../../precious", "..precious", "a\u0000b"];
    for (const id of ids) expect(() => removeSession(root, id), JSON.stringify(id)).toThrow(SessionNotFound);
    expect(existsSync(join(outside, "session.json"))).toBe(true);
  });

  it("refuses a folder that holds no session.json", () => {
    mkdirSync(join(root, "20260101-000000-core-abcd"), { recursive: true });
    expect(() => removeSession(root, "20260101-000000-core-abcd")).toThrow(SessionNotFound);
    expect(existsSync(join(root, "20260101-000000-core-abcd"))).toBe(true);
  });

  it("refuses a symlink that points outside the root", () => {
    const outside = join(base, "elsewhere");
    mkdirSync(outside);
    writeFileSync(join(outside, "session.json"), "{}");
    mkdirSync(root, { recursive: true });
    symlinkSync(outside, join(root, "20260101-000000-link-abcd"));
    expect(() => removeSession(root, "20260101-000000-link-abcd")).toThrow(/outside .*refusing/);
    expect(() => loadSession(root, "20260101-000000-link-abcd")).toThrow(SessionError);
    expect(existsSync(join(outside, "session.json"))).toBe(true);
    expect(listSessions(root)).toEqual([]);
  });

  it("does not follow symlinks inside the session folder", () => {
    const id = newSession();
    const outside = join(base, "victim");
    mkdirSync(outside);
    writeFileSync(join(outside, "data"), "keep me");
    symlinkSync(outside, join(root, id, "evidence"));
    removeSession(root, id);
    expect(readFileSync(join(outside, "data"), "utf8")).toBe("keep me");
  });

  it("removes only the link when the entry is a symlink to a session inside the root", () => {
    const id = newSession();
    symlinkSync(join(root, id), join(root, "20260101-000000-alias-abcd"));
    expect(loadSession(root, "20260101-000000-alias-abcd").dump).toBe("/var/crash/core-null-deref");
    removeSession(root, "20260101-000000-alias-abcd");
    expect(existsSync(join(root, id, "session.json"))).toBe(true);
    expect(existsSync(join(root, "20260101-000000-alias-abcd"))).toBe(false);
  });
});

describe("cleanupSessions", () => {
  it("removes sessions older than the given days", () => {
    const old = newSession("/d/old");
    const recent = newSession("/d/recent");
    age(old, 10);
    age(recent, 2);
    const { removed, busy } = cleanupSessions(root, { days: 7 });
    expect(removed.map((s) => s.id)).toEqual([old]);
    expect(busy).toEqual([]);
    expect(listSessions(root).map((s) => s.id)).toEqual([recent]);
  });

  it("keeps the newest sessions whatever their age", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const ids: string[] = [];
    for (let hour = 10; hour < 15; hour++) {
      vi.setSystemTime(new Date(`2026-01-01T${hour}:00:00Z`));
      ids.push(newSession(`/d/core${hour}`));
    }
    vi.useRealTimers();
    expect(cleanupSessions(root, { days: 30, keep: 2 }).removed.map((s) => s.id).sort()).toEqual(ids.slice(0, 3));
    expect(listSessions(root).map((s) => s.id)).toEqual(ids.slice(3));
    expect(cleanupSessions(root, { keep: 1 }).removed.map((s) => s.id)).toEqual([ids[3]]);
    expect(cleanupSessions(root, { keep: 1 }).removed).toEqual([]);
  });

  it("skips sessions in use and says so", () => {
    const id = newSession();
    age(id, 100);
    const release = acquireSessionLock(root, id);
    expect(cleanupSessions(root, { days: 1 })).toMatchObject({ removed: [], busy: [{ id }] });
    release();
    expect(cleanupSessions(root, { days: 1 }).removed.map((s) => s.id)).toEqual([id]);
  });

  it("leaves everything outside the root alone", () => {
    const outside = join(base, "precious");
    mkdirSync(outside);
    const id = newSession();
    const old = { ...loadSession(root, id), updatedAt: "2000-01-01T00:00:00Z" };
    // Old enough for days: 0 whatever the clock did since it was made (a session made in the same
    // millisecond as the cleanup is not older than it).
    writeFileSync(sessionPaths(root, id).meta, JSON.stringify(old));
    writeFileSync(join(outside, "session.json"), JSON.stringify(old));
    symlinkSync(outside, join(root, "20000101-000000-trap-abcd"));
    cleanupSessions(root, { days: 0 });
    expect(existsSync(join(outside, "session.json"))).toBe(true);
    expect(listSessions(root)).toEqual([]);
  });

  it("needs days or keep, each sensible", () => {
    expect(() => cleanupSessions(root, {})).toThrow(RangeError);
    expect(() => cleanupSessions(root, { days: -1 })).toThrow(RangeError);
    expect(() => cleanupSessions(root, { keep: 1.5 })).toThrow(RangeError);
  });
});

describe("acquireSessionLock", () => {
  it("refuses a session this process already holds, until it is released", () => {
    const id = newSession();
    const release = acquireSessionLock(root, id);
    expect(readFileSync(sessionPaths(root, id).lock, "utf8").trim()).toBe(String(process.pid));
    expect(() => acquireSessionLock(root, id)).toThrow(SessionBusy);
    release();
    release();
    expect(existsSync(sessionPaths(root, id).lock)).toBe(false);
    acquireSessionLock(root, id)();
  });

  it("refuses a session another live process holds, with a clear message, and takes it once that one dies", async () => {
    const id = newSession();
    const { child } = await startHelper(["hold", root, id], "locked");
    let error: unknown;
    try {
      acquireSessionLock(root, id);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SessionBusy);
    expect(error).toMatchObject({ id, pid: child.pid });
    expect((error as Error).message).toBe(
      `session ${id} is in use by process ${child.pid}; wait for it to finish or stop it ` +
        `(if it is not dumpdbg, delete ${sessionPaths(root, id).lock})`,
    );
    expect(() => removeSession(root, id)).toThrow(SessionBusy);

    await kill9(child);
    const release = acquireSessionLock(root, id);
    expect(readFileSync(sessionPaths(root, id).lock, "utf8").trim()).toBe(String(process.pid));
    release();
    removeSession(root, id);
  });

  it("takes over a lock whose content is not a pid", () => {
    const id = newSession();
    writeFileSync(sessionPaths(root, id).lock, "");
    acquireSessionLock(root, id)();
  });

  it("takes over a lock left by a process that no longer exists", () => {
    const id = newSession();
    const gone = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" }).stdout.trim();
    writeFileSync(sessionPaths(root, id).lock, `${gone}\n`);
    acquireSessionLock(root, id)();
    expect(readdirSync(join(root, id)).sort()).toEqual(["session.json"]);
  });
});

describe("Transcript", () => {
  it("appends one timestamped JSON line per event, on disk as soon as append returns", () => {
    const id = newSession();
    const transcript = Transcript.open(root, id);
    transcript.append({ type: "command", command: "bt", evidenceId: "E1" });
    const path = sessionPaths(root, id).transcript;
    expect(readFileSync(path, "utf8").split("\n")).toHaveLength(2);
    transcript.append({ type: "chat", role: "user", text: 'why "null"?\nreally' });
    transcript.close();
    const events = readFileSync(path, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events).toEqual([
      { at: expect.any(String), type: "command", command: "bt", evidenceId: "E1" },
      { at: expect.any(String), type: "chat", role: "user", text: 'why "null"?\nreally' },
    ]);
    expect(Date.parse(String(events[0]?.at))).not.toBeNaN();
  });

  it("appends to an existing transcript when the session is taken up again", () => {
    const id = newSession();
    const first = Transcript.open(root, id);
    first.append({ type: "model", tier: "cloud", inputTokens: 10 });
    first.close();
    const second = Transcript.open(root, id);
    second.append({ type: "chat", role: "assistant", text: "a null pointer" });
    second.close();
    expect(readFileSync(sessionPaths(root, id).transcript, "utf8").trimEnd().split("\n")).toHaveLength(2);
  });
});

describe("two analyses at once", () => {
  it("keep to their own sessions", async () => {
    const a = newSession("/dumps/core-a");
    const b = newSession("/dumps/core-b");
    const writers = [
      startHelper(["write", root, a, "120"], "done"),
      startHelper(["write", root, b, "120"], "done"),
    ];
    const [ra, rb] = await Promise.all(writers);
    for (const [id, run] of [
      [a, ra],
      [b, rb],
    ] as const) {
      const store = EvidenceStore.open(sessionPaths(root, id).evidenceDb);
      const writer = run?.child.pid;
      expect(store.list()).toHaveLength(120);
      expect(store.list().every((r) => (r.findings as { writer: number }).writer === writer)).toBe(true);
      expect(store.search(`writer ${writer}`).length).toBeGreaterThan(0);
      store.close();
      const db = new Database(sessionPaths(root, id).evidenceDb, { readonly: true });
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      db.close();
      expect(readFileSync(sessionPaths(root, id).transcript, "utf8").trimEnd().split("\n")).toHaveLength(120);
      expect(existsSync(sessionPaths(root, id).lock)).toBe(false);
    }
  });
});
