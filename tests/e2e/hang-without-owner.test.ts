/**
 * A hang whose waits record no owner (issue: real-world accuracy, class 6): workers blocked on a
 * semaphore nobody posts, main joining them. "Hung: all N threads blocked waiting", with what each
 * waits on, not "no crash found". A real program, dumped alive by gdb attaching to it.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-hang-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SOURCE = `/* A job queue whose producer never came: the workers wait for jobs, main waits for the workers. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

static sem_t jobs_ready;

static void *worker(void *arg)
{
    (void)arg;
    sem_wait(&jobs_ready);
    return NULL;
}

int main(void)
{
    pthread_t threads[3];
    sem_init(&jobs_ready, 0, 0);
    for (int i = 0; i < 3; i++)
        pthread_create(&threads[i], NULL, worker, NULL);
    printf("ready\\n");
    fflush(stdout);
    for (int i = 0; i < 3; i++)
        pthread_join(threads[i], NULL);
    return 0;
}
`;

let exe: string;
let core: string;
beforeAll(async () => {
  const source = path.join(dir, "queue.c");
  exe = path.join(dir, "queue");
  core = path.join(dir, "queue.core");
  writeFileSync(source, SOURCE);
  execFileSync("gcc", ["-g", "-O0", "-pthread", "-o", exe, source]);
  const child = spawn(exe, [], { stdio: ["ignore", "pipe", "ignore"] });
  try {
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    // The workers reach sem_wait right after "ready"; give them a moment to block.
    await new Promise((resolve) => setTimeout(resolve, 300));
    execFileSync("gdb", ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-p", String(child.pid), "-ex", `generate-core-file ${core}`], { stdio: "ignore" });
  } finally {
    child.kill("SIGKILL");
  }
}, 60_000);

describe("a hang without owners", () => {
  it("is every thread blocked waiting, with what each waits on", async () => {
    const run = await runCli(["triage", core, "--exe", exe, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout);
    expect(crash.kind).toBe("hang");
    expect(crash.origin).toMatchObject({ type: "requested", sender: null });
    expect(crash.message).toBe("hung: all 4 threads are blocked waiting: 3 on a semaphore (in worker), 1 for another thread to finish (in main); no wait records an owner, so who should have woken them is not in the dump");
  }, 60_000);

  it("the analysis titles it a hang and says what should have woken the threads", async () => {
    const run = await runCli(["analyze", core, "--exe", exe, "--provider", "offline", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions"), "--quiet"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split("\n")[0]).toBe("Hang: every thread is blocked waiting, with no lock cycle");
    const json = await runCli(["analyze", core, "--exe", exe, "--provider", "offline", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    const report = JSON.parse(json.stdout);
    expect(report.conclusion.summary).toMatch(/^The process hung: all 4 threads are blocked waiting: 3 on a semaphore \(in worker\), 1 for another thread to finish \(in main\) \(E\d+\)\./);
    expect(report.conclusion.recommendations[0]).toMatch(/sem_post/);
    // What should have woken them, read from each thread's wait: the workers' semaphore and main's join.
    expect(report.conclusion.rootCause).toMatch(/the `sem_post` the waiters need never came; a joined thread never finished, because it waits itself/);
    expect(report.hypotheses[0].status).toBe("confirmed");
  }, 120_000);
});
