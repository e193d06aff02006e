/**
 * gdb's text parsers and the analyzers over them, on output captured from real gdb at test time:
 * each core is opened once, the commands run, and the parsers and the registry are checked against
 * what gdb printed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { parseAbortMessage, ABORT_MESSAGE_COMMAND } from "../../src/debuggers/gdb/text/abort-message.js";
import { parseBacktrace, parseThreadBacktraces } from "../../src/debuggers/gdb/text/backtrace.js";
import { classifyCrash } from "../../src/analyzers/triage/classify.js";
import { crashSignature, culpritIndex, isRuntimeFrame, isRuntimeModule, moduleLocator, normalizeFunctionName, placeFrames, type PlacedFrame } from "../../src/analyzers/culprit.js";
import { deadlockCycles, lockWait } from "../../src/analyzers/deadlock.js";
import { parseDisassembly } from "../../src/debuggers/gdb/text/disassembly.js";
import { callArgumentAddress, memoryAccess } from "../../src/analyzers/x86-64.js";
import { parseMappings, parseTargetFiles } from "../../src/debuggers/gdb/text/mappings.js";
import { parseMemoryString, parseMemoryWords } from "../../src/debuggers/gdb/text/memory.js";
import { keyRegisters } from "../../src/analyzers/registers.js";
import { parseRegisters } from "../../src/debuggers/gdb/text/registers.js";
import { RECURSION_WINDOW, RECURSION_WINDOW_SKIP, recursiveCallIndex, repeatingCycle } from "../../src/analyzers/recursion.js";
import { analyzeOutput as analyzeProbe } from "../../src/analyzers/registry.js";
import { gdbVocabulary } from "../../src/debuggers/gdb/vocabulary.js";
import { parseSharedLibraries } from "../../src/debuggers/gdb/text/shared-libraries.js";
import { parseExitSignal, parseSiginfo } from "../../src/debuggers/gdb/text/signals.js";
import { signalCodeName } from "../../src/analyzers/signals.js";
import { parseThreads } from "../../src/debuggers/gdb/text/threads.js";
import { parseLocals } from "../../src/debuggers/gdb/text/variables.js";
import { GdbSession } from "../../src/debuggers/gdb/gdb-session.js";
import { buildCore, culpritLine, type BuildOptions } from "../helpers/cores.js";

type Captured = Record<string, string>;

/** A gdb command's output read as the probe it is, then summarised. */
function analyzeOutput(command: string, output: string) {
  const probe = gdbVocabulary.recognise(command);
  return probe ? analyzeProbe(probe, gdbVocabulary, output) : null;
}

/** Opens the core once and keeps what gdb printed for each command. */
async function capture(name: string, commands: string[], build: BuildOptions = {}): Promise<Captured> {
  const built = await buildCore(name, build);
  const gdb = new GdbSession({ dump: built.core, executable: built.exe });
  await gdb.open();
  const out: Captured = {};
  try {
    for (const command of commands) {
      const result = await gdb.run(command);
      out[command] = result.output;
    }
  } finally {
    await gdb.close();
  }
  return out;
}

const BASIC = ["bt", "bt full", "info registers", "p $_siginfo", "p $_exitsignal", "info threads", "info sharedlibrary", "info files", "info proc mappings", "x/i $pc", "info args", "frame 1", "info locals"];

let nullDeref: Captured;
let threadCrash: Captured;
let deadlock: Captured;
let assertCore: Captured;
let abortCore: Captured;
let exception: Captured;
let exceptionO2: Captured;
let rustNull: Captured;
let badJump: Captured;
let nullWrite: Captured;
let stackOverflow: Captured;
let rustOverflow: Captured;

