/**
 * `--pid`: live processes dumped with gcore and read, made at test time: an idle thumbnail service
 * of six threads, the bank's ABBA deadlock (tests/fixtures/programs/deadlock.c), and a process with
 * 400 MB of memory, whose dump takes long enough to interrupt. After each, the process still runs:
 * `kill -0` reaches it and its state is neither stopped nor traced. `--keep-dump` keeps the dump at
 * a new path and refuses one that exists; a pid that runs nothing, another user's process and a
 * Ctrl+C during the dump each end in one line with their exit code, the process left running and
 * no private folder left behind.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { BIN, runCli, startCli } from "../helpers/cli.js";
import { buildProgram, culpritLine } from "../helpers/cores.js";
import { untilReady } from "../helpers/ready.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const THUMBNAILER = String.raw`/* A thumbnail service, idle: four workers wait on the job queue's condition variable for work,
 * a reaper sleeps between sweeps of finished jobs, and main waits on a pipe for a shutdown
 * request. Dumped live, it shows what each thread waits for. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define WORKERS 4

struct job_queue {
    pthread_mutex_t lock;
    pthread_cond_t not_empty;
    int pending;
    int shutting_down;
};

static struct job_queue queue = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
static pthread_barrier_t started;

static void render_thumbnail(int job)
{
    usleep(1000 * (job % 7));
}

static void *worker_main(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&started);
    for (;;) {
        pthread_mutex_lock(&queue.lock);
        while (queue.pending == 0 && !queue.shutting_down)
            pthread_cond_wait(&queue.not_empty, &queue.lock);
        if (queue.shutting_down) {
            pthread_mutex_unlock(&queue.lock);
            return NULL;
        }
        int job = queue.pending--;
        pthread_mutex_unlock(&queue.lock);
        render_thumbnail(job);
    }
}

static void *reaper_main(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&started);
    for (;;)
        sleep(60);
}

int main(void)
{
    pthread_t workers[WORKERS], reaper;
    int shutdown_pipe[2];
    char request;

    if (pipe(shutdown_pipe) != 0)
        return 1;
    pthread_barrier_init(&started, NULL, WORKERS + 2);
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&workers[i], NULL, worker_main, NULL);
    pthread_create(&reaper, NULL, reaper_main, NULL);
    pthread_barrier_wait(&started);
    printf("ready\n");
    fflush(stdout);
    while (read(shutdown_pipe[0], &request, 1) != 1)
        ;
    return 0;
}
`;

/** A cache warmed with 400 MB before it serves: its dump takes long enough to be interrupted. */
const WARM_CACHE = String.raw`#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CACHE_BYTES (400u << 20)

int main(void)
{
    char *cache = malloc(CACHE_BYTES);
    if (cache == NULL)
        return 1;
    memset(cache, 0x5a, CACHE_BYTES);
    printf("ready %d\n", cache[CACHE_BYTES - 1]);
    fflush(stdout);
    for (;;)
        pause();
}
`;

const dirs = tempDirs();
const started: ChildProcess[] = [];

afterAll(() => {
  for (const child of started) child.kill("SIGKILL");
});

function compile(dir: string, name: string, source: string): string {
  const file = path.join(dir, `${name}.c`);
  writeFileSync(file, source);
  const exe = path.join(dir, name);
  execFileSync("gcc", ["-g", "-O0", "-pthread", "-o", exe, file]);
  return exe;
}

/** Starts `exe` and waits for its "ready"; it is killed when the file's tests end. */
async function running(exe: string): Promise<number> {
  const child = spawn(exe, [], { stdio: ["ignore", "pipe", "ignore"] });
  started.push(child);
  await untilReady(child, exe, 20_000);
  return child.pid!;
}

/** Still running: `kill -0` reaches it, and its state is neither stopped (T) nor stopped by a tracer (t), with no tracer attached. */
function expectStillRunning(pid: number): void {
  expect(() => process.kill(pid, 0)).not.toThrow();
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  expect(/^State:\s+(\S)/m.exec(status)?.[1]).toMatch(/^[RSD]$/);
  expect(/^TracerPid:\s+(\d+)/m.exec(status)?.[1]).toBe("0");
}

/** dumpdbg's private folders for live dumps, as they stand now. */
function privateFolders(): string[] {
  return readdirSync(os.tmpdir()).filter((name) => name.startsWith("dumpdbg-pid-"));
}

