/**
 * SIGABRT in Linux minidumps read where none of the files they name exist (the executable and the
 * C library of the machine that crashed): no frame of the abort machinery is named, yet the
 * program aborted itself. Breakpad's record with si_code left 0, decided on what the dump itself
 * holds (the code bytes before the pc and the registers of the tgkill that sent the signal, or the
 * sender the record names), and Crashpad's record (si_code kept, the sender in the parameters).
 * Real crashes of fixture programs, real cores turned into minidumps, read by LLDB.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Crash } from "../../src/report/schema.js";
import { breakpadMinidumpFromCore, type WriterOptions } from "../helpers/breakpad.js";
import { movedAway } from "../helpers/dump-edits.js";
import { runCli } from "../helpers/cli.js";
import { buildCore, culpritLine } from "../helpers/cores.js";
import { crashC } from "../helpers/dumped.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const dir = tempDir("dumpdbg-abort-unnamed-");

/** A worker that kills its own process with SIGABRT when a job overruns its budget, for a core to look at. */
const DEADLINE = `/* A batch worker gives each job a time budget; a job that overruns it is a bug worth a core
 * file, so the worker kills its own process with SIGABRT when the budget is spent. */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

struct job {
    const char *name;
    int steps;
};

static long elapsed_ms(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

static void check_budget(const struct job *job, const struct timespec *started, long budget_ms)
{
    if (elapsed_ms(started) > budget_ms) {
        fprintf(stderr, "job %s overran its %ld ms budget\\n", job->name, budget_ms);
        kill(getpid(), SIGABRT); // CULPRIT
    }
}

static void run_job(const struct job *job, long budget_ms)
{
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    for (int step = 0; step < job->steps; step++) {
        usleep(2000);
        check_budget(job, &started, budget_ms);
    }
}

int main(void)
{
    struct job reindex = { "reindex", 100 };
    run_job(&reindex, 5);
    return 0;
}
`;

/** The folders a fixture's minidump names: the program's own and the system's libraries. */
function namedFolders(exe: string): string[] {
  return [`${path.dirname(exe)}/`, "/usr/lib/", "/lib64/", "/lib/"];
}

/** The fixture's crash as a minidump, and the same minidump where none of its files exist. */
async function minidumps(name: string, core: string, exe: string, options: WriterOptions): Promise<{ here: string; away: string }> {
  const here = path.join(dir, `${name}-${Object.keys(options).join("-")}.dmp`);
  await breakpadMinidumpFromCore(core, exe, here, options);
  const away = here.replace(/\.dmp$/, "-away.dmp");
  writeFileSync(away, movedAway(readFileSync(here), namedFolders(exe)));
  return { here, away };
}

async function triage(...args: string[]): Promise<Crash> {
  const run = await runCli(["triage", ...args, "--json"]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Crash;
}

/** The pid the kernel recorded as the sender on the core: the process itself. */
async function ownPid(core: string, exe: string): Promise<number> {
  const crash = await triage(core, "--exe", exe);
  expect(crash.origin).toMatchObject({ type: "raised" });
  return crash.origin?.sender?.pid ?? -1;
}

describe("Breakpad minidumps of an abort with no si_code, read without the program's files", () => {
  // The same family of crashes: abort(), a failed assertion, the stack protector, _FORTIFY_SOURCE.
  it.each([
    ["abort", "abort"],
    ["assert", "assertion-failure"],
    ["stack-smash", "stack-buffer-overflow"],
    ["fortify", "fortify-failure"],
  ])("%s is an abort the program raised, from the tgkill at the pc (named: %s)", async (name, named) => {
    const built = await buildCore(name);
    const pid = await ownPid(built.core, built.exe);
    const { here, away } = await minidumps(name, built.core, built.exe, { withoutSiCode: true });
    const crash = await triage(away);
    // Nothing names __stack_chk_fail or __assert_fail here: less specific than with the files, never different.
    expect(crash).toMatchObject({ kind: "abort", signal: "SIGABRT", signalCode: null, origin: { type: "raised", sender: null } });
    expect(crash.origin?.evidence).toMatch(new RegExp(`right after \`mov \\$0xea,%eax; syscall\`, a tgkill, whose arguments are the process's own pid ${pid}, its own thread \\d+ and SIGABRT`));
    expect(crash.origin?.evidence).toMatch(/si_code is 0/);
    // What made it abort is not named, so neither is how exploitable it is: a stack smash was among them.
    expect(crash.exploitability?.rating).toBe("unknown");
    // With the files, the stack names what aborted.
    const withFiles = await triage(here, "--exe", built.exe);
    expect(withFiles).toMatchObject({ kind: named, culprit: { line: culpritLine(name) }, origin: { type: "raised" } });
  }, 120_000);

  it("a kill of the process's own pid with SIGABRT is an abort it raised, as the kernel's record on the core says", async () => {
    const { exe, core } = crashC(dir, "deadline", DEADLINE);
    const line = DEADLINE.split("\n").findIndex((l) => l.includes("// CULPRIT")) + 1;
    const onCore = await triage(core, "--exe", exe);
    expect(onCore).toMatchObject({ kind: "abort", signalCode: "SI_USER", culprit: { function: "check_budget", line }, origin: { type: "raised" } });
    const pid = onCore.origin?.sender?.pid;
    expect(pid).toBeGreaterThan(0);
    const { here, away } = await minidumps("deadline", core, exe, { withoutSiCode: true });
    // kill() is no tgkill: the record's word, the sender, decides.
    for (const crash of [await triage(here, "--exe", exe), await triage(away)]) {
      expect(crash).toMatchObject({ kind: "abort", origin: { type: "raised", sender: { pid } } });
      expect(crash.origin?.evidence).toMatch(new RegExp(`the record's sender, pid ${pid}, is the process itself`));
    }
    expect((await triage(here, "--exe", exe)).culprit).toMatchObject({ function: "check_budget", line });
  }, 120_000);
});

describe("Crashpad minidumps of an abort on Linux", () => {
  it("name the process itself as the sender, from the record's parameters, with or without the program's files", async () => {
    const built = await buildCore("abort");
    const pid = await ownPid(built.core, built.exe);
    const { here, away } = await minidumps("abort", built.core, built.exe, { crashpad: true });
    const withFiles = await triage(here, "--exe", built.exe);
    expect(withFiles).toMatchObject({ kind: "abort", signalCode: "SI_TKILL", culprit: { function: "validate_config", line: culpritLine("abort") }, origin: { type: "raised", sender: { pid } } });
    expect(withFiles.exploitability?.reasons.join(" ")).not.toMatch(/another process/);
    expect(await triage(away)).toMatchObject({ kind: "abort", signalCode: "SI_TKILL", origin: { type: "raised", sender: { pid } } });
  }, 120_000);
});
