/**
 * Linux minidumps as Breakpad writes them, of real crashes: the kernel's cores of fixture programs
 * (a NULL read, a NULL read in one of five threads, an abort from glibc, a division by zero, a
 * stack overflow) turned into Breakpad's layout by tests/helpers/breakpad.ts, since Debian ships
 * no Breakpad. dumpdbg's own minidump reader and a real LLDB read them, and what they say is
 * checked against the core.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { DumpFile, readElfCore, readElfHeader, readMinidump, readMinidumpMemory, type ElfCoreFacts, type MinidumpFacts } from "../../src/debuggers/dumpfile/index.js";
import { PT_LOAD, readProgramHeaders } from "../../src/debuggers/dumpfile/elf.js";
import type { Crash } from "../../src/report/schema.js";
import { breakpadMinidumpFromCore } from "../helpers/breakpad.js";
import { runCli } from "../helpers/cli.js";
import { buildCore, culpritLine, type BuiltCore } from "../helpers/cores.js";

const execFileAsync = promisify(execFile);

const PROGRAMS = [
  { name: "null-deref", signal: "SIGSEGV", signo: 11 },
  { name: "thread-crash", signal: "SIGSEGV", signo: 11 },
  { name: "abort-msg", signal: "SIGABRT", signo: 6 },
  { name: "div-zero", signal: "SIGFPE", signo: 8 },
  { name: "stack-overflow", signal: "SIGSEGV", signo: 11 },
] as const;

/** The streams Breakpad's Linux client writes, in its directory's order (LinuxLsbRelease only where /etc/lsb-release exists). */
const BREAKPAD_STREAMS = ["ThreadListStream", "ModuleListStream", "MemoryListStream", "ExceptionStream", "SystemInfoStream", "LinuxCpuInfo", "LinuxProcStatus", "LinuxCmdLine", "LinuxEnviron", "LinuxAuxv", "LinuxMaps"];

interface Dumped {
  built: BuiltCore;
  dump: string;
  core: ElfCoreFacts;
  facts: MinidumpFacts;
}

let root: string;
const dumped = new Map<string, Dumped>();

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "dumpdbg-breakpad-"));
  for (const program of PROGRAMS) {
    const built = await buildCore(program.name);
    const dump = path.join(root, `${program.name}.dmp`);
    await breakpadMinidumpFromCore(built.core, built.exe, dump);
    dumped.set(program.name, { built, dump, core: withFile(built.core, readElfCore), facts: withFile(dump, readMinidump) });
  }
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

/** The line after a function's signature, its opening brace: where frame 0 stands when a fault hits its first push. */
function openingLine(source: string, fn: string): number {
  const lines = readFileSync(source, "utf8").split("\n");
  return lines.findIndex((line) => line.includes(` ${fn}(`) && !line.trim().endsWith(";")) + 2;
}

function withFile<T>(file: string, read: (file: DumpFile) => T): T {
  const opened = DumpFile.open(file);
  try {
    return read(opened);
  } finally {
    opened.close();
  }
}

function get(name: string): Dumped {
  const found = dumped.get(name);
  if (!found) throw new Error(`no minidump was made of ${name}`);
  return found;
}

/** Bytes the core holds at an address, from its PT_LOAD segments. */
function coreBytes(core: string, address: bigint, length: number): Buffer | null {
  return withFile(core, (file) => {
    const header = readElfHeader(file.read(0, 64, "the ELF header"));
    const load = readProgramHeaders(file, header).find((s) => s.type === PT_LOAD && s.vaddr <= address && address + BigInt(length) <= s.vaddr + BigInt(s.filesz));
    return load ? file.read(load.offset + Number(address - load.vaddr), length, "a segment") : null;
  });
}

/** The raw exception stream: what Breakpad wrote, before any reader interprets it. */
function exceptionRecord(dump: string): { thread: number; code: number; flags: number; address: bigint; parameters: number } {
  return withFile(dump, (file) => {
    const header = file.read(0, 32, "the header");
    const directory = file.read(header.readUInt32LE(12), header.readUInt32LE(8) * 12, "the directory");
    for (let at = 0; at < directory.length; at += 12) {
      if (directory.readUInt32LE(at) !== 6) continue;
      const stream = file.read(directory.readUInt32LE(at + 8), directory.readUInt32LE(at + 4), "the exception stream");
      return { thread: stream.readUInt32LE(0), code: stream.readUInt32LE(8), flags: stream.readUInt32LE(12), address: stream.readBigUInt64LE(24), parameters: stream.readUInt32LE(32) };
    }
    throw new Error(`${dump} has no exception stream`);
  });
}

function minidumpBytes(dump: string, facts: MinidumpFacts, address: bigint, length: number): Buffer | null {
  return withFile(dump, (file) => readMinidumpMemory(file, facts, `0x${address.toString(16)}`, length));
}

