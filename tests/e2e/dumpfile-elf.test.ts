/**
 * The ELF core reader on real cores: small C programs crash under gdb, which writes their cores
 * (as `gcore` does, whatever the kernel's core_pattern), and what the reader says is checked
 * against what is known without it: what each program logged about itself (pid, uid, thread id,
 * the offset it wrote at), the signal it provoked, readelf on the executable and on the core,
 * and gdb's own reading of the same core.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { buildIdMismatch, inspectDump, resolveExecutable } from "../../src/debuggers/dump.js";
import { DumpFile, programBuildId, readElfCore, type ElfCoreFacts } from "../../src/debuggers/dumpfile/index.js";

const execFileAsync = promisify(execFile);
const PROGRAMS = fileURLToPath(new URL("../fixtures/dumpfile/", import.meta.url));

// <signal.h> and <asm-generic/siginfo.h>
const SIGABRT = 6;
const SIGSEGV = 11;
const SEGV_MAPERR = 1;
const SI_USER = 0;
const SI_TKILL = -6;
/** pr_psargs holds 80 bytes, the last a NUL. */
const PSARGS_CHARS = 79;
/** pr_fname holds 16 bytes, the last a NUL. */
const FNAME_CHARS = 15;

interface Crash {
  exe: string;
  core: string;
  args: string[];
  /** The "key: value" lines the program printed before it died. */
  log: Record<string, number>;
  facts: ElfCoreFacts;
}

async function run(command: string, args: string[], cwd?: string): Promise<string> {
  const { stdout, stderr } = await execFileAsync(command, args, { cwd, maxBuffer: 64 * 1024 * 1024 });
  return stdout + stderr;
}

function gdb(commands: string[], files: string[], cwd?: string): Promise<string> {
  return run("gdb", ["-nx", "-batch", "-iex", "set debuginfod enabled off", ...commands.flatMap((c) => ["-ex", c]), ...files], cwd);
}

const gdbOnCore = new Map<string, Promise<string>>();

/** gdb's output for `commands` on the crash's core, run once per file and commands. */
function onCore(crash: Crash, commands: string[]): Promise<string> {
  const key = JSON.stringify([crash.core, commands]);
  let output = gdbOnCore.get(key);
  if (!output) gdbOnCore.set(key, (output = gdb(commands, [crash.exe, crash.core])));
  return output;
}

function readCore(core: string): ElfCoreFacts {
  const file = DumpFile.open(core);
  try {
    return readElfCore(file);
  } finally {
    file.close();
  }
}

