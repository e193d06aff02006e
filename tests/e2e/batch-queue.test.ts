/**
 * `dumpdbg batch --queue` with a real redis-server and real `dumpdbg worker` processes: the same
 * grouping as a batch on one machine, analyses done by the workers, a job whose worker is killed
 * taken by another, and a dump that kills two workers reported as an error row.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCli, type Running } from "../helpers/cli.js";
import { bugFolder, expectGroupedByBug } from "../helpers/bug-folder.js";
import { buildCore } from "../helpers/cores.js";
import { startRedis, type RedisServer } from "../helpers/redis.js";


let redis: RedisServer;
const workers: Running[] = [];
const root = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-queue-"));

beforeAll(async () => {
  redis = await startRedis(root);
});

/** Ends every worker a test started, so none takes the next test's dumps. */
async function stopWorkers(): Promise<void> {
  for (const worker of workers) worker.child.kill("SIGKILL");
  await Promise.all(workers.map((worker) => worker.exited));
  workers.length = 0;
}

afterEach(stopWorkers);

afterAll(async () => {
  await stopWorkers();
  await redis?.stop();
  rmSync(root, { recursive: true, force: true });
});

function worker(name: string, extra: string[] = [], env: Record<string, string> = {}): Running {
  const running = startCli(["worker", "--queue", redis.url, "--jobs", "1", "--stall-seconds", "2", "--out", path.join(root, `${name}-reports`), "--sessions-dir", path.join(root, `${name}-sessions`), ...extra], { env });
  workers.push(running);
  return running;
}

/** Lines a worker logged for dumps it finished, as [verb, dump]. */
function finished(running: Running): string[] {
  return [...running.stderr().matchAll(/^dumpdbg worker: (triaged|analysed|failed) (\S+):/gm)].map((m) => `${m[1]} ${m[2]}`);
}

