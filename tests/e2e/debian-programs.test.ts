/**
 * Real programs from Debian, stripped as they ship, made to crash, kill themselves or hang (issue:
 * real-world accuracy, classes 1, 5 and 6). What can be named is named: the library function that
 * faulted (strlen in libc), the module that called it (_ctypes, perl), the argument it was passed,
 * and the package and version of the code that crashed, so the user knows which debug symbols to
 * get; the boilerplate "rebuild with -g" is not offered for a program the user did not build.
 * Cores written by gdb at the crash, or of the live hung process.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { coreAtCrash, coreOfLive } from "../helpers/dumped.js";
import { freePort } from "../helpers/redis.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-debian-"));
// Cores of real programs: ~200 MB a run.
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const PYTHON = "/usr/bin/python3";
const PERL = "/usr/bin/perl";
const BASH = "/bin/bash";
const REDIS = "/usr/bin/redis-server";
const haveDpkg = (() => {
  try {
    execFileSync("dpkg-query", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** Runs a command under gdb to its crash and writes the core there. */
const crashUnderGdb = (name: string, argv: string[]) => coreAtCrash(path.join(dir, `${name}.core`), argv);

/** The package that installed a file and its version, as dpkg says. */
function packageOf(file: string): { name: string; version: string } {
  const owner = execFileSync("dpkg-query", ["-S", file], { encoding: "utf8" }).split(":")[0] ?? "";
  return { name: owner, version: execFileSync("dpkg-query", ["-W", "-f=${Version}", owner], { encoding: "utf8" }) };
}