beforeAll(async () => {
  [nullDeref, threadCrash, deadlock, assertCore, abortCore, exception, exceptionO2, rustNull, badJump, nullWrite, stackOverflow, rustOverflow] =
    await Promise.all([
      capture("null-deref", BASIC),
      capture("thread-crash", ["info threads", "thread apply all bt", "bt"]),
      capture("deadlock", ["info threads", "thread apply all bt", "p $_exitsignal", "info sharedlibrary", "info files"]),
      capture("assert", ["bt", ABORT_MESSAGE_COMMAND, "p $_siginfo"]),
      capture("abort", ["bt", ABORT_MESSAGE_COMMAND]),
      capture("uncaught-exception", ["bt", "info sharedlibrary"]),
      capture("uncaught-exception", ["bt", "frame 8", "disassemble"], { flags: ["-O2", "-g0"] }),
      capture("rust-null", ["p $_siginfo", "bt", "x/i $pc"]),
      capture("bad-jump", ["bt", "x/i $pc", "info files", "p $_siginfo"]),
      capture("null-write", ["x/i $pc", "x/4gx $sp", "x/s *(char **)&__progname"]),
      capture("stack-overflow", ["bt 40", "x/i $pc"]),
      capture("rust-stack-overflow", ["bt 40", `bt ${RECURSION_WINDOW}`]),
    ]);
});

describe("backtraces", () => {
  it("parses a one-thread backtrace with functions, args, files and lines", () => {
    const { frames, truncated } = parseBacktrace(nullDeref["bt"] ?? "");
    expect(truncated).toBe(false);
    expect(frames.map((f) => f.function)).toEqual(["send_to_client", "broadcast", "main"]);
    expect(frames[0]).toMatchObject({ level: 0, line: culpritLine("null-deref") });
    expect(frames[0]?.file).toMatch(/null-deref\.c$/);
    expect(frames[0]?.args).toMatch(/^session=0x[0-9a-f]+, message=0x[0-9a-f]+ ".*"$/);
    expect(frames[1]?.address).toMatch(/^0x[0-9a-f]+$/);
  });

  it("keeps `bt full` locals with their frame", () => {
    const { frames } = parseBacktrace(nullDeref["bt full"] ?? "");
    expect(frames).toHaveLength(3);
    expect(frames.some((f) => (f.locals ?? []).length > 0)).toBe(true);
  });

  it("parses argument strings holding quotes, backticks and parentheses (assert's frames)", () => {
    const { frames } = parseBacktrace(assertCore["bt"] ?? "");
    const assertFail = frames.find((f) => f.function === "__assert_fail_base");
    expect(assertFail?.args).toContain("Assertion `%s' failed.");
    expect(assertFail?.file).toBe("./assert/assert.c");
    expect(frames.find((f) => f.line === culpritLine("assert"))?.function).toBe("ring_buffer_write");
  });

  it("parses frames without debug info: `??`, `from LIBRARY`, and C++ names with parameter lists", () => {
    const { frames } = parseBacktrace(exception["bt"] ?? "");
    const unnamed = frames.find((f) => f.function === null);
    expect(unnamed?.from).toMatch(/libstdc\+\+\.so/);
    expect(frames.find((f) => f.function === "std::terminate()")?.from).toMatch(/libstdc\+\+/);
    expect(frames.some((f) => f.function === "__cxa_throw")).toBe(true);
  });

  it("notices a listing cut by a frame count", () => {
    const trace = parseBacktrace(stackOverflow["bt 40"] ?? "");
    expect(trace.truncated).toBe(true);
    expect(trace.frames).toHaveLength(40);
    expect(repeatingCycle(trace.frames)).toEqual({ skip: 0, functions: ["parse_value"] });
  });

  it("blames a stack overflow on the recursive call, whose line repeats, not on where the stack ran out", () => {
    const frames = placeFrames(parseBacktrace(stackOverflow["bt 40"] ?? "").frames, () => null, null);
    const call = recursiveCallIndex(frames, 0);
    expect(call).toBe(1);
    expect(frames[0]?.line).not.toBe(frames[1]?.line);
    expect(frames[call ?? 0]?.line).toBe(culpritLine("stack-overflow"));
    // No line repeats (a single huge frame): no recursive call to blame.
    expect(recursiveCallIndex(frames.slice(0, 1), 0)).toBeNull();
  });

  it("parses `thread apply all bt` into one backtrace per thread", () => {
    const threads = parseThreadBacktraces(threadCrash["thread apply all bt"] ?? "");
    expect(threads.length).toBe(parseThreads(threadCrash["info threads"] ?? "").length);
    expect(threads.every((t) => t.lwp !== null && t.frames.length > 0)).toBe(true);
    expect(threads.find((t) => t.thread === 1)?.frames[0]?.function).toBe("process_job");
  });
});