describe("dumpdbg batch --queue", () => {
  it("groups a folder exactly by bug with two workers over Redis, and they analyse each bug once", async () => {
    const dir = path.join(root, "folder");
    const { dumps, placed } = await bugFolder(path.join(dir, "dumps"), { strays: "notes.txt" });

    const first = worker("first");
    const second = worker("second");
    await Promise.all([first.waitFor(/waiting for dumps on redis:\/\/127\.0\.0\.1:\d+/), second.waitFor(/waiting for dumps/)]);
    const args = ["batch", dumps, "--queue", redis.url, "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")];
    const result = await runCli(args);
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout);
    expectGroupedByBug(doc.groups, placed);
    expect(doc.errors).toEqual([{ dump: path.join(dumps, "cut.core"), error: expect.stringMatching(/is truncated/) }]);
    expect(doc.skipped).toEqual([{ path: path.join(dumps, "notes.txt"), reason: "not a crash dump" }]);
    // Both workers took dumps, and every dump was triaged exactly once.
    const triaged = [...finished(first), ...finished(second)].filter((line) => line.startsWith("triaged "));
    expect(finished(first).length).toBeGreaterThan(0);
    expect(finished(second).length).toBeGreaterThan(0);
    expect(triaged.map((line) => line.slice("triaged ".length)).sort()).toEqual([...placed.keys()].sort());

    // --analyze: the workers analyse one representative per bug; the batch links their reports.
    const analysed = await runCli([...args, "--analyze"]);
    expect(analysed.code, analysed.stderr).toBe(0);
    const withAnalyses = JSON.parse(analysed.stdout);
    expect(withAnalyses.groups.map((g: { members: string[] }) => g.members)).toEqual(doc.groups.map((g: { members: string[] }) => g.members));
    for (const group of withAnalyses.groups) {
      expect(group.analysis).toMatch(/-reports\/[^/]+\.md$/);
      const report = readFileSync(group.analysis, "utf8");
      expect(report).toMatch(/^# \S/m);
      expect(report).toContain(`\`${group.culprit.function}\``);
    }
    const analyses = [...finished(first), ...finished(second)].filter((line) => line.startsWith("analysed "));
    expect(analyses.map((line) => line.slice("analysed ".length)).sort()).toEqual(withAnalyses.groups.map((g: { representative: string }) => g.representative).sort());

    // Stopped workers leave the queue cleanly.
    first.child.kill("SIGTERM");
    second.child.kill("SIGTERM");
    expect((await first.exited).code).toBe(0);
    expect((await second.exited).code).toBe(0);
    expect(first.stderr()).toMatch(/dumpdbg worker: stopped$/m);
  }, 300_000);

  it("gives the dump of a worker that died to another worker, and reports a dump that kills two workers as an error", async () => {
    const dir = path.join(root, "deaths");
    const dumps = path.join(dir, "dumps");
    mkdirSync(dumps, { recursive: true });
    const [good, other] = await Promise.all([buildCore("null-deref"), buildCore("div-zero")]);
    if (!good || !other) throw new Error("no cores");
    // Copies, not links: the debugger sees these names, and the stand-in below acts on them.
    copyFileSync(good.core, path.join(dumps, "once.core"));
    copyFileSync(good.core, path.join(dumps, "poison.core"));
    symlinkSync(other.core, path.join(dumps, "plain.core"));
    // A gdb in front of the real one that kills the worker which started it: always for poison.core,
    // and the first time only for once.core (as an out-of-memory kill or a crash would).
    const stand = path.join(dir, "gdb-that-kills");
    writeFileSync(
      stand,
      `#!/usr/bin/env python3
import os, signal, subprocess, sys
marker = ${JSON.stringify(path.join(dir, "once-killed"))}
gdb = subprocess.Popen(["gdb"] + sys.argv[1:], stdin=subprocess.PIPE)
for line in sys.stdin.buffer:
    deadly = b"poison.core" in line or (b"once.core" in line and not os.path.exists(marker))
    if deadly:
        if b"once.core" in line:
            open(marker, "w").close()
        gdb.kill()
        os.kill(os.getppid(), signal.SIGKILL)
        sys.exit(1)
    gdb.stdin.write(line)
    gdb.stdin.flush()
gdb.stdin.close()
sys.exit(gdb.wait())
`,
    );
    chmodSync(stand, 0o755);
    // Each worker that dies is started again, as a service manager would.
    const crews: Running[] = [];
    let stopping = false;
    const keep = (name: string) => {
      const running = worker(`${name}-${crews.length}`, ["--gdb", stand]);
      crews.push(running);
      void running.exited.then(({ signal }) => {
        if (!stopping && signal === "SIGKILL") keep(name);
      });
    };
    keep("a");
    keep("b");
    await Promise.all(crews.map((crew) => crew.waitFor(/waiting for dumps/)));

    const result = await runCli(["batch", dumps, "--queue", redis.url, "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    stopping = true;
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(doc.errors).toEqual([{ dump: path.join(dumps, "poison.core"), error: expect.stringMatching(/a worker died while reading this dump, twice/) }]);
    const members = doc.groups.flatMap((g: { members: string[] }) => g.members).sort();
    expect(members).toEqual([path.join(dumps, "once.core"), path.join(dumps, "plain.core")]);
    expect(existsSync(path.join(dir, "once-killed"))).toBe(true);
    // Three workers died: one on once.core, two on poison.core; once.core was then triaged by another.
    expect(crews.length).toBe(5);
    const lines = crews.flatMap(finished);
    expect(lines).toContain(`triaged ${path.join(dumps, "once.core")}`);
    expect(lines).toContain(`triaged ${path.join(dumps, "plain.core")}`);
  }, 300_000);

  it("a worker keeps one gdb for the dumps it triages, one after another", async () => {
    const dir = path.join(root, "kept");
    const { dumps, placed } = await bugFolder(path.join(dir, "dumps"), { bugs: ["null-deref", "div-zero"] });
    // A gdb that notes each start of itself (exec keeps the pid).
    const starts = path.join(dir, "gdb-starts");
    const gdb = path.join(dir, "gdb");
    writeFileSync(gdb, `#!/bin/sh\necho $$ >> ${JSON.stringify(starts)}\nexec gdb "$@"\n`);
    chmodSync(gdb, 0o755);
    const only = worker("kept", ["--gdb", gdb]);
    await only.waitFor(/waiting for dumps/);
    const result = await runCli(["batch", dumps, "--queue", redis.url, "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(result.code, result.stderr).toBe(0);
    expectGroupedByBug(JSON.parse(result.stdout).groups, placed);
    expect(finished(only)).toHaveLength(4);
    expect(readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(1);
  }, 300_000);

  it("stops on Ctrl+C, takes back the dumps no worker started, and a rerun goes on without triaging any dump twice", async () => {
    const dir = path.join(root, "stop");
    const { dumps } = await bugFolder(path.join(dir, "dumps"));
    const only = worker("only");
    await only.waitFor(/waiting for dumps/);
    const args = ["batch", dumps, "--queue", redis.url, "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")];
    const stopped = await runCli(args, {
      onSpawn(child) {
        let seen = "";
        let sent = false;
        child.stderr?.on("data", (chunk: Buffer) => {
          seen += chunk.toString("utf8");
          if (!sent && /batch: 2\/10 dumps/.test(seen)) {
            sent = true;
            child.kill("SIGINT");
          }
        });
      },
    });
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toMatch(/interrupted: \d+ dumps not triaged yet; run the same batch again to go on/);
    expect(stopped.stderr).not.toMatch(/MaxListeners/);
    const resumed = await runCli(args);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/[2-9] dumps were triaged by an earlier batch and reused/);
    expect(resumed.stdout).toMatch(/^5 bugs in 10 dumps/);
    const triaged = finished(only).filter((line) => line.startsWith("triaged "));
    expect(new Set(triaged).size).toBe(triaged.length);
    expect(triaged).toHaveLength(10);
  }, 300_000);

  it("says in one line when the queue cannot be reached or its address is wrong", async () => {
    const dir = path.join(root, "unreachable");
    mkdirSync(dir, { recursive: true });
    const core = await buildCore("null-deref");
    const bad = await runCli(["batch", core.core, "--queue", "http://127.0.0.1:1", "--out", path.join(dir, "r"), "--sessions-dir", path.join(dir, "s")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^dumpdbg: --queue must be a redis:\/\/HOST:PORT address, got "http:\/\/127\.0\.0\.1:1"$/m);
    const { freePort } = await import("../helpers/redis.js");
    const nobody = `redis://127.0.0.1:${await freePort()}`;
    const down = await runCli(["worker", "--queue", nobody, "--stall-seconds", "2"]);
    expect(down.code).toBe(3);
    expect(down.stderr.trim().split("\n")).toEqual([`dumpdbg: cannot reach the queue at ${nobody} (no answer in 10 s); is redis-server running there?`]);
  }, 60_000);
});