describe.each(PROGRAMS)("a Breakpad minidump of $name", ({ name, signal, signo }) => {
  it("is read by dumpdbg's reader, which finds the core's threads, modules, signal, mappings and process", () => {
    const { built, dump, core, facts } = get(name);
    expect(facts.problems).toEqual([]);
    expect(facts.platform).toEqual({ os: "linux", arch: "x86_64", pointerSize: 8 });
    expect(facts.streams.filter((s) => s !== "LinuxLsbRelease")).toEqual(BREAKPAD_STREAMS);
    expect(facts.osVersion).toContain(`Linux ${os.release()}`);

    // Every thread, in tid order, where the kernel stopped it.
    expect(facts.threads.map((t) => t.id)).toEqual(core.threads.map((t) => t.lwp).sort((a, b) => a - b));
    for (const thread of core.threads) {
      const read = facts.threads.find((t) => t.id === thread.lwp);
      for (const register of ["rip", "rsp", "rbp", "rax", "rdi", "r15"]) expect(read?.registers[register], `${register} of ${thread.lwp}`).toBe(thread.registers[register]);
      // Its stack from rsp's page to its mapping's end, at most 32 KiB, as the core holds it.
      const rsp = BigInt(thread.registers.rsp ?? "0x0");
      const page = rsp & ~0xfffn;
      const mapping = core.regions.find((r) => BigInt(r.start) <= page && page < BigInt(r.end));
      if (!mapping) {
        expect(read?.stack).toBeNull();
        continue;
      }
      const size = Math.min(32 * 1024, Number(BigInt(mapping.end) - page));
      expect(read?.stack).toEqual({ start: `0x${page.toString(16)}`, size });
      expect(minidumpBytes(dump, facts, rsp, 256)).toEqual(coreBytes(built.core, rsp, 256));
    }

    // The executable first, then every ELF file with the build id the core's copy of its first page has, and the vDSO.
    expect(facts.modules[0]?.path).toBe(built.exe);
    expect(core.modules.length).toBeGreaterThanOrEqual(3);
    for (const module of core.modules) {
      const read = facts.modules.find((m) => m.path === module.path);
      expect(read, module.path).toBeDefined();
      expect(read?.start).toBe(module.start);
      expect(read?.buildId).toBe(module.buildId);
      expect(read?.buildId).toMatch(/^[0-9a-f]{40}$/);
    }
    expect(facts.modules.find((m) => m.path === "linux-gate.so")?.buildId).toMatch(/^[0-9a-f]+$/);

    // The signal, in the thread that got it: Breakpad's exception record holds si_signo, si_code
    // and si_addr's word as they lie in the siginfo.
    const stop = core.stopReason;
    const crashed = core.threads.find((t) => t.lwp === stop?.thread);
    expect(stop?.signo).toBe(signo);
    expect(crashed).toBeDefined();
    // A crash handler's copy of the record: for a signal the record says was sent, si_addr's word is the sender it names.
    expect(facts.stopReason).toEqual({ type: "signal", signo, code: stop?.code, errno: 0, address: stop?.address, senderPid: stop?.senderPid ?? null, senderUid: stop?.senderUid ?? null, thread: stop?.thread, recordedBy: "crash-handler" });
    const record = exceptionRecord(dump);
    expect(record).toMatchObject({ thread: stop?.thread, code: signo, flags: (stop?.code ?? 0) >>> 0, parameters: 0 });
    // For a signal sent by tgkill (abort), si_addr's word holds si_pid and si_uid.
    const word = stop?.address ? BigInt(stop.address) : BigInt(stop?.senderPid ?? 0) | (BigInt(stop?.senderUid ?? 0) << 32n);
    expect(record.address).toBe(word);
    expect(facts.exceptionRegisters?.rip).toBe(crashed?.registers.rip);
    expect(facts.exceptionRegisters?.rsp).toBe(crashed?.registers.rsp);
    // The 256 bytes around the crashing instruction: code the core has no copy of, read from the executable.
    const rip = BigInt(crashed?.registers.rip ?? "0x0");
    expect(minidumpBytes(dump, facts, rip, 16)?.length).toBe(16);

    // Its /proc/PID/maps: one line per mapping, with the core's permissions and files.
    expect(facts.regions).toHaveLength(core.regions.length);
    for (const region of core.regions) {
      const read = facts.regions.find((r) => r.start === region.start);
      expect(read, region.start).toMatchObject({ end: region.end, permissions: `${region.permissions}p` });
      // A file's path and offset; an anonymous mapping has none, or the kernel's name for it.
      if (region.file) expect(read).toMatchObject({ file: region.file, offset: region.offset });
      else expect(read?.file ?? "[]").toMatch(/^\[[a-z_]*\]$/);
    }
    expect(facts.regions.filter((r) => r.file === "[stack]")).toHaveLength(1);
    expect(facts.regions.filter((r) => r.file === "[vdso]")).toHaveLength(1);

    expect(facts.commandLine).toBe(core.commandLine);
    expect(facts.commandLine).toBe(`./${name}`);
    if (stop?.thread === core.pid) expect(facts.processId).toBe(core.pid);
  });

  it(`is read by LLDB, which stops the crashing thread with ${signal} and unwinds it to the culprit line`, async () => {
    const { built, dump, core } = get(name);
    const { stdout } = await execFileAsync("lldb-16", ["--no-lldbinit", "--batch", "-c", dump, built.exe, "-o", "thread list", "-o", "bt"], {
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, DEBUGINFOD_URLS: "" },
    });
    const lwp = core.stopReason?.thread;
    const threads = stdout.split("\n").filter((line) => /^[* ] thread #\d+: tid = \d+/.test(line));
    expect(threads).toHaveLength(core.threads.length);
    expect(threads.filter((line) => line.includes("stop reason ="))).toEqual([expect.stringMatching(new RegExp(`^\\* thread #\\d+: tid = ${lwp}, .* stop reason = signal ${signal}$`))]);

    const backtrace = stdout.slice(stdout.indexOf("(lldb) bt"));
    expect(backtrace).toContain(`stop reason = signal ${signal}`);
    const frames = backtrace.split("\n").filter((line) => /^ {2}[* ] frame #\d+: 0x[0-9a-f]+ /.test(line));
    const own = frames.filter((line) => line.includes(` at ${name}.c:`));
    // A stack overflow's frame 0 is where the stack ran out, the opening of the recursing function.
    const line = name === "stack-overflow" ? openingLine(get(name).built.source, "parse_value") : culpritLine(name);
    expect(own.some((text) => text.includes(` at ${name}.c:${line}:`)), backtrace).toBe(true);
    // Unwound through the program's own frames, except where Breakpad kept no stack: rsp
    // overflowed below the stack's mapping, so only the registers place frame 0.
    if (name === "stack-overflow") expect(frames[0]).toContain(` at ${name}.c:`);
    else expect(own.length).toBeGreaterThanOrEqual(2);
  });
});

// A known bug of the product's reader, left for the lead to fix (this test then fails: drop `.fails`).
// Breakpad copies /proc/<crashing tid>/status; when the crashing thread is not the main one, its
// `Pid:` line is that thread's id and `Tgid:` the process's. readMinidump takes `Pid:` (as LLDB
// does, which prints "Process <tid> stopped"), so the process id it reports is the thread's.
it("a Breakpad minidump of a crash in a worker thread gives the process's id, not the crashing thread's", () => {
  const { core, facts } = get("thread-crash");
  expect(core.stopReason?.thread).not.toBe(core.pid);
  expect(facts.processId).toBe(core.pid);
});

/** What gdb says of each crash on its core: the verdict dumpdbg must give on the minidump too. */
const VERDICTS: Record<string, { kind: string; culprit: string; signalCode: string; signature?: string }> = {
  "null-deref": { kind: "null-dereference", culprit: "send_to_client", signalCode: "SEGV_MAPERR" },
  "thread-crash": { kind: "null-dereference", culprit: "process_job", signalCode: "SEGV_MAPERR" },
  "abort-msg": { kind: "heap-corruption", culprit: "release_token", signalCode: "SI_TKILL" },
  "div-zero": { kind: "division-by-zero", culprit: "average_latency", signalCode: "FPE_INTDIV" },
  // Breakpad saves no stack for a thread whose stack pointer has left its stack's mapping: one frame.
  "stack-overflow": { kind: "stack-overflow", culprit: "parse_value", signalCode: "SEGV_MAPERR", signature: "stack-overflow | parse_value" },
};

describe.each(PROGRAMS)("dumpdbg triage of the Breakpad minidump of $name", ({ name, signal }) => {
  it("gives the verdict gdb gives on the core: kind, signal, culprit and line, thread", async () => {
    const { dump, built } = dumped.get(name) as Dumped;
    const onCore = await runCli(["triage", built.core, "--json"]);
    const onMinidump = await runCli(["triage", dump, "--exe", built.exe, "--json"]);
    expect(onMinidump.stderr).not.toMatch(/internal error/);
    expect(onMinidump.code, onMinidump.stderr).toBe(0);
    const core = JSON.parse(onCore.stdout) as Crash;
    const minidump = JSON.parse(onMinidump.stdout) as Crash;
    const expected = VERDICTS[name];
    expect(minidump).toMatchObject({ kind: expected?.kind, signal, signalCode: expected?.signalCode });
    // With frame 0 alone, a stack overflow's recursive call is not in the dump: the line is frame 0's.
    expect(minidump.culprit).toMatchObject({ function: expected?.culprit, line: name === "stack-overflow" ? openingLine(built.source, expected?.culprit ?? "") : culpritLine(name) });
    expect(minidump.thread.lwp).toBe(core.thread.lwp);
    expect(minidump.faultAddress).toBe(core.faultAddress);
    expect(minidump.signature).toBe(expected?.signature ?? core.signature);
  }, 120_000);
});