/** Builds tests/fixtures/dumpfile/<name>.c, runs it under gdb until it dies, and has gdb write its core. */
async function crashUnderGdb(dir: string, name: string, options: { flags?: string[]; args?: string[] } = {}): Promise<Crash> {
  const exe = path.join(dir, name);
  const core = path.join(dir, `${name}.core`);
  const args = options.args ?? [];
  await run("gcc", ["-g", "-O0", "-pthread", ...(options.flags ?? []), "-o", exe, path.join(PROGRAMS, `${name}.c`)]);
  const output = await gdb(["run " + args.join(" "), `generate-core-file ${core}`], [exe], dir);
  if (!(await stat(core).catch(() => null))) throw new Error(`gdb wrote no core of ${name}:\n${output}`);
  const log = Object.fromEntries([...output.matchAll(/^([a-z][a-z ]*): (-?\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
  return { exe, core, args, log, facts: readCore(core) };
}

function fact(crash: Crash, key: string): number {
  const value = crash.log[key];
  if (value === undefined) throw new Error(`${path.basename(crash.exe)} did not log "${key}"`);
  return value;
}

const hex = (value: bigint | number) => `0x${value.toString(16)}`;

/** `info proc mappings` on a core: gdb's reading of NT_FILE. */
async function gdbMappings(crash: Crash): Promise<{ start: string; end: string; offset: string; path: string }[]> {
  const output = await onCore(crash, ["info proc mappings"]);
  return [...output.matchAll(/^\s*(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+(\/\S.*)$/gm)].map((m) => ({
    start: m[1] ?? "",
    end: m[2] ?? "",
    offset: m[3] ?? "",
    path: m[4] ?? "",
  }));
}

/** `thread apply all info registers`: each thread's registers as gdb reads them, by LWP. */
async function gdbRegisters(crash: Crash): Promise<Map<number, Record<string, string>>> {
  const output = await onCore(crash, ["thread apply all info registers"]);
  const threads = new Map<number, Record<string, string>>();
  let current: Record<string, string> | null = null;
  for (const line of output.split("\n")) {
    const header = /^Thread \d+ .*\bLWP (\d+)\)+:$/.exec(line);
    if (header) threads.set(Number(header[1]), (current = {}));
    const register = /^([a-z][a-z0-9_]*)\s+(0x[0-9a-f]+)\s/.exec(line);
    if (register && current) current[register[1] ?? ""] = register[2] ?? "";
  }
  return threads;
}

/** `info auxv` on a core: type, value and, for string entries, the string. */
async function gdbAuxv(crash: Crash): Promise<{ type: number; value: string; text: string | null }[]> {
  const output = await onCore(crash, ["info auxv"]);
  return [...output.matchAll(/^(\d+)\s+(?:AT_\w+|\?\?\?)\s.*?\s(0x[0-9a-f]+|\d+)(?: "(.*)")?$/gm)].map((m) => ({
    type: Number(m[1]),
    value: hex(BigInt(m[2] ?? "")),
    text: m[3] ?? null,
  }));
}

/** The value of one `p EXPR` on the core. */
async function gdbPrint(crash: Crash, expression: string): Promise<string> {
  const output = await onCore(crash, [`p ${expression}`]);
  const value = /^\$1 = (?:\([^)]*\) )?(.*)$/m.exec(output)?.[1];
  if (value === undefined) throw new Error(`gdb could not print ${expression}:\n${output}`);
  return value;
}

async function buildIdOnDisk(file: string): Promise<string> {
  const id = /Build ID: ([0-9a-f]+)/.exec(await run("readelf", ["-n", file]))?.[1];
  if (!id) throw new Error(`${file} has no build id`);
  return id;
}

async function elfHeaderField(file: string, field: string): Promise<bigint> {
  const value = new RegExp(`^\\s*${field}:\\s+(0x[0-9a-f]+|\\d+)`, "m").exec(await run("readelf", ["-h", file]))?.[1];
  if (!value) throw new Error(`readelf -h ${file} shows no ${field}`);
  return BigInt(value);
}

let dir: string;
let pool: Crash;
let selfKill: Crash;
let abortion: Crash;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "dumpdbg-elf-"));
  [pool, selfKill, abortion] = await Promise.all([
    crashUnderGdb(dir, "session-pool"),
    crashUnderGdb(dir, "config-kill", { flags: ["-no-pie"], args: ["--check", "--config", "/etc/chat.conf"] }),
    crashUnderGdb(dir, "quota-abort"),
  ]);
}, 180_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("a core of a worker that writes through a NULL session (threads, PIE)", () => {
  it("reads the whole core without a problem", async () => {
    expect(pool.facts.problems).toEqual([]);
    expect(pool.facts.format).toBe("elf-core");
    expect(pool.facts.platform).toEqual({ os: "linux", arch: "x86_64", pointerSize: 8 });
    expect(pool.facts.expectedBytes).toBeLessThanOrEqual((await stat(pool.core)).size);
  });

  it("has SIGSEGV, SEGV_MAPERR and the address of the member written, in the crashing thread", async () => {
    expect(pool.facts.stopReason).toEqual({
      type: "signal",
      signo: SIGSEGV,
      code: SEGV_MAPERR,
      errno: 0,
      address: hex(fact(pool, "state offset")),
      senderPid: null,
      senderUid: null,
      thread: fact(pool, "crashing thread"),
      recordedBy: "kernel",
    });
    expect(await gdbPrint(pool, "$_siginfo.si_code")).toBe(String(SEGV_MAPERR));
    expect(await gdbPrint(pool, "$_siginfo._sifields._sigfault.si_addr")).toBe(pool.facts.stopReason?.address);
  });

  it("lists every thread the program ran, the crashing one first, with the LWPs gdb sees", async () => {
    const { threads } = pool.facts;
    expect(threads).toHaveLength(fact(pool, "workers") + 1);
    expect(threads[0]?.lwp).toBe(fact(pool, "crashing thread"));
    expect(threads[0]?.signal).toBe(SIGSEGV);
    expect(threads.map((t) => t.lwp)).toContain(fact(pool, "pid"));
    const gdbThreads = await gdbRegisters(pool);
    expect(threads.map((t) => t.lwp).sort()).toEqual([...gdbThreads.keys()].sort());
  });

  it("gives each thread the registers gdb reads from the core", async () => {
    const gdbThreads = await gdbRegisters(pool);
    for (const thread of pool.facts.threads) {
      const expected = gdbThreads.get(thread.lwp) ?? {};
      const shared = Object.keys(thread.registers).filter((name) => name in expected);
      expect(shared).toEqual(expect.arrayContaining(["rip", "rsp", "rbp", "rax", "rdi", "r15", "eflags", "cs", "ss"]));
      for (const name of shared) expect({ [name]: thread.registers[name] }).toEqual({ [name]: expected[name] });
    }
    const crashing = await onCore(pool, ["info registers rip rsp"]);
    expect(crashing).toMatch(new RegExp(`^rip\\s+${pool.facts.threads[0]?.registers.rip}\\s`, "m"));
    expect(crashing).toMatch(new RegExp(`^rsp\\s+${pool.facts.threads[0]?.registers.rsp}\\s`, "m"));
  });

  it("names the process: pid, uid, program name and command line", async () => {
    expect(pool.facts.pid).toBe(fact(pool, "pid"));
    expect(pool.facts.uid).toBe(fact(pool, "uid"));
    expect(pool.facts.uid).toBe(process.getuid?.());
    expect(pool.facts.programName).toBe(path.basename(pool.exe).slice(0, FNAME_CHARS));
    expect(pool.facts.commandLine).toBe(pool.exe.slice(0, PSARGS_CHARS));
  });

  it("lists the files mapped as gdb reads them", async () => {
    const mappings = await gdbMappings(pool);
    expect(mappings.map((m) => m.path)).toContain(pool.exe);
    expect(pool.facts.mappedFiles.map((m) => ({ start: hex(m.start), end: hex(m.end), offset: hex(m.fileOffset), path: m.path }))).toEqual(mappings);
  });

  it("makes a module of each mapped ELF file, spanning its mappings, with the build id its file on disk has", async () => {
    const mappings = await gdbMappings(pool);
    const paths = [...new Set(mappings.map((m) => m.path))];
    expect(pool.facts.modules.map((m) => m.path)).toEqual(paths);
    for (const module of pool.facts.modules) {
      const own = mappings.filter((m) => m.path === module.path);
      expect(module.start).toBe(hex(own.map((m) => BigInt(m.start)).reduce((a, b) => (a < b ? a : b))));
      expect(module.end).toBe(hex(own.map((m) => BigInt(m.end)).reduce((a, b) => (a > b ? a : b))));
      expect(module.buildId).toBe(await buildIdOnDisk(module.path));
    }
    const exeFile = DumpFile.open(pool.exe);
    try {
      expect(pool.facts.modules.find((m) => m.path === pool.exe)?.buildId).toBe(programBuildId(exeFile));
    } finally {
      exeFile.close();
    }
  });

  it("has one region per PT_LOAD segment readelf shows, named by the file mapped there", async () => {
    const table = await run("readelf", ["-lW", pool.core]);
    const loads = [...table.matchAll(/^\s*LOAD\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+([RWE ]+?)\s+0x[0-9a-f]+$/gm)];
    expect(loads.length).toBeGreaterThan(5);
    const mappings = await gdbMappings(pool);
    const expected = loads.map(([, vaddr = "", memsz = "", flags = ""]) => {
      const start = BigInt(vaddr);
      const mapping = mappings.find((m) => BigInt(m.start) <= start && start < BigInt(m.end));
      return {
        start: hex(start),
        end: hex(start + BigInt(memsz)),
        permissions: `${flags.includes("R") ? "r" : "-"}${flags.includes("W") ? "w" : "-"}${flags.includes("E") ? "x" : "-"}`,
        file: mapping?.path ?? null,
        offset: mapping ? hex(BigInt(mapping.offset) + start - BigInt(mapping.start)) : null,
      };
    });
    expect(pool.facts.regions).toEqual(expected);
  });

  it("reads the auxiliary vector as gdb does, with the entry point where the PIE program was loaded", async () => {
    const auxv = pool.facts.auxv;
    const fromGdb = await gdbAuxv(pool);
    expect(fromGdb.length).toBeGreaterThan(10);
    expect(auxv?.pairs).toEqual(fromGdb.filter((p) => p.type !== 0).map(({ type, value }) => ({ type, value })));
    const AT_EXECFN = 31;
    const AT_PLATFORM = 15;
    expect(auxv?.execfnPath).toBe(fromGdb.find((p) => p.type === AT_EXECFN)?.text);
    expect(auxv?.execfnPath).toBe(pool.exe);
    expect(auxv?.platformName).toBe(fromGdb.find((p) => p.type === AT_PLATFORM)?.text);

    const loadBase = BigInt((await gdbMappings(pool)).find((m) => m.path === pool.exe && BigInt(m.offset) === 0n)?.start ?? "0");
    expect(auxv?.entry).toBe(hex(loadBase + (await elfHeaderField(pool.exe, "Entry point address"))));
    expect(auxv?.phdr).toBe(hex(loadBase + (await elfHeaderField(pool.exe, "Start of program headers"))));
    const vdso = pool.facts.regions.find((r) => r.start === auxv?.sysinfoEhdr);
    expect(vdso?.permissions).toBe("r-x");
  });

  it("is what inspectDump reports, and the executable it names matches the core by build id", () => {
    const dump = inspectDump(pool.core);
    expect(dump).toMatchObject({ format: "elf-core", programName: pool.facts.programName, commandLine: pool.facts.commandLine, executableFromNotes: pool.exe });
    expect(dump.facts).toEqual(pool.facts);
    expect(resolveExecutable(dump, undefined)).toBe(pool.exe);
    expect(buildIdMismatch(dump, pool.exe)).toBeNull();
    expect(buildIdMismatch(dump, abortion.exe)).toMatch(/does not match the core/);
  });
});

