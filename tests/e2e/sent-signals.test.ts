/**
 * Signals a process sent are not faults (issue: real-world accuracy, class 1): a watchdog that
 * sends its supervisor SIGSEGV, SIGBUS or SIGABRT with kill(), and a program that raises SIGSEGV
 * at itself. Real programs, real cores written by gdb at the signal, real gdb and lldb.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const dir = tempDir("dumpdbg-sent-");

/** A supervisor whose watchdog child sends it `signal` while it serves. */
const watchdog = (signal: string) => `/* A supervisor serves jobs; the watchdog it forked sends it ${signal}. */
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

static volatile int jobs_done;

static void serve_forever(void)
{
    for (;;) {
        jobs_done++;
        usleep(1000);
    }
}

int main(void)
{
    pid_t supervisor = getpid();
    if (fork() == 0) {
        usleep(200 * 1000);
        kill(supervisor, ${signal});
        _exit(0);
    }
    serve_forever();
    return 0;
}
`;

const raiser = `/* A parser that gives up on bad input by raising SIGSEGV at itself. */
#include <signal.h>
#include <string.h>

static int parse_header(const char *line)
{
    if (strncmp(line, "HDR", 3) != 0)
        raise(SIGSEGV);
    return 3;
}

int main(void)
{
    return parse_header("BAD header");
}
`;

/** Compiles the program and writes its core with gdb when the signal arrives. */
function coreOf(name: string, source: string): { exe: string; core: string } {
  const c = path.join(dir, `${name}.c`);
  const exe = path.join(dir, name);
  const core = path.join(dir, `${name}.core`);
  writeFileSync(c, source);
  execFileSync("gcc", ["-g", "-O0", "-o", exe, c]);
  execFileSync("gdb", ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "run", "-ex", `generate-core-file ${core}`, exe], { stdio: "ignore" });
  return { exe, core };
}

interface Crash {
  kind: string;
  signal: string;
  signalCode: string;
  faultAddress: string | null;
  access: string | null;
  message: string | null;
  culprit: { function: string | null };
  origin: { type: string; sender: { pid: number | null; uid: number | null } | null; evidence: string } | null;
}

async function triage(built: { exe: string; core: string }, debuggerName = "gdb"): Promise<Crash> {
  const run = await runCli(["triage", built.core, "--exe", built.exe, "--json", "--debugger", debuggerName]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Crash;
}

let segv: { exe: string; core: string };
beforeAll(() => {
  segv = coreOf("watchdog-segv", watchdog("SIGSEGV"));
});

describe("signals sent by a process", () => {
  it.each(["gdb", "lldb"])("a SIGSEGV sent with kill is no fault: the sender's pid and uid, no fault address (%s)", async (debuggerName) => {
    const crash = await triage(segv, debuggerName);
    expect(crash).toMatchObject({ kind: "unknown", signal: "SIGSEGV", signalCode: "SI_USER", faultAddress: null, access: null });
    expect(crash.message).toMatch(/^the process was sent SIGSEGV by pid \d+ \(uid \d+\) with kill; it was not a fault/);
    const [, pid, uid] = /by pid (\d+) \(uid (\d+)\)/.exec(crash.message ?? "") ?? [];
    expect(crash.origin).toMatchObject({ type: "sent", sender: { pid: Number(pid), uid: Number(uid) } });
    expect(crash.culprit.function).toBe("serve_forever");
  }, 60_000);

  it.each(["SIGBUS", "SIGABRT"])("%s sent with kill is no bus error and no abort", async (signal) => {
    const crash = await triage(coreOf(`watchdog-${signal.toLowerCase()}`, watchdog(signal)));
    expect(crash).toMatchObject({ kind: "unknown", signal, signalCode: "SI_USER", faultAddress: null });
    expect(crash.message).toMatch(new RegExp(`^the process was sent ${signal} by pid \\d+`));
  }, 60_000);

  it("a SIGSEGV the program raised at itself is said so, where it did", async () => {
    const crash = await triage(coreOf("raiser", raiser));
    expect(crash).toMatchObject({ kind: "unknown", signal: "SIGSEGV", signalCode: "SI_TKILL", faultAddress: null, origin: { type: "raised" } });
    expect(crash.message).toMatch(/^the process raised SIGSEGV at itself in parse_header \(raiser\.c:8\)/);
  }, 60_000);

  it("the analysis leads with who sent it, with high confidence, and recommends finding the sender", async () => {
    const run = await runCli(["analyze", segv.core, "--exe", segv.exe, "--provider", "offline", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { conclusion: { summary: string; confidence: number; recommendations: string[] }; hypotheses: { status: string }[] };
    expect(report.conclusion.summary).toMatch(/^The process was sent SIGSEGV by pid (\d+) \(uid \d+\) with kill \(E\d+\): nothing faulted\./);
    const pid = /by pid (\d+)/.exec(report.conclusion.summary)?.[1];
    expect(report.conclusion.confidence).toBeGreaterThanOrEqual(0.9);
    expect(report.conclusion.recommendations[0]).toContain(`pid ${pid}`);
    expect(report.conclusion.summary).not.toMatch(/null|dereference|invalid memory/i);
    expect(report.hypotheses.some((h) => h.status === "confirmed")).toBe(true);
    const text = await runCli(["triage", segv.core, "--exe", segv.exe]);
    expect(text.stdout).toMatch(/^Crash: +unknown \(SIGSEGV, SI_USER\)$/m);
  }, 120_000);
});
