/**
 * Linux minidumps whose crash handler recorded no si_code (exception_flags 0, as many Breakpad and
 * Crashpad clients in the field leave it): the record alone reads "sent with kill" for every one
 * of them. Real crashes of real programs, dumped, written in Breakpad's layout with the flags left
 * 0, read by LLDB: dumpdbg must give the verdict the kernel's own record gives on the core (kind,
 * culprit, line), say which evidence decided, and still call a real kill sent.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Crash } from "../../src/report/schema.js";
import { breakpadMinidumpFromCore } from "../helpers/breakpad.js";
import { runCli } from "../helpers/cli.js";
import { buildCore, culpritLine } from "../helpers/cores.js";
import { coreAtCrash } from "../helpers/dumped.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const dir = tempDir("dumpdbg-no-si-code-");

/** A plugin host jumps to an entry point that is a heap buffer: the pc leaves every module. */
const HEAP_JUMP = `/* A plugin host calls the entry point its plugin table gives; a table filled from a scratch
 * buffer holds a data pointer, and the host jumps into the heap. */
#include <stdlib.h>
#include <string.h>

typedef int (*entry_fn)(int);

struct plugin {
    const char *name;
    entry_fn entry;
};

static int run_plugin(const struct plugin *plugin, int arg)
{
    return plugin->entry(arg); // CULPRIT
}

int main(void)
{
    unsigned char *scratch = malloc(64);
    memset(scratch, 0xc3, 64);
    struct plugin resize = { "resize", (entry_fn)scratch };
    return run_plugin(&resize, 3);
}
`;

/** A supervisor whose watchdog child really sends it SIGSEGV with kill(). */
const WATCHDOG = `/* A supervisor serves jobs; the watchdog it forked sends it SIGSEGV. */
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

static volatile int jobs_done;

static void serve_forever(void)
{
    for (;;) {
        jobs_done++; // CULPRIT
        usleep(1000);
    }
}

int main(void)
{
    pid_t supervisor = getpid();
    if (fork() == 0) {
        usleep(200 * 1000);
        kill(supervisor, SIGSEGV);
        _exit(0);
    }
    serve_forever();
    return 0;
}
`;

interface Case {
  kind: string;
  culprit: string;
  origin: "fault" | "raised" | "sent";
  /** What the origin's evidence must say decided it. */
  decided: RegExp;
}