describe("a core of a process that sends itself SIGABRT (not PIE)", () => {
  it("has SIGABRT sent by the process itself: SI_USER, its pid and uid, and no address", async () => {
    expect(selfKill.facts.problems).toEqual([]);
    expect(selfKill.facts.stopReason).toEqual({
      type: "signal",
      signo: SIGABRT,
      code: SI_USER,
      errno: 0,
      address: null,
      senderPid: fact(selfKill, "pid"),
      senderUid: fact(selfKill, "uid"),
      thread: fact(selfKill, "pid"),
      recordedBy: "kernel",
    });
    expect(await gdbPrint(selfKill, "$_siginfo._sifields._kill.si_pid")).toBe(String(fact(selfKill, "pid")));
  });

  it("has its one thread, and the command line with its arguments", async () => {
    expect(selfKill.facts.threads.map((t) => t.lwp)).toEqual([fact(selfKill, "pid")]);
    expect(selfKill.facts.pid).toBe(fact(selfKill, "pid"));
    const full = [selfKill.exe, ...selfKill.args].join(" ");
    expect(selfKill.facts.commandLine).toBe(full.slice(0, PSARGS_CHARS));
    // gdb reads the same field when it opens the core.
    const loaded = await onCore(selfKill, []);
    expect(loaded).toContain(`Core was generated by \`${selfKill.facts.commandLine}'.`);
  });

  it("has the entry point of the ELF header, the program being loaded where it was linked", async () => {
    expect(selfKill.facts.auxv?.entry).toBe(hex(await elfHeaderField(selfKill.exe, "Entry point address")));
    const exeModule = selfKill.facts.modules.find((m) => m.path === selfKill.exe);
    expect(exeModule?.buildId).toBe(await buildIdOnDisk(selfKill.exe));
  });
});

describe("a core of a process that calls abort()", () => {
  it("has SIGABRT raised by the process: SI_TKILL with its own pid, and no address", async () => {
    expect(abortion.facts.stopReason).toMatchObject({
      signo: SIGABRT,
      code: SI_TKILL,
      address: null,
      senderPid: fact(abortion, "pid"),
      senderUid: process.getuid?.(),
    });
    expect(await gdbPrint(abortion, "$_siginfo.si_code")).toBe(String(SI_TKILL));
    expect(abortion.facts.pid).toBe(fact(abortion, "pid"));
    expect(abortion.facts.commandLine).toBe(abortion.exe.slice(0, PSARGS_CHARS));
  });
});
