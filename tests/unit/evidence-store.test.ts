import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { acquireSessionLock, createSession, sessionPaths } from "../../src/evidence/sessions.js";
import { EvidenceNotFound, EvidenceStore, type EvidenceInput } from "../../src/evidence/store.js";

const THREADS = 1000;

/** N workers blocked on one mutex while main dereferences null: a hung-and-crashed server in miniature. */
const PROGRAM = `
#include <pthread.h>
#include <stdio.h>
static pthread_barrier_t ready;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static void *worker(void *arg) {
  long id = (long)arg;
  char name[32];
  snprintf(name, sizeof name, "worker-%ld", id);
  pthread_barrier_wait(&ready);
  pthread_mutex_lock(&gate);
  pthread_mutex_unlock(&gate);
  return name[0] ? NULL : arg;
}
int main(void) {
  static pthread_t threads[N];
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_barrier_init(&ready, NULL, N + 1);
  pthread_mutex_lock(&gate);
  for (long i = 0; i < N; i++) pthread_create(&threads[i], &attr, worker, (void *)i);
  pthread_barrier_wait(&ready);
  int *volatile config = NULL;
  return *config;
}
`;

const KILL_WRITER = join(import.meta.dirname, "../helpers/kill-writer.mjs");

let work: string;
/** From the 1,000-thread core. */
let btFull: string;
/** From a 3-thread core of the same program: outputs of the usual, small size. */
let bt: string;
let infoThreads: string;

/** Builds the program with `threads` workers and makes its core; returns the name of both. */
function buildCore(threads: number): string {
  const name = `prog-${threads}`;
  execFileSync("gcc", ["-g", "-O0", "-pthread", `-DN=${threads}`, "-o", name, "prog.c"], { cwd: work });
  execFileSync("gdb", ["-nx", "-batch", "-ex", "run", "-ex", `generate-core-file ${name}.core`, `./${name}`], {
    cwd: work,
    stdio: "ignore",
  });
  return name;
}

/** What `command` prints, without the banner gdb prints while it loads the core. */
function gdb(name: string, command: string): string {
  const args = ["-nx", "-batch", "-ex", "echo @@@\\n", "-ex", command, `./${name}`, `${name}.core`];
  const out = execFileSync("gdb", args, { cwd: work, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  return out.slice(out.indexOf("@@@\n") + 4);
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "dumpdbg-evidence-"));
  writeFileSync(join(work, "prog.c"), PROGRAM);
  btFull = gdb(buildCore(THREADS), "thread apply all bt full");
  const small = buildCore(3);
  bt = gdb(small, "bt");
  infoThreads = gdb(small, "info threads");
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

let dir: string;
let store: EvidenceStore | null = null;

function openStore(options?: Parameters<typeof EvidenceStore.open>[1]): EvidenceStore {
  store = EvidenceStore.open(join(dir, "evidence.db"), options);
  return store;
}

function evidence(overrides: Partial<EvidenceInput>): EvidenceInput {
  return {
    command: "bt",
    backend: "gdb",
    context: { thread: 1, frame: 0 },
    output: bt,
    ok: true,
    summary: "crashing thread's backtrace",
    findings: null,
    ms: 12,
    source: "agent",
    ...overrides,
  };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "dumpdbg-store-"));
});

afterEach(() => {
  store?.close();
  store = null;
  rmSync(dir, { recursive: true, force: true });
});