describe.skipIf(!existsSync(PYTHON) || !haveDpkg)("Debian's python3, stripped, passing NULL to strlen through ctypes", () => {
  let core: string;
  beforeAll(() => {
    core = crashUnderGdb("python", [PYTHON, "-c", "import ctypes; ctypes.string_at(0)"]);
  }, 60_000);

  it("blames the program's Python line that handed strlen the NULL through ctypes, with strlen and its argument named", async () => {
    const run = await runCli(["triage", core]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Crash: +null pointer dereference \(SIGSEGV, SEGV_MAPERR\)$/m);
    // The -c program's own line, read from the interpreter's frames: ctypes, _ctypes and libffi are the runtime.
    expect(run.stdout).toMatch(/^Where: +<module> at <string>:1, thread 1/m);
    expect(run.stdout).toMatch(/^Why: +inside strlen \(libc\.so\.6\), called by <module>: .*%rdi is its first argument$/m);
    const json = JSON.parse((await runCli(["triage", core, "--json"])).stdout);
    expect(json).toMatchObject({ kind: "null-dereference", faultAddress: "0x0", culprit: { function: "<module>", file: "<string>", line: 1, language: "python" }, runtime: { name: "cpython" } });
  }, 60_000);

  it("the offline analysis confirms strlen was handed the NULL by the program's call, from the registers", async () => {
    const run = await runCli(["analyze", core, "--provider", "offline", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.hypotheses[0]).toMatchObject({ status: "confirmed" });
    expect(report.conclusion.summary).toMatch(/^`<module>` \(<string>:1\) called `strlen` \(libc\.so\.6\) with the address 0x0, which maps nothing: reading it faulted \(E\d+\) \(NULL\)\.$/);
    expect(report.conclusion.recommendations.join(" ")).toMatch(/ctypes/);
    expect(report.conclusion.recommendations.join(" ")).not.toMatch(/-g\b/);
  }, 120_000);
});

describe.skipIf(!existsSync(PERL) || !haveDpkg)("Debian's perl unpacking a pointer that is not one", () => {
  it("names strlen, the perl function that called it, the near-NULL argument, and perl's package", async () => {
    const core = crashUnderGdb("perl", [PERL, "-e", 'print unpack("p", pack("J", 16))']);
    const perl = packageOf(realpathSync(PERL));
    const run = await runCli(["triage", core]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Crash: +null pointer dereference/m);
    expect(run.stdout).toMatch(/^Where: +Perl_newSVpv in \/usr\/bin\/perl/m);
    expect(run.stdout).toMatch(/^Why: +inside strlen \(libc\.so\.6\), called by Perl_newSVpv: reading \d+ bytes at 0x10 through `\(%rdi\)`/m);
    expect(run.stdout).toContain(`perl is from ${perl.name} ${perl.version}`);
  }, 60_000);
});

describe.skipIf(!existsSync(BASH))("Debian's bash sending itself SIGSEGV", () => {
  it("is a signal the process raised at itself with kill(), not a fault, in bash's kill builtin", async () => {
    const core = crashUnderGdb("bash", [BASH, "-c", "kill -SEGV $$"]);
    const run = await runCli(["triage", core, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout);
    expect(crash).toMatchObject({ kind: "unknown", signal: "SIGSEGV", signalCode: "SI_USER", faultAddress: null, access: null, culprit: { function: "kill_builtin" }, origin: { type: "raised" } });
    expect(crash.message).toBe("the process raised SIGSEGV at itself in kill_builtin (kill() with its own pid); it was not a fault");
  }, 60_000);
});

describe.skipIf(!existsSync(PYTHON))("Debian's python3 hung on a semaphore no thread will release", () => {
  it("is a hang: every Python thread waits in the Semaphore or in joining the threads", async () => {
    const script = "import threading\njobs = threading.Semaphore(0)\ndef worker():\n    jobs.acquire()\nthreads = [threading.Thread(target=worker) for _ in range(2)]\nfor t in threads: t.start()\nfor t in threads: t.join()\n";
    const child = spawn(PYTHON, ["-c", script], { stdio: "ignore" });
    try {
      await sleep(1500);
      const core = path.join(dir, "python-hang.core");
      coreOfLive(core, child.pid ?? 0);
      const run = await runCli(["triage", core, "--json"]);
      expect(run.code, run.stderr).toBe(0);
      const crash = JSON.parse(run.stdout);
      expect(crash.kind).toBe("hang");
      // Read on the Python side: the worker threads in the Semaphore's acquire, the main thread joining them.
      expect(crash.message).toMatch(/^hung: all 3 Python threads of the program's own wait, and no lock cycle joins them: /);
      expect(crash.message).toMatch(/thread \d+ "Thread-1 \(worker\)" waits in Semaphore\.acquire for a release in worker \(<string>:4\)/);
      expect(crash.message).toContain('thread 1 "MainThread" waits in Thread.join for the thread it joins to end in <module> (<string>:7)');
    } finally {
      child.kill("SIGKILL");
    }
  }, 60_000);
});

describe.skipIf(!existsSync(REDIS))("Debian's redis-server, whose crash handler re-raises the SIGSEGV it caught", () => {
  it("is the fault in debugCommand, read from the frame the first signal interrupted, not 'a signal the process sent itself'", async () => {
    const core = path.join(dir, "redis.core");
    // Another run may take the free port before redis binds it, and redis then exits at once: try
    // again on another port rather than triage a core that was never written.
    for (let attempt = 0; attempt < 3 && !existsSync(core); attempt++) await crashRedis(await freePort(), core);
    expect(existsSync(core), "redis-server under gdb wrote no core").toBe(true);
    const run = await runCli(["triage", core, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout);
    // The code and address are the fault's, from the record the kernel handed redis's handler on the signal frame.
    expect(crash).toMatchObject({ kind: "invalid-memory-access", signal: "SIGSEGV", signalCode: "SEGV_ACCERR", culprit: { function: "debugCommand" } });
    expect(crash.message).toMatch(/^bugReportEnd \(redis-[\w-]+\) re-raised SIGSEGV with kill\(\) from inside its signal handler, as a crash handler does; the SIGSEGV it was handling arrived in debugCommand: writing 1 byte at (0x[0-9a-f]+) through `\(%rax\)` = %rax \(\1\) \(movb \$0x78,\(%rax\)\)$/);
    expect(crash.origin.evidence).toMatch(/says SIGSEGV SEGV_ACCERR at 0x[0-9a-f]+$/);
    expect(crash.signature).toMatch(/^invalid-memory-access \| debugCommand \| call \| processCommand$/);
  }, 90_000);
});

/** Runs redis-server under gdb, makes it crash with DEBUG SEGFAULT, and has gdb write `core` at the re-raise. */
async function crashRedis(port: number, core: string): Promise<void> {
  // gdb lets the fault reach redis's handler and writes the core at the re-raise (si_code SI_USER).
  const gdb = spawn(
    "gdb",
    ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "handle SIGSEGV nostop noprint pass", "-ex", "catch signal SIGSEGV", "-ex", "condition 1 $_siginfo.si_code == 0", "-ex", "run", "-ex", `generate-core-file ${core}`, "-ex", "kill", "--args", REDIS, "--port", String(port), "--save", "", "--enable-debug-command", "yes", "--dir", dir],
    { stdio: "ignore" },
  );
  let gone = false;
  const exited = new Promise((resolve) => gdb.on("exit", resolve)).then(() => {
    gone = true;
  });
  let crashed = false;
  for (let tries = 0; tries < 40 && !gone && !crashed; tries++) {
    await sleep(250);
    try {
      execFileSync("redis-cli", ["-p", String(port), "DEBUG", "SEGFAULT"], { stdio: "ignore", timeout: 5000 });
      crashed = true;
    } catch {
      // Not listening yet, or the connection closed as the server crashed.
      crashed = existsSync(core);
    }
  }
  // gdb writes the core and exits; one whose redis never crashed is not waited for past 30 s.
  await Promise.race([exited, sleep(30_000)]);
  if (!gone) gdb.kill("SIGKILL");
  await exited;
}