/** Fixture programs: the same crash with and without si_code must read the same. */
const FIXTURES: Record<string, Case> = {
  "null-write": { kind: "null-dereference", culprit: "cache_store", origin: "fault", decided: /writes 0x[0-9a-f]+, the very address the record holds/ },
  "div-zero": { kind: "division-by-zero", culprit: "average_latency", origin: "fault", decided: /`idiv[^`]*`, a division/ },
  "bad-jump": { kind: "bad-jump", culprit: "dispatch_command", origin: "fault", decided: /the pc 0x0 is no code/ },
  "write-rodata": { kind: "invalid-memory-access", culprit: "normalize_header_name", origin: "fault", decided: /writes 0x[0-9a-f]+, the very address the record holds/ },
  "stack-smash": { kind: "stack-buffer-overflow", culprit: "parse_login", origin: "raised", decided: /goes through `__stack_chk_fail`/ },
};

/** Held out until the rules above were written: looked at last. */
const HELD_OUT: Record<string, Case> = {
  "illegal-instruction": { kind: "illegal-instruction", culprit: "decode_message", origin: "fault", decided: /`ud2`, an undefined instruction/ },
  "index-out-of-bounds": { kind: "invalid-memory-access", culprit: "claim_slot", origin: "fault", decided: /the very address the record holds/ },
  abort: { kind: "abort", culprit: "validate_config", origin: "raised", decided: /goes through `(abort|raise|__pthread_kill\w*)`/ },
  "cpp-null-deref": { kind: "null-dereference", culprit: "Session::idle_seconds", origin: "fault", decided: /the very address the record holds/ },
  "dangling-callback": { kind: "bad-jump", culprit: "publish", origin: "fault", decided: /no canonical address: a general-protection fault/ },
  "debug-break": { kind: "breakpoint", culprit: "texture_bytes", origin: "fault", decided: /breakpoint instruction/ },
};

async function minidumpOf(name: string, core: string, exe: string, withoutSiCode: boolean): Promise<string> {
  const dump = path.join(dir, `${name}${withoutSiCode ? "-no-si-code" : ""}.dmp`);
  await breakpadMinidumpFromCore(core, exe, dump, { withoutSiCode });
  return dump;
}

async function triage(dump: string, exe: string): Promise<Crash & { notes?: string[] }> {
  const run = await runCli(["triage", dump, "--exe", exe, "--json"]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Crash;
}

describe.each([
  ["tuned", FIXTURES],
  ["held out", HELD_OUT],
] as const)("Breakpad minidumps of fixture crashes with no si_code (%s)", (_set, cases) => {
  it.each(Object.keys(cases))("%s reads as the kernel's own record does, and says what decided", async (name) => {
    const expected = cases[name] as Case;
    const built = await buildCore(name);
    const crash = await triage(await minidumpOf(name, built.core, built.exe, true), built.exe);
    const recorded = await triage(await minidumpOf(name, built.core, built.exe, false), built.exe);
    expect(crash).toMatchObject({ kind: expected.kind, culprit: { function: expected.culprit, line: culpritLine(name) } });
    expect(crash.kind).toBe(recorded.kind);
    expect(crash.culprit).toEqual(recorded.culprit);
    expect(crash.faultAddress).toBe(recorded.faultAddress);
    expect(crash.origin).toMatchObject({ type: expected.origin, sender: null });
    expect(crash.origin?.evidence).toMatch(expected.decided);
    // The record and the evidence disagreed: the origin says so, and no si_code is claimed the dump did not show.
    expect(crash.origin?.evidence).toMatch(/si_code is 0/);
    expect(crash.signalCode).toBeNull();
  }, 120_000);
});

/** A program of the test's own, built at -O0 and run until it crashes: its executable and core. */
function crashed(name: string, text: string): { exe: string; core: string } {
  const source = path.join(dir, `${name}.c`);
  writeFileSync(source, text);
  const exe = path.join(dir, name);
  execFileSync("gcc", ["-g", "-O0", "-o", exe, source]);
  return { exe, core: coreAtCrash(path.join(dir, `${name}.core`), [exe]) };
}

describe("Breakpad minidumps of other crashes with no si_code", () => {
  it("a jump into the heap: the pc is outside every module, a bad jump in the caller", async () => {
    const { exe, core } = crashed("heap-jump", HEAP_JUMP);
    const crash = await triage(await minidumpOf("heap-jump", core, exe, true), exe);
    const line = HEAP_JUMP.split("\n").findIndex((l) => l.includes("// CULPRIT")) + 1;
    expect(crash).toMatchObject({ kind: "bad-jump", access: "execute", culprit: { function: "run_plugin", line }, origin: { type: "fault" } });
    expect(crash.origin?.evidence).toMatch(/the pc 0x[0-9a-f]+ is no code of the program or its libraries/);
  }, 120_000);

  it("a real kill stays sent: the record's word is the sender's pid and uid, not the process's", async () => {
    const { exe, core } = crashed("watchdog", WATCHDOG);
    const crash = await triage(await minidumpOf("watchdog", core, exe, true), exe);
    expect(crash).toMatchObject({ kind: "unknown", signal: "SIGSEGV", faultAddress: null, access: null, origin: { type: "sent" } });
    const onCore = JSON.parse((await runCli(["triage", core, "--exe", exe, "--json"])).stdout) as Crash;
    expect(onCore.origin).toMatchObject({ type: "sent" });
    // The sender read from the minidump's word is the one the kernel recorded in the core.
    expect(crash.origin?.sender).toEqual(onCore.origin?.sender);
    expect(crash.message).toMatch(new RegExp(`^the process was sent SIGSEGV by pid ${onCore.origin?.sender?.pid} `));
  }, 120_000);
});