describe("--pid: a live process dumped and read", () => {
  let dir: string;
  let thumbnailer: number;
  let deadlocked: number;

  beforeAll(async () => {
    dir = dirs("dumpdbg-live-pid-");
    thumbnailer = await running(compile(dir, "thumbnailer", THUMBNAILER));
    deadlocked = await running((await buildProgram("deadlock")).exe);
  });

  it("reads a live multithreaded service as a dump taken on request, and leaves it running", async () => {
    const before = privateFolders();
    const run = await runCli(["triage", "--pid", String(thumbnailer)]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Origin: +dump taken on request, not at a crash/m);
    expect(run.stdout).toMatch(/^Threads: +6 \(4 in \S+/m);
    expect(run.stderr).toMatch(new RegExp(`dumpdbg: dumped process ${thumbnailer} \\(thumbnailer, [\\d.]+ [KM]B\\) and detached; it goes on running`));
    expectStillRunning(thumbnailer);
    expect(privateFolders()).toEqual(before);
  });

  it("finds the deadlock in a live deadlocked process, by triage and by the analysis, and leaves it running", async () => {
    const triage = await runCli(["triage", "--pid", String(deadlocked), "--json"]);
    expect(triage.code, triage.stderr).toBe(0);
    const crash = JSON.parse(triage.stdout);
    expect(crash.kind).toBe("deadlock");
    expect(crash.origin.type).toBe("requested");
    expect(crash.deadlock.cycle.map((edge: { function: string; line: number }) => [edge.function, edge.line])).toEqual([
      ["transfer_funds", culpritLine("deadlock")],
      ["transfer_funds", culpritLine("deadlock")],
    ]);
    expectStillRunning(deadlocked);

    const analysis = await runCli(["analyze", "--pid", String(deadlocked), "--provider", "offline", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(analysis.code, analysis.stderr).toBe(0);
    expect(JSON.parse(analysis.stdout).crash).toMatchObject({ kind: "deadlock", culprit: { function: "transfer_funds" } });
    expect(analysis.stderr).toMatch(new RegExp(`the dump of process ${deadlocked} is removed; --keep-dump PATH keeps it`));
    expectStillRunning(deadlocked);
  });

  it("keeps the dump at --keep-dump's new path, and refuses a path that exists without touching it", async () => {
    const kept = path.join(dir, "thumbnailer.core");
    const run = await runCli(["triage", "--pid", String(thumbnailer), "--keep-dump", kept]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`the dump is kept at ${kept}`);
    const stats = statSync(kept);
    expect(stats.mode & 0o777).toBe(0o600);
    expect(readFileSync(kept).subarray(0, 4).toString("latin1")).toBe("\x7fELF");
    // The kept dump is a core like any other.
    expect((await runCli(["triage", kept])).stdout).toMatch(/^Threads: +6 /m);

    const again = await runCli(["triage", "--pid", String(thumbnailer), "--keep-dump", kept]);
    expect(again.code).toBe(3);
    expect(again.stderr).toBe(`dumpdbg: --keep-dump ${kept} already exists; dumpdbg never overwrites a file: name a new one\n`);
    expect(statSync(kept).mtimeMs).toBe(stats.mtimeMs);
    expectStillRunning(thumbnailer);
  });

  it("says in one line that a pid runs nothing (exit 3), and what is wrong with the flags (exit 2)", async () => {
    const ended = spawnSync("true");
    const gone = await runCli(["triage", "--pid", String(ended.pid)]);
    expect(gone.code).toBe(3);
    expect(gone.stderr).toBe(`dumpdbg: no process ${ended.pid} is running here (or it is in another PID namespace): check the pid with ps\n`);
    const cases: [string[], RegExp][] = [
      [["triage"], /^dumpdbg: name the dump to read, --coredump \[pid\|name\] for systemd-coredump's newest core, or --pid PID to dump a live process\n$/],
      [["triage", "--coredump", "--pid", String(thumbnailer)], /^dumpdbg: name one of a dump, --coredump or --pid, not two\n$/],
      [["triage", "core", "--pid", String(thumbnailer)], /^dumpdbg: give a dump or --pid \d+, not both\n$/],
      [["analyze", "core", "--keep-dump", "kept.core"], /^dumpdbg: --keep-dump keeps the dump --pid takes of a live process; give --pid PID with it\n$/],
      [["triage", "--pid", "0"], /^dumpdbg: --pid must be a whole number from 1 to 4194304, got "0"\n$/],
    ];
    for (const [args, said] of cases) {
      const run = await runCli(args);
      expect([run.code, run.stderr], args.join(" ")).toEqual([2, expect.stringMatching(said)]);
    }
  });

  it.skipIf(process.geteuid?.() !== 0 || spawnSync("setpriv", ["--version"]).status !== 0)("refuses another user's process, saying what to change (exit 4)", async () => {
    const run = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, BIN, "triage", "--pid", String(thumbnailer)], { encoding: "utf8", env: { ...process.env, HOME: dir, XDG_CACHE_HOME: path.join(dir, "nobody-cache") } });
    expect(run.status).toBe(4);
    expect(run.stderr).toBe(`dumpdbg: process ${thumbnailer} (thumbnailer) runs as uid 0, and dumpdbg as uid 65534: only its own user or root may attach to it; run dumpdbg as that user (sudo -u) or as root (sudo)\n`);
    expectStillRunning(thumbnailer);
  });

  it("leaves the process running and no dump behind when dumpdbg is interrupted while gcore writes the dump", async () => {
    const cache = await running(compile(dir, "warm-cache", WARM_CACHE));
    const before = privateFolders();
    const cli = startCli(["triage", "--pid", String(cache)]);
    await cli.waitFor(/dumping process \d+ \(warm-cache\) with gcore/);
    // Interrupted once gcore holds the process.
    const deadline = Date.now() + 20_000;
    while (!/^TracerPid:\s+[1-9]/m.test(readFileSync(`/proc/${cache}/status`, "utf8"))) {
      if (Date.now() > deadline) throw new Error("gcore never attached");
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    cli.child.kill("SIGINT");
    const exited = await cli.exited;
    expect(exited.code).toBe(130);
    expect(cli.stderr()).toMatch(/dumpdbg: interrupted\n$/);
    expectStillRunning(cache);
    expect(privateFolders()).toEqual(before);
  });
});