describe("threads, signals, registers", () => {
  it("parses `info threads`, marking the selected thread", () => {
    const threads = parseThreads(threadCrash["info threads"] ?? "");
    expect(threads).toHaveLength(5);
    const current = threads.filter((t) => t.current);
    expect(current).toHaveLength(1);
    expect(current[0]?.frame?.function).toBe("process_job");
    expect(threads.every((t) => typeof t.lwp === "number")).toBe(true);
  });

  it("parses $_siginfo in C and in Rust syntax", () => {
    expect(parseSiginfo(nullDeref["p $_siginfo"] ?? "")).toMatchObject({ signo: 11, code: 1 });
    expect(BigInt(parseSiginfo(nullDeref["p $_siginfo"] ?? "")?.address ?? "0x99999")).toBeLessThan(0x10000n);
    expect(rustNull["p $_siginfo"]).toMatch(/si_signo: 11/);
    expect(parseSiginfo(rustNull["p $_siginfo"] ?? "")).toMatchObject({ signo: 11, code: 1, address: "0x0" });
    const abort = parseSiginfo(assertCore["p $_siginfo"] ?? "");
    expect(abort && signalCodeName(abort.signo, abort.code)).toBe("SI_TKILL");
  });

  it("tells a crash's signal from a gcore dump's absence of one", () => {
    expect(parseExitSignal(nullDeref["p $_exitsignal"] ?? "")).toBe(11);
    expect(parseExitSignal(deadlock["p $_exitsignal"] ?? "")).toBeNull();
  });

  it("parses `info registers`", () => {
    const registers = parseRegisters(nullDeref["info registers"] ?? "");
    expect(registers.map((r) => r.name)).toEqual(expect.arrayContaining(["rax", "rip", "rsp", "eflags"]));
    const { pc, sp } = keyRegisters(registers);
    expect(pc).toMatch(/^0x[0-9a-f]+$/);
    expect(sp).toMatch(/^0x7f/);
    expect(registers.find((r) => r.name === "rip")?.natural).toMatch(/<send_to_client\+\d+>/);
  });
});

describe("address space", () => {
  it("parses `info sharedlibrary`", () => {
    const libraries = parseSharedLibraries(exception["info sharedlibrary"] ?? "");
    expect(libraries.map((l) => l.path)).toEqual(expect.arrayContaining([expect.stringMatching(/libc\.so\.6$/), expect.stringMatching(/libstdc\+\+\.so/)]));
    expect(libraries.every((l) => l.from !== null && l.symbolsRead)).toBe(true);
  });

  it("parses `info proc mappings` (a core's have no permissions)", () => {
    const mappings = parseMappings(nullDeref["info proc mappings"] ?? "");
    expect(mappings.length).toBeGreaterThan(5);
    expect(mappings.some((m) => m.objfile?.endsWith("/null-deref"))).toBe(true);
    expect(mappings.every((m) => BigInt(m.start) < BigInt(m.end))).toBe(true);
  });

  it("parses `info files`: the program, its code sections and the core's segments", () => {
    const files = parseTargetFiles(nullDeref["info files"] ?? "");
    expect(files.executable).toMatch(/\/null-deref$/);
    expect(files.core).toMatch(/\/core$/);
    expect(files.sections.some((s) => s.source === "core" && /^load/.test(s.name))).toBe(true);
    expect(files.sections.some((s) => s.name === ".text" && /libc\.so/.test(s.source))).toBe(true);
  });

  it("places frames in their modules and finds the culprit past the runtime's frames", () => {
    const files = parseTargetFiles(deadlock["info files"] ?? "");
    const at = moduleLocator(files, parseSharedLibraries(deadlock["info sharedlibrary"] ?? ""));
    const waits = parseThreadBacktraces(deadlock["thread apply all bt"] ?? "").flatMap((t) => {
      const wait = lockWait(t.thread, placeFrames(t.frames, at, null));
      return wait ? [wait] : [];
    });
    expect(waits).toHaveLength(2);
    for (const wait of waits) {
      expect(wait.lock).toMatch(/^0x[0-9a-f]+$/);
      expect(wait.waiter).toMatchObject({ function: "transfer_funds", line: culpritLine("deadlock") });
    }
    const [a, b] = waits;
    if (!a?.lock || !b?.lock) throw new Error("no locks");
    // Each thread owns the lock the other waits for.
    const cycles = deadlockCycles(waits, new Map([[a.lock, b.thread], [b.lock, a.thread]]));
    expect(cycles).toHaveLength(1);
    expect(cycles[0]?.map((e) => e.heldByThread)).toEqual([b.thread, a.thread].sort((x, y) => x - y).reverse());
    expect(deadlockCycles(waits, new Map([[a.lock, b.thread]]))).toEqual([]);
  });
});

