/** `dumpdbg exec` and bad input, driven through the built CLI on real cores. */
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, rmSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildCore, buildProgram, type BuiltCore } from "../helpers/cores.js";
import { hasJava } from "../helpers/jvm.js";
import { runCli } from "../helpers/cli.js";
import { GdbSession } from "../../src/debuggers/gdb/gdb-session.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

let nullDeref: BuiltCore;
let scratch: string;

beforeAll(async () => {
  nullDeref = await buildCore("null-deref");
  scratch = tempDir("dumpdbg-cli-");
});

describe("dumpdbg exec", () => {
  it("runs the commands in order in one session and prints their output as gdb would", async () => {
    const run = await runCli(["exec", nullDeref.core, "--exe", nullDeref.exe, "-c", "bt", "-c", "up", "-c", "info frame"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^#0 +(0x[0-9a-f]+ in )?send_to_client /m);
    // `up` in the same session moved to frame 1, so `info frame` describes broadcast.
    expect(run.stdout).toMatch(/Stack level 1, frame at 0x[0-9a-f]+:\n rip = 0x[0-9a-f]+ in broadcast/);
  });

  it("hands gdb the next commands while it works, with the answers and context of one command at a time", async () => {
    // Reads, selection moves (after which nothing is sent ahead until the selection is read back),
    // an error and value history ($1, $2…) that depends on the order.
    const commands = ["bt", "info registers rip", "p $pc", "x/2i $pc", "frame 1", "info frame", "p $", "p 1+1", "up", "x/4xg $sp", "p nosuchsymbol", "frame 0", "info locals", "p $_siginfo.si_signo", "thread 1", "bt 2"];
    const repeated = Array.from({ length: 3 }, () => commands).flat();
    const run = await runCli(["exec", nullDeref.core, "--exe", nullDeref.exe, ...repeated.flatMap((c) => ["-ex", c]), "--json"]);
    expect(run.code).toBe(1);
    const results = JSON.parse(run.stdout) as Array<{ command: string; ok: boolean; output: string; error: string | null; context: unknown }>;
    expect(results.map((r) => r.command)).toEqual(repeated);

    const session = new GdbSession({ dump: nullDeref.core, executable: nullDeref.exe });
    await session.open();
    try {
      for (const [i, command] of repeated.entries()) {
        const one = await session.run(command);
        expect({ command, ok: results[i]!.ok, output: results[i]!.output, error: results[i]!.error, context: results[i]!.context }).toEqual({
          command,
          ok: one.ok,
          output: one.output,
          error: one.error ?? null,
          context: one.context,
        });
      }
    } finally {
      await session.close();
    }
    expect(results.find((r) => r.command === "p 1+1")!.output).toMatch(/^\$\d+ = 2\n$/);
    expect(results.filter((r) => r.command === "info frame").map((r) => r.output)).toEqual(Array(3).fill(expect.stringMatching(/Stack level 1, frame at 0x[0-9a-f]+:\n rip = 0x[0-9a-f]+ in broadcast/)));
  });

  it("writes the next commands while gdb still works on one", async () => {
    // A gdb that notes when each line reaches it. `info functions` over glibc's debug information
    // takes gdb over a second here; the commands after it must arrive long before it is answered.
    const log = join(scratch, "ahead.log");
    const wrapper = join(scratch, "gdb-ahead");
    writeFileSync(
      wrapper,
      `#!/usr/bin/env python3
import subprocess, sys, threading, time
log = open(${JSON.stringify(log)}, "a")
gdb = subprocess.Popen(["gdb"] + sys.argv[1:], stdin=subprocess.PIPE)
for line in sys.stdin.buffer:
    log.write("%.1f %s\\n" % (time.monotonic() * 1000, line.decode().strip())); log.flush()
    gdb.stdin.write(line); gdb.stdin.flush()
gdb.stdin.close(); gdb.wait()
`,
    );
    chmodSync(wrapper, 0o755);
    const run = await runCli(["exec", nullDeref.core, "--exe", nullDeref.exe, "-ex", "info functions", "-ex", "p 1", "-ex", "p 2", "--json"], { env: { DUMPDBG_GDB: wrapper } });
    expect(run.code, run.stderr).toBe(0);
    const results = JSON.parse(run.stdout) as Array<{ command: string; ms: number; output: string }>;
    expect(results.map((r) => r.output)).toEqual([expect.stringContaining("All defined functions"), "$1 = 1\n", "$2 = 2\n"]);
    const arrived = (command: string) => Number(readFileSync(log, "utf8").split("\n").find((line) => line.includes(`console "${command}"`))!.split(" ")[0]);
    expect(results[0]!.ms).toBeGreaterThan(300);
    expect(arrived("p 2") - arrived("info functions")).toBeLessThan(results[0]!.ms / 2);
  });

  it("a command past its timeout with commands queued behind it: the dump is reopened, and they run in their turn", async () => {
    // `info functions` over glibc's debug information takes gdb over a second here: a read the
    // policy allows, so the commands after it were written ahead.
    const run = await runCli(
      ["exec", nullDeref.core, "--exe", nullDeref.exe, "--timeout", "0.2", "-ex", "bt 1", "-ex", "info functions", "-ex", "p $_siginfo.si_signo", "-ex", "frame 1", "-ex", "bt 1", "--json"],
    );
    expect(run.code).toBe(1);
    const results = JSON.parse(run.stdout) as Array<{ command: string; ok: boolean; output: string; errorType: string | null; error: string | null; reopened: boolean; ms: number }>;
    expect(results.map((r) => [r.command, r.ok])).toEqual([
      ["bt 1", true],
      ["info functions", false],
      ["p $_siginfo.si_signo", true],
      ["frame 1", true],
      ["bt 1", true],
    ]);
    expect(results[1]).toMatchObject({ errorType: "timeout", reopened: true });
    expect(results[1]!.error).toMatch(/timed out after 0.2s; commands were queued behind it, so it was killed and the dump reopened/);
    // Its clock ran from its turn: neither cut short by the commands before it nor stretched.
    expect(results[1]!.ms).toBeGreaterThanOrEqual(180);
    expect(results[1]!.ms).toBeLessThan(5_000);
    expect(results[2]!.output).toMatch(/^\$1 = 11\n$/);
    expect(results[3]!.output).toMatch(/^#1 .* in broadcast /);
    expect(results[4]!.output).toMatch(/send_to_client/);
    expect(run.ms).toBeLessThan(15_000);
  });

  it("--json prints one JSON array of results and nothing else on stdout", async () => {
    const run = await runCli(["exec", nullDeref.core, "--exe", nullDeref.exe, "-c", "p $_siginfo.si_signo", "-c", "shell id", "-c", "x/4xg 0", "--json"]);
    // Like gdb -batch, a failed or refused command makes the exit code 1; stdout stays pure JSON.
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^dumpdbg: 2 of 3 commands failed or were refused$/m);
    const results = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
    expect(results).toHaveLength(3);
    expect(results[0]).toMatchObject({ command: "p $_siginfo.si_signo", ok: true, output: "$1 = 11\n", errorType: null, error: null });
    expect(results[0]!.context).toMatchObject({ threadCount: 1, selectedThread: { id: 1 }, selectedFrame: { level: 0, function: "send_to_client" } });
    expect(results[1]).toMatchObject({ command: "shell id", ok: false, errorType: "not_allowed", output: "" });
    expect(results[1]!.error).toMatch(/shell/);
    expect(results[2]).toMatchObject({ ok: false, errorType: "debugger_error" });
    for (const result of results) expect(typeof result.ms).toBe("number");
  });

  it("speaks gdb's conventions: -ex runs a command, -c given a core file says how to open it, -v prints the version", async () => {
    const ex = await runCli(["exec", nullDeref.core, "--exe", nullDeref.exe, "-ex", "p 6 * 7", "-c", "p 1 + 1"]);
    expect(ex.code, ex.stderr).toBe(0);
    expect(ex.stdout).toBe("$1 = 42\n$2 = 2\n");
    const habit = await runCli(["exec", "-c", nullDeref.core, "-ex", "bt"]);
    expect(habit.code).toBe(2);
    expect(habit.stderr).toBe(`dumpdbg: -c runs a debugger command here, not gdb's core file: give the dump first, as in dumpdbg exec ${nullDeref.core} -ex bt\n`);
    for (const flag of ["-v", "-V", "--version"]) {
      const version = await runCli([flag]);
      expect(version.code).toBe(0);
      expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    }
    const bare = await runCli([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe("");
    expect(bare.stderr).toMatch(/^Usage: dumpdbg \[options\] \[command\]/);
    const help = await runCli(["exec", "--help"]);
    expect(help.stdout).toMatch(/Examples:\n  dumpdbg exec core\.1234 -ex bt/);
    expect(help.stdout).toMatch(/Environment:\n  DUMPDBG_GDB/);
    expect(help.stdout).toMatch(/Exit codes: 0 every command ran, 1 a command failed or was refused/);
    const empty = await runCli(["analyze", nullDeref.core, "--issue", "  ", "--provider", "offline"]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe('dumpdbg: --issue is empty; say what went wrong, e.g. --issue "hangs after login", or leave it out\n');
    const unknown = await runCli(["exec", nullDeref.core, "--nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("--json stays pure when gdb's stdout lags behind its log (nothing gdb says while switching its output leaks in)", async () => {
    // On a busy machine gdb's stdout pipe can be read later than the log file the MI stream moves
    // to. This gdb makes the lag certain: what it prints on stdout while switching reaches us only
    // once the next command has been sent.
    const slow = join(scratch, "gdb-with-slow-stdout");
    writeFileSync(
      slow,
      `#!/usr/bin/env python3
import subprocess, sys, threading, time
gdb = subprocess.Popen(["gdb"] + sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
held, lock, released = [], threading.Lock(), [False]
def out(line):
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
def forward_stdout():
    for line in gdb.stdout:
        with lock:
            if not released[0] and (b"Redirecting output" in line or b"Copying debug output" in line):
                held.append(line)
            else:
                out(line)
threading.Thread(target=forward_stdout, daemon=True).start()
for line in sys.stdin.buffer:
    if b"si_signo" in line:
        with lock:
            released[0] = True
            for h in held:
                out(h)
        # The lines are out before gdb even sees the command, and long before it answers.
        time.sleep(0.2)
    gdb.stdin.write(line)
    gdb.stdin.flush()
gdb.stdin.close()
sys.exit(gdb.wait())
`,
    );
    chmodSync(slow, 0o755);
    const lagging = await runCli(["exec", nullDeref.core, "--exe", nullDeref.exe, "--gdb", slow, "-c", "p $_siginfo.si_signo", "--json"]);
    expect(lagging.code, lagging.stderr).toBe(0);
    expect(JSON.parse(lagging.stdout)).toEqual([expect.objectContaining({ ok: true, output: "$1 = 11\n" })]);
    // And many at once on this machine.
    const runs = await Promise.all(Array.from({ length: 16 }, () => runCli(["exec", nullDeref.core, "--exe", nullDeref.exe, "-c", "p $_siginfo.si_signo", "--json"])));
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      const results = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
      expect(results).toEqual([expect.objectContaining({ ok: true, output: "$1 = 11\n" })]);
    }
  }, 120_000);

  it("never sends a refused command to gdb, and --unsafe lifts the policy with a warning", async () => {
    const marker = join(scratch, "marker");
    const refused = await runCli(["exec", nullDeref.core, "--exe", nullDeref.exe, "-c", `shell touch ${marker}`]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused: shell touch/);
    expect(() => statSync(marker)).toThrow();

    const unsafe = await runCli(["exec", nullDeref.core, "--exe", nullDeref.exe, "-c", `shell touch ${marker}`, "--unsafe"]);
    expect(unsafe.code).toBe(0);
    expect(unsafe.stderr).toMatch(/WARNING: --unsafe/);
    expect(statSync(marker).isFile()).toBe(true);
  });

  it("opens a core whose path has spaces, quotes and non-ASCII letters", async () => {
    const dir = join(scratch, `crash "dumps" für prod`);
    mkdirSync(dir, { recursive: true });
    const core = join(dir, "core 1");
    copyFileSync(nullDeref.core, core);
    const run = await runCli(["exec", core, "--exe", nullDeref.exe, "-c", "bt 1"]);
    // gdb may still warn (e.g. that the source is newer than the program); it must not fail to load.
    expect(run.stderr).not.toMatch(/could not load|No such file/);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/send_to_client/);
  });

  it("finds the executable from the core's own notes when --exe is not given", async () => {
    const run = await runCli(["exec", nullDeref.core, "-c", "info symbol $pc"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/send_to_client \+ \d+ in section \.text/);
  });

  it("warns, but goes on, when the executable does not match the core", async () => {
    const other = await buildProgram("abort");
    const run = await runCli(["exec", nullDeref.core, "--exe", other.exe, "-c", "bt 1"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/warning: .* does not match the core \(build-id [0-9a-f]+/);
  });

  it("ends gdb when interrupted with Ctrl+C and exits 130", async () => {
    const { run, gdbPid } = await signalDuringCommand("SIGINT");
    expect(gdbPid).toBeDefined();
    expect(run.code).toBe(130);
    expect(run.stderr).toMatch(/interrupted/);
    expect(await gone(gdbPid!)).toBe(true);
  });

  it("ends gdb on SIGTERM", async () => {
    const { gdbPid } = await signalDuringCommand("SIGTERM");
    expect(gdbPid).toBeDefined();
    expect(await gone(gdbPid!)).toBe(true);
  });
});

/** Runs a long command and sends the CLI `signal` once its gdb is up. */
async function signalDuringCommand(signal: NodeJS.Signals) {
  let gdbPid: number | undefined;
  const run = await runCli(["exec", nullDeref.core, "--exe", nullDeref.exe, "--unsafe", "-c", "python import time; time.sleep(60)"], {
    onSpawn: (child) => {
      const poll = setInterval(() => {
        const pid = childGdb(child.pid!);
        if (pid === undefined) return;
        gdbPid = pid;
        clearInterval(poll);
        setTimeout(() => child.kill(signal), 300);
      }, 100);
    },
  });
  return { run, gdbPid };
}

describe("bad input", () => {
  const cases: Array<{ name: string; args: () => string[]; env?: Record<string, string>; code: number; message: RegExp }> = [
    { name: "no commands", args: () => ["exec", nullDeref.core], code: 2, message: /no commands given/ },
    { name: "unknown flag", args: () => ["exec", nullDeref.core, "--frobnicate"], code: 2, message: /unknown option '--frobnicate'/ },
    { name: "bad timeout", args: () => ["exec", nullDeref.core, "-c", "bt", "--timeout", "soon"], code: 2, message: /--timeout must be a positive number/ },
    { name: "a timeout too long for a timer", args: () => ["exec", nullDeref.core, "-c", "bt", "--timeout", "3000000"], code: 2, message: /--timeout must be a positive number of seconds up to 2147483/ },
    { name: "missing dump", args: () => ["exec", join(scratch, "nope.core"), "-c", "bt"], code: 3, message: /dump not found: .*nope\.core/ },
    { name: "a directory", args: () => ["exec", scratch, "-c", "bt"], code: 3, message: /is a directory/ },
    { name: "an empty file", args: () => ["exec", file("empty", Buffer.alloc(0)), "-c", "bt"], code: 3, message: /is empty, not a crash dump/ },
    { name: "random bytes", args: () => ["exec", file("random", Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 251))), "-c", "bt"], code: 3, message: /is not a crash dump/ },
    { name: "an executable instead of a core", args: () => ["exec", nullDeref.exe, "-c", "bt"], code: 3, message: /is an ELF program, not a core dump/ },
    // A core cut short past its notes is read as far as it goes (tests/e2e/cut-cores.test.ts); cut inside them, it is refused.
    { name: "a core cut inside its notes", args: () => ["exec", file("truncated", cutInsideNotes(readFileSync(nullDeref.core))), "--exe", nullDeref.exe, "-c", "bt"], code: 3, message: /is truncated inside its notes/ },
    { name: "--exe that is not a program", args: () => ["exec", nullDeref.core, "--exe", file("notelf", Buffer.from("#!/bin/sh\n")), "-c", "bt"], code: 3, message: /--exe .* is not an ELF executable/ },
    { name: "a missing --exe", args: () => ["exec", nullDeref.core, "--exe", join(scratch, "gone"), "-c", "bt"], code: 3, message: /executable not found: .*gone/ },
    { name: "a core whose program is gone", args: () => ["exec", movedCore(), "-c", "bt"], code: 3, message: /executable of this core was not found: looked for .*null-deref/ },
    { name: "a minidump that is only a header", args: () => ["exec", file("crash.dmp", minidumpHeader()), "-c", "bt"], code: 4, message: /lldb could not load .*crash\.dmp/ },
    { name: "a minidump with --debugger gdb", args: () => ["exec", file("crash.dmp", minidumpHeader()), "--debugger", "gdb", "-c", "bt"], code: 4, message: /gdb cannot read a minidump/ },
    { name: "a debugger this version lacks", args: () => ["exec", file("crash.dmp", minidumpHeader()), "--debugger", "cdb", "-c", "bt"], code: 4, message: /cdb runs only on win32|the cdb backend is not in this version of dumpdbg yet/ },
    { name: "an unknown debugger", args: () => ["exec", nullDeref.core, "--debugger", "windbg", "-c", "bt"], code: 2, message: /--debugger.*windbg.*(auto, gdb, lldb, cdb|Allowed choices)/ },
    // With gdb missing, auto falls back to lldb; asked for by name, a missing gdb is an error.
    { name: "a missing gdb named by DUMPDBG_GDB", args: () => ["exec", nullDeref.core, "--exe", nullDeref.exe, "--debugger", "gdb", "-c", "bt"], env: { DUMPDBG_GDB: "/nonexistent/gdb-env" }, code: 4, message: /cannot start \/nonexistent\/gdb-env: not found/ },
    { name: "a missing gdb", args: () => ["exec", nullDeref.core, "--exe", nullDeref.exe, "--debugger", "gdb", "--gdb", "/nonexistent/gdb", "-c", "bt"], code: 4, message: /cannot start \/nonexistent\/gdb: not found/ },
    { name: "no debugger at all", args: () => ["exec", nullDeref.core, "--exe", nullDeref.exe, "--gdb", "/nonexistent/gdb", "--lldb", "/nonexistent/lldb-dap", "-c", "bt"], code: 4, message: /the gdb you named \(\/nonexistent\/gdb\) cannot be run/ },
  ];

  it("does not switch to lldb when the gdb the user named cannot run", async () => {
    const run = await runCli(["exec", nullDeref.core, "--exe", nullDeref.exe, "--gdb", "/nonexistent/gdb", "-c", "thread list"]);
    expect(run.code).toBe(4);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^dumpdbg: .*the gdb you named \(\/nonexistent\/gdb\) cannot be run/);
  });

  for (const c of cases) {
    it(`${c.name}: exit ${c.code} with one line`, async () => {
      const run = await runCli(c.args(), c.env ? { env: c.env } : undefined);
      expect(run.code).toBe(c.code);
      expect(run.stdout).toBe("");
      const lines = run.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^dumpdbg: /);
      expect(lines[0]).toMatch(c.message);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    });
  }

  it("triage refuses an executable that does not match the core, naming the right one", async () => {
    const other = await buildProgram("abort");
    const run = await runCli(["triage", nullDeref.core, "--exe", other.exe]);
    expect(run.code).toBe(3);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(/does not match the core \(build-id [0-9a-f]+, the core's program has [0-9a-f]+\); pass the executable that produced the core \(the core names .*null-deref\)/);
  });

  it("--debug adds the stack trace, naming the TypeScript sources (through the bundle's source map)", async () => {
    const run = await runCli(["exec", join(scratch, "nope.core"), "-c", "bt", "--debug"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/\n\s+at /);
    expect(run.stderr).toMatch(/src\/debuggers\/dump\.ts:\d+/);
  });

  it("--debug before the command works for every command, those that run agents too", async () => {
    for (const command of [["exec", "-c", "bt"], ["triage"], ["analyze", "--provider", "offline", "--sessions-dir", join(scratch, "debug-sessions")]]) {
      const run = await runCli(["--debug", command[0]!, join(scratch, "nope.core"), ...command.slice(1)]);
      expect(run.code, `${command[0]}: ${run.stderr}`).toBe(3);
      expect(run.stderr).toMatch(/^dumpdbg: dump not found: /);
      expect(run.stderr).toMatch(/src\/debuggers\/dump\.ts:\d+/);
    }
  });
});

describe("the program", () => {
  it("--version and --help work", async () => {
    const version = await runCli(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version);
    const help = await runCli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: dumpdbg/);
    expect(help.stdout).toMatch(/exec/);
  });

  it("doctor says which debuggers and providers are usable", async () => {
    const run = await runCli(["doctor", "--json"], { env: { OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", OLLAMA_HOST: "" } });
    expect(run.code).toBe(0);
    const findings = JSON.parse(run.stdout) as Array<{ name: string; ok: boolean; detail: string }>;
    const byName = Object.fromEntries(findings.map((f) => [f.name, f]));
    expect(byName.gdb).toMatchObject({ ok: true });
    expect(byName.gdb!.detail).toMatch(/GNU gdb .*13/);
    expect(byName.offline).toMatchObject({ ok: true });
    expect(byName.openai).toMatchObject({ ok: false, detail: expect.stringMatching(/^not configured: set OPENAI_API_KEY/) });
    expect(byName.anthropic!.detail).toMatch(/set ANTHROPIC_API_KEY/);
    expect(byName.ollama!.detail).toMatch(/set OLLAMA_HOST/);
    expect(byName.lldb).toMatchObject({ ok: true, detail: expect.stringMatching(/^lldb version 16/) });
    expect(byName.dlv).toMatchObject({ ok: true, detail: expect.stringMatching(/^Delve Debugger Version: \d/) });
    // The JDK's jhsdb reads a Java program's core; without it the Java frames are not read, and doctor says so.
    if (hasJava) expect(byName.jhsdb).toMatchObject({ ok: true, detail: expect.stringMatching(/^jhsdb: Java cores are read with the JDK build that wrote them/) });
    const noJdk = await runCli(["doctor", "--json"], { env: { DUMPDBG_JHSDB: "/nonexistent/jhsdb" } });
    expect((JSON.parse(noJdk.stdout) as Array<{ name: string; ok: boolean; detail: string }>).find((f) => f.name === "jhsdb")).toMatchObject({ ok: false, detail: expect.stringMatching(/^\/nonexistent\/jhsdb: not found; Java cores are read without their Java frames/) });
    // llnode reads a Node.js core's JavaScript frames; without it doctor says how to install it.
    const noLlnode = await runCli(["doctor", "--json"], { env: { DUMPDBG_LLNODE: "/nonexistent/llnode.so" } });
    expect((JSON.parse(noLlnode.stdout) as Array<{ name: string; ok: boolean; detail: string }>).find((f) => f.name === "llnode")).toMatchObject({ ok: false, detail: expect.stringMatching(/^not installed; Node\.js cores are read without their JavaScript frames \(install it: .*npm install -g llnode/) });
    const missing = await runCli(["doctor", "--json", "--gdb", "/nonexistent/gdb"]);
    expect(missing.code).toBe(0);
    expect((JSON.parse(missing.stdout) as Array<{ name: string; ok: boolean }>).find((f) => f.name === "gdb")).toMatchObject({ ok: false });
    // No debugger at all: nothing can read a dump, and the exit code says so.
    const none = await runCli(["doctor", "--gdb", "/nonexistent/gdb", "--lldb", "/nonexistent/lldb", "--cdb", "/nonexistent/cdb", "--dlv", "/nonexistent/dlv"]);
    expect(none.code).toBe(4);
    expect(none.stderr).toMatch(/^dumpdbg: no debugger is usable: install gdb/m);
  });

  it("an unknown command is a usage error", async () => {
    const run = await runCli(["frobnicate"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/unknown command 'frobnicate'/);
  });
});

/** The 32-byte MINIDUMP_HEADER: "MDMP", version 0xa793, no streams. Recognition reads only this. */
function minidumpHeader(): Buffer {
  const header = Buffer.alloc(32);
  header.write("MDMP", 0, "latin1");
  header.writeUInt32LE(0xa793, 4);
  return header;
}

function file(name: string, content: Buffer): string {
  const path = join(scratch, name);
  writeFileSync(path, content);
  return path;
}

/** A core whose program was deleted after the crash, as when a build directory is cleaned. */
function movedCore(): string {
  const dir = join(scratch, "gone-program");
  mkdirSync(dir, { recursive: true });
  const exe = join(dir, "null-deref");
  copyFileSync(nullDeref.exe, exe);
  chmodSync(exe, 0o755);
  const core = join(dir, "core");
  execFileSync("gdb", ["-nx", "-batch", "-ex", "run", "-ex", `generate-core-file ${core}`, exe], { stdio: "ignore" });
  rmSync(exe);
  return core;
}

function childGdb(parent: number): number | undefined {
  const out = execFileSync("ps", ["-o", "pid=,ppid=,comm=", "-e"], { encoding: "utf8" });
  for (const line of out.split("\n")) {
    const [pid, ppid, comm] = line.trim().split(/\s+/);
    if (Number(ppid) === parent && comm === "gdb") return Number(pid);
  }
  return undefined;
}

/** Waits up to 2 s for a killed process to go: SIGKILL lands once it leaves a disk wait. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 20 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  return !alive(pid);
}

/** Running, as opposed to gone or a zombie waiting for a parent that does not reap (PID 1 in a container). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** An ELF64 core's bytes cut halfway through its PT_NOTE segment. */
function cutInsideNotes(core: Buffer): Buffer {
  const phoff = Number(core.readBigUInt64LE(0x20));
  const [size, count] = [core.readUInt16LE(0x36), core.readUInt16LE(0x38)];
  for (let i = 0; i < count; i += 1) {
    const at = phoff + i * size;
    if (core.readUInt32LE(at) === 4) return core.subarray(0, Number(core.readBigUInt64LE(at + 8)) + Number(core.readBigUInt64LE(at + 32)) / 2);
  }
  throw new Error("the core has no PT_NOTE segment");
}