describe("EvidenceStore", () => {
  it("stores a 1,000-thread `thread apply all bt full` in a file, chunked and searchable", () => {
    expect(btFull.match(/^Thread \d+ /gm)).toHaveLength(THREADS + 1);
    const s = openStore();
    const record = s.add(
      evidence({ command: "thread apply all bt full", context: { thread: null, frame: null }, output: btFull }),
    );

    expect(record.id).toBe("E1");
    expect(record.bytes).toBe(Buffer.byteLength(btFull));
    expect(record.lines).toBe(btFull.split("\n").length - 1);
    expect(record.path).toBe(join(dir, "evidence", "E1.txt"));
    expect(readFileSync(join(dir, "evidence", "E1.txt"), "utf8")).toBe(btFull);
    expect(btFull.startsWith(record.head)).toBe(true);
    expect(btFull.endsWith(record.tail)).toBe(true);
    expect(record.head.length + record.tail.length).toBeLessThan(5000);
    expect(s.output("E1")).toBe(btFull);

    const chunks = s.chunks("E1");
    expect(chunks.length).toBeGreaterThan(btFull.length / (16 * 1024));
    expect(chunks.map((c) => s.chunkText("E1", c.n)).join("")).toBe(btFull);
    for (const c of chunks) {
      expect(c.endByte - c.startByte).toBeLessThanOrEqual(16 * 1024);
      expect(s.chunkText("E1", c.n).split("\n")[0]).toBe(btFull.split("\n")[c.startLine - 1]);
    }

    const [hit] = s.search("worker-998");
    expect(hit).toMatchObject({ evidenceId: "E1", command: "thread apply all bt full" });
    expect(hit?.snippet).toContain('name = "worker-998"');
    expect(btFull.split("\n")[(hit?.line ?? 0) - 1]).toContain("worker-998");
    const chunk = chunks[hit?.chunk ?? -1];
    expect(hit?.line).toBeGreaterThanOrEqual(chunk?.startLine ?? Infinity);
    expect(hit?.line).toBeLessThanOrEqual(chunk?.endLine ?? -Infinity);

    const raw = new Database(join(dir, "evidence.db"), { readonly: true });
    expect(raw.prepare("SELECT count(*) FROM evidence WHERE output IS NOT NULL").pluck().get()).toBe(0);
    raw.close();
  });

  it("keeps small outputs in the row, with no file", () => {
    const s = openStore();
    const record = s.add(evidence({ output: infoThreads, command: "info threads" }));
    expect(record).toMatchObject({ id: "E1", path: null, head: infoThreads, tail: "" });
    expect(s.output("E1")).toBe(infoThreads);
    expect(s.chunks("E1")).toHaveLength(Math.ceil(Buffer.byteLength(infoThreads) / (16 * 1024)) || 1);
    expect(readdirSync(dir)).not.toContain("evidence");
  });

  it("moves outputs over the configured limit to files, and chunks at the configured size", () => {
    const s = openStore({ inlineLimit: 100, chunkSize: 128 });
    const small = s.add(evidence({ output: "No stack.\n" }));
    const big = s.add(evidence({ command: "info threads", output: infoThreads }));
    expect(small.path).toBeNull();
    expect(big.path).toBe(join(dir, "evidence", "E2.txt"));
    expect(s.chunks("E2").length).toBeGreaterThan(2);
    expect(s.chunks("E2").every((c) => c.endByte - c.startByte <= 128)).toBe(true);
    expect(s.output("E2")).toBe(infoThreads);
  });

  it("numbers evidence E1, E2, ... and keeps every field", () => {
    const s = openStore();
    const findings = { crashingThread: 1, signal: "SIGSEGV", frames: ["main"] };
    s.add(evidence({ command: "info threads", output: infoThreads }));
    const record = s.add(
      evidence({
        ok: false,
        errorType: "debugger_error",
        findings,
        ms: 3.5,
        source: "chat",
        context: { thread: 2, frame: null },
      }),
    );
    expect(record).toMatchObject({
      id: "E2",
      command: "bt",
      backend: "gdb",
      context: { thread: 2, frame: null },
      ok: false,
      errorType: "debugger_error",
      summary: "crashing thread's backtrace",
      findings,
      bytes: Buffer.byteLength(bt),
      ms: 3.5,
      source: "chat",
    });
    expect(Date.parse(record.createdAt)).not.toBeNaN();
    expect(s.get("E2")).toEqual(record);
    expect(s.list().map((r) => r.id)).toEqual(["E1", "E2"]);
    expect(s.get("E3")).toBeNull();
    expect(s.get("e1")).toBeNull();
    expect(s.get("../E1")).toBeNull();
  });

  it("serves the same command in the same thread and frame from the store", () => {
    const s = openStore();
    s.add(evidence({ command: "info  locals", context: { thread: 2, frame: 1 }, output: "id = 1\n" }));
    const latest = s.add(evidence({ command: "info locals", context: { thread: 2, frame: 1 }, output: "id = 2\n" }));
    s.add(evidence({ command: "bt", context: { thread: null, frame: null } }));

    expect(s.findCached("  info   locals ", "gdb", { thread: 2, frame: 1 })?.id).toBe(latest.id);
    expect(s.findCached("info locals", "gdb", { thread: 2, frame: 2 })).toBeNull();
    expect(s.findCached("info locals", "gdb", { thread: 3, frame: 1 })).toBeNull();
    expect(s.findCached("info locals", "lldb", { thread: 2, frame: 1 })).toBeNull();
    expect(s.findCached("bt", "gdb", { thread: null, frame: null })?.id).toBe("E3");
    expect(s.findCached("bt", "gdb", { thread: 1, frame: null })).toBeNull();
  });

  it("serves a debugger's error again, but not a timeout, a dead session or a refusal", () => {
    const s = openStore();
    const context = { thread: 1, frame: 0 };
    const noSymbol = 'No symbol "nope" in current context.\n';
    s.add(evidence({ command: "print nope", ok: false, errorType: "debugger_error", output: noSymbol }));
    s.add(evidence({ command: "x/64gx $sp", ok: false, errorType: "timeout", output: "" }));
    s.add(evidence({ command: "info frame", ok: false, errorType: "session_dead", output: "" }));
    s.add(evidence({ command: "shell ls", ok: false, errorType: "not_allowed", output: "" }));
    expect(s.findCached("print nope", "gdb", context)?.id).toBe("E1");
    expect(s.findCached("x/64gx $sp", "gdb", context)).toBeNull();
    expect(s.findCached("info frame", "gdb", context)).toBeNull();
    expect(s.findCached("shell ls", "gdb", context)).toBeNull();
  });

  it("finds evidence by its command, summary and findings, best match first", () => {
    const s = openStore();
    s.add(evidence({ command: "info threads", output: infoThreads, summary: "4 threads, most waiting on a futex" }));
    s.add(
      evidence({
        command: "info registers",
        output: "rip 0x401136\n",
        summary: "registers at the fault",
        findings: { fault: "nullpage" },
      }),
    );
    s.add(evidence({ command: "bt", output: bt, summary: "main dereferences config" }));

    expect(s.search("registers")[0]).toMatchObject({ evidenceId: "E2", line: null, snippet: "registers at the fault" });
    expect(s.search("nullpage")[0]?.evidenceId).toBe("E2");
    const [first] = s.search("config main");
    expect(first?.evidenceId).toBe("E3");
    expect(first?.score).toBeGreaterThan(0);
    expect(s.search("futex", 1)).toHaveLength(1);
    expect(s.search("zebra")).toEqual([]);
  });

  it("takes any text as a search query without an FTS syntax error", () => {
    const s = openStore();
    s.add(evidence({ command: "thread apply all bt", output: bt }));
    const nasty = [
      "",
      "   ",
      '"',
      '"unterminated',
      "a AND",
      "OR OR",
      "NOT",
      "NEAR(main",
      "*",
      "main*",
      "-main",
      "^main",
      "col:main",
      "{command summary}: main",
      "(((",
      "main) OR (",
      "0x0000555555555243",
      "*config = NULL; 'quote' \\ back\\slash",
      "\u0000\u0001\u0007",
      "🧵 thread émoji",
      "x".repeat(10_000),
      Array.from({ length: 500 }, (_, i) => `w${i}`).join(" "),
    ];
    for (const query of nasty) expect(() => s.search(query), query.slice(0, 40)).not.toThrow();
    expect(s.search('main) OR ("')[0]?.evidenceId).toBe("E1");
    expect(s.search("*main(")[0]?.evidenceId).toBe("E1");
  });

  it("keeps the analysis of each chunk", () => {
    const s = openStore({ chunkSize: 128 });
    s.add(evidence({ output: infoThreads }));
    const analysis = { frames: 2, culprit: "main", notes: ["reads through a null pointer"] };
    s.setChunkAnalysis("E1", 1, analysis);
    expect(s.chunks("E1").map((c) => c.analysis)).toEqual(s.chunks("E1").map((c) => (c.n === 1 ? analysis : null)));
    expect(() => s.setChunkAnalysis("E1", 999, analysis)).toThrow(/no chunk 999/);
  });

  it("says which id it does not have", () => {
    const s = openStore();
    expect(() => s.output("E7")).toThrow(EvidenceNotFound);
    expect(() => s.chunks("E7")).toThrow("no evidence E7 in this session");
    expect(() => s.chunkText("nope", 0)).toThrow(EvidenceNotFound);
    expect(() => s.setChunkAnalysis("E0", 0, {})).toThrow(EvidenceNotFound);
  });

  it("reopens with everything in place and goes on numbering", () => {
    const first = openStore({ inlineLimit: 1024 });
    first.add(evidence({ output: infoThreads }));
    first.add(evidence({ command: "info registers", output: "rip 0x401136\n" }));
    first.close();
    store = null;
    const second = openStore({ inlineLimit: 1024 });
    expect(second.list().map((r) => r.command)).toEqual(["bt", "info registers"]);
    expect(second.output("E1")).toBe(infoThreads);
    expect(second.add(evidence({})).id).toBe("E3");
    expect(second.search("registers")[0]?.evidenceId).toBe("E2");
  });

  it("shares its database file with LangGraph's checkpointer", async () => {
    const s = openStore();
    s.add(evidence({}));
    const saver = SqliteSaver.fromConnString(join(dir, "evidence.db"));
    const checkpoint: Parameters<SqliteSaver["put"]>[1] = {
      v: 4,
      id: "1f0a0000-0000-6000-8000-000000000001",
      ts: new Date().toISOString(),
      channel_values: { evidenceIds: ["E1"] },
      channel_versions: {},
      versions_seen: {},
    };
    const config = { configurable: { thread_id: "analysis", checkpoint_ns: "" } };
    await saver.put(config, checkpoint, { source: "loop", step: 1, parents: {} });
    s.add(evidence({ command: "info threads", output: infoThreads }));
    expect((await saver.getTuple(config))?.checkpoint.channel_values).toEqual({ evidenceIds: ["E1"] });
    saver.db.close();
    expect(s.list().map((r) => r.id)).toEqual(["E1", "E2"]);
  });

  it("refuses nonsense options", () => {
    expect(() => openStore({ chunkSize: 2 })).toThrow(RangeError);
    expect(() => openStore({ inlineLimit: -1 })).toThrow(RangeError);
  });

  it("keeps every committed row when the writer is killed with SIGKILL mid-write", async () => {
    const root = join(dir, "sessions");
    const { id } = createSession(root, {
      dump: "core",
      executable: null,
      debugger: { backend: "gdb", path: "gdb", version: null },
      issue: null,
    });
    const child = spawn(process.execPath, [KILL_WRITER, "write", root, id, "forever"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const committed = new Map<string, string>();
    for await (const line of createInterface({ input: child.stdout })) {
      const [, evidenceId, sha] = line.split(" ");
      if (evidenceId && sha) committed.set(evidenceId, sha);
      if (committed.size === 150) child.kill("SIGKILL");
    }
    expect(await exited).toBeNull();
    expect(child.signalCode).toBe("SIGKILL");

    const raw = new Database(sessionPaths(root, id).evidenceDb);
    expect(raw.pragma("integrity_check", { simple: true })).toBe("ok");
    raw.exec("INSERT INTO evidence_fts (evidence_fts) VALUES ('integrity-check')");
    raw.close();

    const reopened = EvidenceStore.open(sessionPaths(root, id).evidenceDb);
    store = reopened;
    for (const [evidenceId, sha] of committed) {
      expect(createHash("sha256").update(reopened.output(evidenceId)).digest("hex"), evidenceId).toBe(sha);
    }
    expect(reopened.list().length).toBeGreaterThanOrEqual(committed.size);
    expect(reopened.list().some((r) => r.path !== null)).toBe(true);
    const next = reopened.add(evidence({})).id;
    expect(Number(next.slice(1))).toBeGreaterThan(committed.size);
    // The dead writer's lock is stale: the session can be taken up again.
    acquireSessionLock(root, id)();
  });
});

describe("commandKey", () => {
  it("treats spacing as insignificant except inside string and character literals", async () => {
    const { commandKey } = await import("../../src/evidence/store.js");
    expect(commandKey("  info   registers\trip ")).toBe("info registers rip");
    expect(commandKey('p  "a  b"')).toBe('p "a  b"');
    expect(commandKey('p "a  b"')).not.toBe(commandKey('p "a b"'));
    expect(commandKey("p  ' '  ==  c")).toBe("p ' ' == c");
    expect(commandKey('p "say \\"hi  there\\""  + 1')).toBe('p "say \\"hi  there\\"" + 1');
  });
});