describe("code", () => {
  it("tells reads, writes and execution from the faulting instruction", () => {
    const load = parseDisassembly(nullDeref["x/i $pc"] ?? "").instructions[0];
    expect(load?.current).toBe(true);
    expect(load && memoryAccess(load)).toBe("read");
    const store = parseDisassembly(nullWrite["x/i $pc"] ?? "").instructions[0];
    expect(store && memoryAccess(store)).toBe("write");
    const push = parseDisassembly(stackOverflow["x/i $pc"] ?? "").instructions[0];
    expect(push && memoryAccess(push)).toBe("write");
    const nowhere = parseDisassembly(badJump["x/i $pc"] ?? "");
    expect(nowhere).toMatchObject({ instructions: [], unreadable: true });
  });

  it("recovers __cxa_throw's type_info argument from its caller's code", () => {
    const frames = parseBacktrace(exceptionO2["bt"] ?? "").frames;
    const caller = frames[frames.findIndex((f) => f.function === "__cxa_throw") + 1];
    expect(caller?.level).toBe(8);
    const code = parseDisassembly(exceptionO2["disassemble"] ?? "");
    expect(code.function).toMatch(/cold/);
    const tinfo = callArgumentAddress(code.instructions, caller?.address ?? "", "%rsi");
    expect(tinfo?.symbol).toMatch(/^_ZTISt13runtime_error/);
  });

  it("reads glibc's abort message, and knows when there is none", () => {
    expect(parseAbortMessage(assertCore[ABORT_MESSAGE_COMMAND] ?? "")).toMatch(/ring_buffer_write: Assertion `.*' failed\.$/);
    expect(parseAbortMessage(abortCore[ABORT_MESSAGE_COMMAND] ?? "")).toBeNull();
  });

  it("parses memory words and strings", () => {
    const { start, words } = parseMemoryWords(nullWrite["x/4gx $sp"] ?? "");
    expect(start).not.toBeNull();
    expect(words).toHaveLength(4);
    expect(parseMemoryString(nullWrite["x/s *(char **)&__progname"] ?? "")).toBe("null-write");
  });

  it("parses `info args` and `info locals`", () => {
    expect(parseLocals(nullDeref["info args"] ?? "").map((v) => v.name)).toEqual(["session", "message"]);
    expect(parseLocals(nullDeref["info locals"] ?? "").length).toBeGreaterThanOrEqual(0);
    expect(parseLocals("No locals.")).toEqual([]);
  });
});

describe("names, culprit, signature, kind", () => {
  it("normalises names across builds: parameters, templates, clones, hashes", () => {
    const o2 = parseBacktrace(exceptionO2["bt"] ?? "").frames.map((f) => f.function ?? "");
    const cold = o2.find((name) => name.startsWith("load_plugin("));
    expect(cold).toMatch(/\[clone \.cold\]$/);
    expect(normalizeFunctionName(cold ?? "")).toBe("load_plugin");
    expect(normalizeFunctionName("std::terminate()")).toBe("std::terminate");
    expect(normalizeFunctionName("run<app::Parser>")).toBe("run");
    expect(normalizeFunctionName("Matrix::operator()(int, int) const")).toBe("Matrix::operator()");
    expect(normalizeFunctionName("rust_panic::order_total::haa37039758f2c28e")).toBe("rust_panic::order_total");
    expect(normalizeFunctionName("__GI_raise")).toBe("raise");
    expect(normalizeFunctionName("(anonymous namespace)::worker")).toBe("(anonymous namespace)::worker");
  });

  it("skips libc, libstdc++ and the terminate machinery to the throwing frame", () => {
    const frames = placeFrames(parseBacktrace(exception["bt"] ?? "").frames, () => null, null);
    const culprit = culpritIndex(frames);
    expect(culprit === null ? null : frames[culprit]?.function).toBe("read_field");
    const kind = classifyCrash({ signal: 6, siginfo: null, pc: null, pcInCode: null, frames, stackExhausted: false, abortMessage: null, deadlocked: false });
    expect(kind).toBe("uncaught-exception");
    expect(crashSignature(kind, frames, culprit)).toBe("uncaught-exception | read_field | parse_version | load_plugin");
  });

  it("classifies aborts from the frames and the abort message", () => {
    const frames = placeFrames(parseBacktrace(assertCore["bt"] ?? "").frames, () => null, null);
    const facts = { signal: 6, siginfo: null, pc: null, pcInCode: null, frames, stackExhausted: false, deadlocked: false };
    expect(classifyCrash({ ...facts, abortMessage: parseAbortMessage(assertCore[ABORT_MESSAGE_COMMAND] ?? "") })).toBe("assertion-failure");
    expect(classifyCrash({ ...facts, frames: [], abortMessage: "free(): double free detected in tcache 2" })).toBe("double-free");
    expect(classifyCrash({ ...facts, frames: [], abortMessage: "malloc(): corrupted top size" })).toBe("heap-corruption");
    expect(classifyCrash({ ...facts, frames: [], abortMessage: null })).toBe("abort");
  });

  it("finds a recursion whose stack ran out 25 frames deep in a library call, in the deeper window", () => {
    const frame = (level: number, fn: string) => ({ level, address: null, function: fn, args: "", file: null, line: null, from: null });
    const handler = ["__pthread_kill_implementation", "raise", "abort", "std::process::abort", "signal_handler", "<signal handler called>"];
    const hashing = Array.from({ length: 19 }, (_, i) => `core::hash::sip::write_${i}`);
    const stack = [...handler, ...hashing, ...Array.from({ length: RECURSION_WINDOW }, () => "rust_stack_overflow::load")].map((fn, level) => frame(level, fn));
    expect(repeatingCycle(stack.slice(0, 40))).toBeNull();
    expect(repeatingCycle(stack.slice(0, RECURSION_WINDOW), RECURSION_WINDOW_SKIP)).toEqual({ skip: 25, functions: ["rust_stack_overflow::load"] });
  });

  it("reads Rust's guard-page handler under abort as a stack overflow, blamed on the recursive call", () => {
    // Where the stack ran out varies from run to run (ASLR): sometimes 25 inlined frames of std's
    // hashing stand above the first recursive call, and only the deeper window shows the cycle, as in triage.
    const top = parseBacktrace(rustOverflow["bt 40"] ?? "");
    const deeper = parseBacktrace(rustOverflow[`bt ${RECURSION_WINDOW}`] ?? "");
    const inTop = repeatingCycle(top.frames);
    const trace = inTop ? top : deeper;
    const frames = placeFrames(trace.frames, () => null, null);
    expect(classifyCrash({ signal: 6, siginfo: null, pc: null, pcInCode: null, frames, stackExhausted: false, abortMessage: null, deadlocked: false })).toBe("stack-overflow");
    const cycle = inTop ?? repeatingCycle(deeper.frames, RECURSION_WINDOW_SKIP);
    expect(cycle?.functions).toEqual(["rust_stack_overflow::load"]);
    const first = culpritIndex(frames);
    const call = recursiveCallIndex(frames, first ?? 0);
    expect(frames[call ?? 0]).toMatchObject({ function: "rust_stack_overflow::load", line: culpritLine("rust-stack-overflow") });
  });
});

describe("Windows modules, Rust and LLDB names", () => {
  /** A frame as a debugger names it; no address, no arguments. */
  const frame = (fn: string | null, module: string | null, file: string | null = null): PlacedFrame => ({
    level: 0, address: null, function: fn, args: "", file, line: null, from: null, module,
  });

  it("system and runtime DLLs are runtime, in either system's spelling; the program's own modules are not", () => {
    const runtime = [
      "C:\\Windows\\System32\\ntdll.dll",
      "C:\\Windows\\System32\\KERNEL32.DLL",
      "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/KERNELBASE.dll",
      "C:\\Windows\\System32\\msvcrt.dll",
      "C:\\Windows\\System32\\ucrtbase.dll",
      "C:\\app\\vcruntime140.dll",
      "C:\\app\\vcruntime140_1.dll",
      "C:\\app\\msvcp140.dll",
      "C:\\app\\msvcp140d.dll",
      "/work/build/libstdc++-6.dll",
      "/work/build/libgcc_s_seh-1.dll",
      "/work/build/libwinpthread-1.dll",
      "/lib/x86_64-linux-gnu/libc.so.6",
    ];
    for (const path of runtime) expect(isRuntimeModule(path), path).toBe(true);
    for (const path of ["C:\\app\\server.exe", "C:\\app\\plugin.dll", "/work/build/plugin.dll", "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "/work/app"]) {
      expect(isRuntimeModule(path), path).toBe(false);
    }
  });

  it("mingw's and MSVC's start-up and RaiseException are runtime even when linked into the program", () => {
    for (const fn of ["__tmainCRTStartup", "mainCRTStartup", "WinMainCRTStartup", "RaiseException", "RtlUserThreadStart", "BaseThreadInitThunk"]) {
      expect(isRuntimeFrame(frame(fn, "C:\\app\\server.exe")), fn).toBe(true);
    }
    expect(isRuntimeFrame(frame("handle_request", "C:\\app\\server.exe", "C:/src/server.c"))).toBe(false);
    expect(isRuntimeFrame(frame("memcpy", "C:\\Windows\\System32\\msvcrt.dll"))).toBe(true);
  });

  it("a frame with neither a function nor a file is runtime; with a file it is the program's", () => {
    expect(isRuntimeFrame(frame(null, "C:\\app\\server.exe"))).toBe(true);
    expect(isRuntimeFrame(frame(null, "C:\\app\\server.exe", "C:/src/server.c"))).toBe(false);
  });

  it("an unnamed frame is the culprit when its module is stripped whole, not when the module names other frames", () => {
    const strlen = frame("__strlen_evex", "/lib/x86_64-linux-gnu/libc.so.6");
    const ctypes = frame(null, "/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so");
    const ffi = frame("ffi_call", "/lib/x86_64-linux-gnu/libffi.so.8");
    const interpreter = frame("_PyObject_MakeTpCall", "/usr/bin/python3.11");
    const stripped = [strlen, ctypes, ffi, interpreter].map((f, level) => ({ ...f, level }));
    expect(culpritIndex(stripped)).toBe(1);
    expect(crashSignature("null-dereference", stripped, 1)).toBe("null-dereference | ??@_ctypes.cpython-311-x86_64-linux-gnu.so | _PyObject_MakeTpCall");
    // A statically linked runtime's stripped cold code in a program that names its own frames.
    const cold = frame(null, "C:\\app\\uncaught.exe");
    const thrower = frame("read_field", "C:\\app\\uncaught.exe", "C:/src/uncaught.cpp");
    expect(culpritIndex([cold, thrower].map((f, level) => ({ ...f, level })))).toBe(1);
  });

  it("an unnamed frame a stack scan found is the culprit too when its module is stripped whole (the module missing here)", () => {
    const libc = { ...frame(null, "/lix/x86_64-linux-gnu/libc.so.6"), level: 0 };
    const scanned = (f: ReturnType<typeof frame>, level: number) => ({ ...f, level, found: "scan" as const });
    const ctypes = scanned(frame(null, "/usr/lix/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so"), 1);
    const interpreter = scanned(frame("PyObject_CallOneArg", "/usr/bin/python3.11"), 2);
    expect(culpritIndex([libc, ctypes, interpreter])).toBe(1);
    // The function the program called through its PLT, named by the scan, stays another module's code.
    const strlen = { ...scanned(frame("strlen", null), 1), address: null };
    expect(culpritIndex([libc, strlen, { ...ctypes, level: 2 }])).toBe(2);
  });

  it("a Python frame of the standard library is the runtime wherever the interpreter's prefix is; site-packages are the program's", () => {
    const python = (file: string) => ({ ...frame("parse", null, file), language: "python" as const, module: null });
    for (const file of ["/usr/lib/python3.11/ctypes/__init__.py", "/usr/lib64/python3.11/threading.py", "/root/.pyenv/versions/3.11.7/lib/python3.11/queue.py", "/opt/tools/lib/python3.12/json/decoder.py", "<frozen importlib._bootstrap>"]) {
      expect(isRuntimeFrame(python(file)), file).toBe(true);
    }
    for (const file of ["/srv/app/ledger.py", "/usr/lib/python3/dist-packages/requests/api.py", "/srv/venv/lib/python3.11/site-packages/flask/app.py", "/usr/lib64/python3.11/site-packages/yaml/loader.py", "<string>"]) {
      expect(isRuntimeFrame(python(file)), file).toBe(false);
    }
  });

  it("the interpreter's own extension modules are the runtime, wherever its prefix is, in a stack its Python frames were read into", () => {
    const module = (fn: string | null, file: string) => frame(fn, file);
    const own = { ...frame("handle", null, "/srv/app.py"), language: "python" as const, module: null };
    for (const prefix of ["/usr/lib", "/usr/lib64", "/root/.pyenv/versions/3.11.7/lib"]) {
      const stack = [module(null, `${prefix}/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so`), module("_PyObject_MakeTpCall", "/usr/bin/python3.11"), own].map((f, level) => ({ ...f, level }));
      expect(culpritIndex(stack), prefix).toBe(2);
    }
    // The program's own C extension is not the interpreter's.
    const extension = [module("record_width", "/srv/records.cpython-311-x86_64-linux-gnu.so"), own].map((f, level) => ({ ...f, level }));
    expect(culpritIndex(extension)).toBe(0);
  });

  it("the start-up code crt files link into the executable is no culprit (older glibc's __libc_csu_init, a stale return address a scan finds)", () => {
    const abort = frame("abort", "/lib/x86_64-linux-gnu/libc.so.6");
    const csu = frame("__libc_csu_init", "/srv/app");
    const main = frame("main", "/srv/app", "/src/app.c");
    expect(culpritIndex([abort, csu, main].map((f, level) => ({ ...f, level })))).toBe(2);
    for (const name of ["_init", "frame_dummy", "__do_global_dtors_aux", "register_tm_clones"]) expect(isRuntimeFrame(frame(name, "/srv/app"))).toBe(true);
  });

  it("Rust's legacy escapes, closures and LLDB's global-namespace names are normalised", () => {
    const cases: Array<[string, string]> = [
      ["app::main::_$u7b$$u7b$closure$u7d$$u7d$::h0123456789abcdef", "app::main::{closure}"],
      ["app::main::{closure#0}", "app::main::{closure}"],
      ["app::main::{{closure}}", "app::main::{closure}"],
      ["_$LT$impl$u20$core..fmt..Debug$u20$for$u20$app..Foo$GT$::fmt::h0123456789abcdef", "<impl core::fmt::Debug for app::Foo>::fmt"],
      ["_$LT$app..Config$u20$as$u20$core..default..Default$GT$::default", "<app::Config as core::default::Default>::default"],
      ["::read_field", "read_field"],
      ["::read_field(char const*)", "read_field"],
    ];
    for (const [name, normalised] of cases) expect(normalizeFunctionName(name), name).toBe(normalised);
    const drop = "_$LT$alloc..vec..Vec$LT$T$C$A$GT$$u20$as$u20$core..ops..drop..Drop$GT$::drop::h0123456789abcdef";
    expect(normalizeFunctionName(drop)).toBe("<alloc::vec::Vec as core::ops::drop::Drop>::drop");
    expect(isRuntimeFrame(frame(drop, "/work/app", "/work/src/main.rs"))).toBe(true);
  });

  it("a Rust program's signature ends where std::rt::lang_start called its main", () => {
    const app = "/work/target/debug/app";
    const frames = [
      frame("core::panicking::panic", app, "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/panicking.rs"),
      frame("app::parse_config", app, "src/main.rs"),
      frame("app::main", app, "src/main.rs"),
      frame("core::ops::function::FnOnce::call_once<fn(), ()>", app, "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/ops/function.rs"),
      frame("std::rt::lang_start::{closure#0}<()>", app, "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/rt.rs"),
      frame("std::rt::lang_start_internal", app, null),
      frame("main", app, null),
    ];
    expect(culpritIndex(frames)).toBe(1);
    expect(crashSignature("null-dereference", frames, 1)).toBe("null-dereference | app::parse_config | app::main");
  });
});

describe("registry", () => {
  it("routes each command to its analyzer, with a summary and findings", () => {
    const cases: Array<[string, string, string]> = [
      ["bt", nullDeref["bt"] ?? "", "backtrace"],
      ["thread apply all bt", threadCrash["thread apply all bt"] ?? "", "thread-backtraces"],
      ["info registers", nullDeref["info registers"] ?? "", "registers"],
      ["p $_siginfo", nullDeref["p $_siginfo"] ?? "", "signal-info"],
      ["info threads", threadCrash["info threads"] ?? "", "threads"],
      ["info proc mappings", nullDeref["info proc mappings"] ?? "", "mappings"],
      ["info files", nullDeref["info files"] ?? "", "sections"],
      ["info sharedlibrary", exception["info sharedlibrary"] ?? "", "shared-libraries"],
      ["x/i $pc", nullDeref["x/i $pc"] ?? "", "instructions"],
      ["info args", nullDeref["info args"] ?? "", "arguments"],
      [ABORT_MESSAGE_COMMAND, assertCore[ABORT_MESSAGE_COMMAND] ?? "", "abort-message"],
    ];
    for (const [command, output, analyzer] of cases) {
      const analysis = analyzeOutput(command, output);
      expect(analysis?.analyzer, command).toBe(analyzer);
      expect(analysis?.summary.length, command).toBeGreaterThan(0);
    }
    expect(analyzeOutput("bt", nullDeref["bt"] ?? "")?.summary).toMatch(/^3 frames; innermost: send_to_client at .*:27$/);
    expect(analyzeOutput("p $_siginfo", nullDeref["p $_siginfo"] ?? "")?.summary).toMatch(/^SIGSEGV \(SEGV_MAPERR\) at 0x/);
    expect(analyzeOutput("x/i $pc", nullDeref["x/i $pc"] ?? "")?.findings[0]).toMatch(/reads memory: mov/);
    expect(analyzeOutput("thread apply all bt", threadCrash["thread apply all bt"] ?? "")?.findings[0]).toMatch(/^4 threads in /);
    expect(analyzeOutput("frame 1", "")).toBeNull();
  });
});
