/**
 * cdb's language for probes: each probe renders as the command a user at cdb's prompt would type
 * (counts in hex with `0x`, cdb's default radix being 16; dumpdbg's `[thread T, frame F]` prefix
 * for another place), cdb's output is read into the same model gdb's and lldb's are (instructions in
 * AT&T spelling, values in gdb's one-line C form), `!analyze -v` and SOS's listings are read into
 * the exception, the bucket, the culprit and the managed picture, and Windows exceptions land on
 * the design's crash kinds through the one mapping in analyzers/windows.ts.
 *
 * cdb does not run on Linux: the outputs are tests/helpers/cdb-transcripts.ts, written from the
 * formats Microsoft documents for each command.
 */
import { describe, expect, it } from "vitest";
import { readException } from "../../src/analyzers/windows.js";
import { exceptionName, managedExceptionText } from "../../src/analyzers/windows.js";
import { isRuntimeModule } from "../../src/analyzers/culprit.js";
import { cdbManagedVocabulary, cdbVocabulary } from "../../src/debuggers/cdb/vocabulary.js";
import { parsePlaced } from "../../src/debuggers/cdb/place.js";
import { parseAnalyze, parseExceptionRecord } from "../../src/debuggers/cdb/text/exception.js";
import { clrModule, parseModuleList } from "../../src/debuggers/cdb/text/modules.js";
import { parseClrStacks, parseClrThreads, parseHeapStatistics, parsePrintException, parseSyncBlocks } from "../../src/debuggers/cdb/text/sos.js";
import { memoryAccess } from "../../src/analyzers/x86-64.js";
import { probes, type Probe } from "../../src/debuggers/probe.js";
import { MANAGED_CRASH, MANAGED_DEADLOCK, NATIVE } from "../helpers/cdb-transcripts.js";

const { render, read, recognise, movesSelection } = cdbVocabulary;

describe("cdb renders each probe as the command a user would type", () => {
  it("lists threads with their innermost frame, and stacks one frame longer than asked, in hex", () => {
    expect(render({ kind: "threads" })).toBe("~*kn 1");
    expect(render(probes.backtrace(40))).toBe("kn 0x29");
    expect(render(probes.backtrace(40, { thread: 2 }))).toBe("[thread 2] kn 0x29");
    expect(render({ kind: "backtrace", limit: 10, outermost: true })).toBe("kn 0x10000");
    expect(render({ kind: "thread-backtraces", threads: "all", limit: 20 })).toBe("~*kn 0x14");
    expect(render({ kind: "thread-backtraces", threads: [1, 2] })).toBe("~*kn");
  });

  it("places registers, values and variables with the prefix, and nothing where the debugger stands", () => {
    expect(render(probes.registers())).toBe("r");
    expect(render(probes.registers({ thread: 1, frame: 2 }))).toBe("[thread 1, frame 2] r");
    expect(render(probes.register("pc"))).toBe("r $ip");
    expect(render(probes.register("sp", { frame: 1 }))).toBe("[frame 1] r $csp");
    expect(render(probes.register("rdi"))).toBe("r rdi");
    expect(render(probes.evaluate("config->count", { frame: 3 }))).toBe("[frame 3] ?? config->count");
    expect(render(probes.locals({ thread: 0 }))).toBe("[thread 0] dv /i /t /v");
    expect(render(probes.arguments())).toBe("dv /i /t /v");
  });

  it("asks for a frame's CFA as the Child-SP on its caller's row", () => {
    expect(render(probes.frameInfo(0))).toBe("kn 0x2");
    expect(render({ kind: "frame-info", frame: 3, thread: 1 })).toBe("[thread 1] kn 0x5");
  });

  it("disassembles the scope's function, a count of instructions, or the code before a return address", () => {
    expect(render(probes.disassemble())).toBe("uf @$scopeip");
    expect(render({ kind: "disassemble", address: "0x7ff61a2b10a1", before: 16 })).toBe("u 0x7ff61a2b10a1-0x10 0x7ff61a2b10a1+1");
    expect(render({ kind: "instructions", count: 1 })).toBe("u @$scopeip L0x1");
    expect(render({ kind: "instructions", count: 12, address: "0x1000" })).toBe("u 0x1000 L0xc");
  });

  it("reads memory as quadwords, and a C expression of an address through the C++ evaluator", () => {
    expect(render(probes.memory("0x14fa10", 4))).toBe("dq 0x14fa10 L0x4");
    expect(render(probes.memory("&config->count", 2))).toBe("dq @@c++(&config->count) L0x2");
    expect(render(probes.string("0x7ff61a2c3e40"))).toBe("da 0x7ff61a2c3e40");
    expect(render(probes.symbol("0x7ff61a2b1012"))).toBe("ln 0x7ff61a2b1012");
    expect(render(probes.symbol("0x7ff61a2c4000", true))).toBe("ln poi(0x7ff61a2c4000)");
  });

  it("lists source lines of a file with decimal line numbers, through the session's source prefix", () => {
    const command = render(probes.source("C:\\src\\service\\config-null.c", 43, 45));
    expect(command).toBe('[source "C:\\src\\service\\config-null.c"] ls 0n43, 0n3');
    expect(parsePlaced(command)).toEqual({ place: { thread: null, frame: null, source: "C:\\src\\service\\config-null.c" }, command: "ls 0n43, 0n3" });
  });

  it("asks the exception record for the stop, the modules two ways, the address space and the last event", () => {
    expect(render({ kind: "signal-info" })).toBe(".exr -1");
    expect(render({ kind: "exit-signal" })).toBe(".exr -1");
    expect(render({ kind: "shared-libraries" })).toBe("lm");
    expect(render({ kind: "sections" })).toBe("lmf");
    expect(render({ kind: "mappings" })).toBe("!address");
    expect(render({ kind: "abort-message" })).toBe(".lastevent");
    expect(render({ kind: "select", thread: 2 })).toBe("~2s");
    expect(render({ kind: "select", frame: 10 })).toBe(".frame 0xa");
    expect(render(probes.command("!analyze -v"))).toBe("!analyze -v");
  });
});

describe("threads and stacks", () => {
  it("reads every thread with its OS id, name and innermost frame, the selected one marked `.`", () => {
    const threads = read({ kind: "threads" }, NATIVE.threadsWithFrames);
    expect(threads.map((t) => [t.id, t.lwp, t.name, t.current])).toEqual([
      [0, 0x1b3c, "main", true],
      [1, 0x2d40, null, false],
      [2, 0x3e54, "crash-reporter", false],
    ]);
    expect(threads[2]?.frame).toMatchObject({ function: "NtWaitForSingleObject", file: null, address: null });
  });

  it("reads `~` alone: the threads without frames", () => {
    expect(read({ kind: "threads" }, NATIVE.threads).map((t) => [t.id, t.frame])).toEqual([[0, null], [1, null], [2, null]]);
  });

  it("reads a stack: each frame's function, file and line, its pc from the row above, an inlined frame without one", () => {
    const trace = read(probes.backtrace(40), NATIVE.stack);
    expect(trace.truncated).toBe(false);
    expect(trace.frames.map((f) => [f.level, f.function, f.line, f.address])).toEqual([
      [0, "listen_port", 44, null],
      [1, "start_listener", 50, null],
      [2, "main", 57, "0x7ff61a2b10a1"],
      [3, "__scrt_common_main_seh", 288, "0x7ff61a2b14e0"],
      [4, "BaseThreadInitThunk", null, "0x7ffb12347614"],
      [5, "RtlUserThreadStart", null, "0x7ffb134226a1"],
    ]);
    expect(trace.frames[0]?.file).toBe("C:\\src\\service\\config-null.c");
  });

  it("says a stack goes on when the extra frame came", () => {
    const trace = read(probes.backtrace(3), NATIVE.stack);
    expect(trace.truncated).toBe(true);
    expect(trace.frames).toHaveLength(3);
  });

  it("reads the outermost frames of a whole stack", () => {
    const trace = read({ kind: "backtrace", limit: 2, outermost: true }, NATIVE.stack);
    expect(trace.frames.map((f) => f.function)).toEqual(["BaseThreadInitThunk", "RtlUserThreadStart"]);
  });

  it("reads a frame without symbols as its module and offset, and a frame at address 0 as nothing known", () => {
    const trace = read(probes.backtrace(5), ` # Child-SP          RetAddr               Call Site
00 00000000\`0014fa10 00007ff6\`1a2b10a1     0x0
01 00000000\`0014fa18 00007ffb\`12347614     config_null+0x10a1`);
    expect(trace.frames.map((f) => [f.function, f.address])).toEqual([[null, null], [null, "0x7ff61a2b10a1"]]);
  });

  it("reads the call site of `kb`, after its arguments", () => {
    const trace = read(probes.backtrace(5), ` # Child-SP          RetAddr               : Args to Child                                                           : Call Site
00 00000000\`0014fa10 00007ff6\`1a2b10a1     : 00000000\`00000000 00000000\`00000000 00000000\`00000000 00000000\`00000000 : config_null!listen_port+0x12 [C:\\src\\service\\config-null.c @ 44]`);
    expect(trace.frames[0]).toMatchObject({ function: "listen_port", line: 44 });
  });

  it("reads every thread's stack under its header, or only the listed threads'", () => {
    const all = read({ kind: "thread-backtraces", threads: "all" }, NATIVE.threadsWithFrames);
    expect(all.map((t) => [t.thread, t.lwp, t.frames.length])).toEqual([[0, 0x1b3c, 1], [1, 0x2d40, 1], [2, 0x3e54, 1]]);
    const some = read({ kind: "thread-backtraces", threads: [2] }, NATIVE.threadsWithFrames);
    expect(some.map((t) => t.thread)).toEqual([2]);
  });

  it("reads a frame's CFA as its caller's Child-SP, past inlined frames", () => {
    expect(read(probes.frameInfo(0), NATIVE.stack)).toBe("0x14fa40");
    expect(read(probes.frameInfo(2), NATIVE.stack)).toBe("0x14fa80");
    expect(read(probes.frameInfo(5), NATIVE.stack)).toBeNull();
  });
});

describe("registers", () => {
  it("reads every register, the pc with its symbol, and not the flags' iopl", () => {
    const registers = read(probes.registers(), NATIVE.registers);
    const byName = new Map(registers.map((r) => [r.name, r]));
    expect(byName.get("rax")?.value).toBe("0x0");
    expect(byName.get("r8")?.value).toBe("0x4");
    expect(byName.get("rsp")?.value).toBe("0x14fa10");
    expect(byName.get("rip")).toEqual({ name: "rip", value: "0x7ff61a2b1012", natural: "0x7ff61a2b1012 <config_null!listen_port+0x12>" });
    expect(byName.get("efl")?.value).toBe("0x10246");
    expect(byName.has("iopl")).toBe(false);
    expect(registers.filter((r) => r.name === "ds")).toHaveLength(1);
  });

  it("reads only the registers asked for, and one register as an address", () => {
    expect(read({ kind: "registers", names: ["rip", "rsp"] }, NATIVE.registers).map((r) => r.name)).toEqual(["rip", "rsp"]);
    expect(read(probes.register("pc"), "$ip=00007ff61a2b1012")).toBe("0x7ff61a2b1012");
    expect(read(probes.register("pc"), "                 ^ Bad register error in 'r $xx'")).toBeNull();
  });
});

describe("code, in the model's AT&T spelling", () => {
  it("reads the instruction at the pc as AT&T, which the x86 analyzers read as a load", () => {
    const code = read({ kind: "instructions", count: 4 }, NATIVE.instructions);
    const first = code.instructions[0];
    expect(first).toMatchObject({ address: "0x7ff61a2b1012", mnemonic: "mov", operands: ["0x20(%rax)", "%eax"], current: true, location: "listen_port+18" });
    expect(first && memoryAccess(first)).toBe("read");
    expect(code.instructions.map((i) => `${i.mnemonic} ${i.operands.join(",")}`)).toEqual(["mov 0x20(%rax),%eax", "add $0x28,%rsp", "ret ", "int $0x3"]);
    expect(code.instructions.filter((i) => i.current)).toHaveLength(1);
  });

  it("reads a function: its name, direct calls with their targets, imports, scaled indexes, segments and register calls", () => {
    const code = read(probes.disassemble(), NATIVE.function);
    expect(code.function).toBe("listen_port");
    const text = code.instructions.map((i) => `${i.mnemonic} ${i.operands.join(",")}`);
    expect(text).toEqual([
      "sub $0x28,%rsp",
      "lea 0x7ff61a2c3e40,%rdx",
      "call 0x7ff61a2b1100",
      "call *0x7ff61a2c4000",
      "mov $0x0,-0x8(%rcx,%rdx,4)",
      "mov %gs:0x30,%rax",
      "call *%rax",
      "add $0x28,%rsp",
      "ret ",
    ]);
    expect(code.instructions[1]?.reference).toEqual({ address: "0x7ff61a2c3e40", symbol: "`string'" });
    expect(code.instructions[2]?.reference).toEqual({ address: "0x7ff61a2b1100", symbol: "config_find" });
    expect(code.instructions[3]?.reference).toEqual({ address: "0x7ff61a2c4000", symbol: "_imp_atoi" });
    const store = code.instructions[4];
    expect(store && memoryAccess(store)).toBe("write");
    expect(code.instructions.some((i) => i.current)).toBe(false);
  });

  it("says the code is unreadable when cdb shows only `??`", () => {
    const code = read({ kind: "instructions", count: 1 }, "00000000`00000000 ??              ???");
    expect(code).toEqual({ function: null, instructions: [], unreadable: true });
  });
});

describe("memory, symbols, source and the address space", () => {
  it("reads quadwords up to the first that could not be read, and where they start", () => {
    expect(read(probes.memory("0x14fa10", 4), NATIVE.memory)).toEqual({ start: "0x14fa10", words: [0x7ff61a2b10a1n, 0x1f2a3b4c5d0n] });
  });

  it("reads a string, joined across `da`'s lines", () => {
    expect(read(probes.string("0x7ff61a2c3e40"), NATIVE.string)).toBe("port");
    expect(read(probes.string("0x7ff61a2c3f00"), NATIVE.longString)).toBe("log=/var/log/service.log; rotate=daily; keep=14; compress=yes");
    expect(read({ kind: "strings", address: "0x7ff61a2c3e40", count: 1 }, NATIVE.string)).toEqual(["port"]);
    expect(read(probes.string("0x0"), "00000000`00000000  ????????????????????????????????????????????????")).toBeNull();
  });

  it("reads the symbol at an address with its offset, module and line", () => {
    expect(read(probes.symbol("0x7ff61a2b1012"), NATIVE.symbol)).toEqual({
      symbol: "listen_port",
      offset: 0x12,
      section: null,
      module: "config_null",
      file: "C:\\src\\service\\config-null.c",
      line: 44,
    });
    expect(read(probes.symbol("0x10"), "")).toBeNull();
  });

  it("reads the asked source lines, the current one marked", () => {
    expect(read(probes.source("C:\\src\\service\\config-null.c", 44, 45), NATIVE.source)).toEqual([
      { line: 44, text: '    return atoi(port->value); /* no "port" line, port is NULL */' },
      { line: 45, text: "}" },
    ]);
  });

  it("reads the address space without its free memory, with protections and the image of each region", () => {
    const mappings = read({ kind: "mappings" }, NATIVE.regions);
    expect(mappings.map((m) => [m.start, m.end, m.permissions, m.objfile])).toEqual([
      ["0x14c000", "0x150000", "rw-p", null],
      ["0x7ff61a2b0000", "0x7ff61a2b1000", "r--p", "C:\\Program Files\\Service\\config_null.exe"],
      ["0x7ff61a2b1000", "0x7ff61a2c3000", "r-xp", "C:\\Program Files\\Service\\config_null.exe"],
    ]);
  });
});

describe("modules", () => {
  it("reads `lm`: ranges, names and whether symbols were read, up to the unloaded modules", () => {
    const modules = read({ kind: "shared-libraries" }, NATIVE.modules);
    expect(modules.map((m) => [m.path, m.from, m.symbolsRead, m.missingDebugInfo])).toEqual([
      ["config_null", "0x7ff61a2b0000", true, false],
      ["KERNELBASE", "0x7ffb11a90000", false, false],
      ["KERNEL32", "0x7ffb12330000", true, false],
      ["ntdll", "0x7ffb13400000", false, true],
    ]);
  });

  it("reads `lmf`: the images by path, the .exe as the program", () => {
    const files = read({ kind: "sections" }, NATIVE.moduleFiles);
    expect(files.executable).toBe("C:\\Program Files\\Service\\config_null.exe");
    expect(files.sections.map((s) => [s.source, s.start, s.end])).toEqual([
      ["exec", "0x7ff61a2b0000", "0x7ff61a2c6000"],
      ["C:\\Windows\\System32\\KERNELBASE.dll", "0x7ffb11a90000", "0x7ffb11d58000"],
      ["C:\\Windows\\System32\\KERNEL32.DLL", "0x7ffb12330000", "0x7ffb123ed000"],
      ["C:\\Windows\\SYSTEM32\\ntdll.dll", "0x7ffb13400000", "0x7ffb135f8000"],
    ]);
  });

  it("finds the CLR of a .NET process, and none in a native one", () => {
    expect(clrModule(parseModuleList(MANAGED_CRASH.modules))).toBe("coreclr");
    expect(clrModule(parseModuleList(NATIVE.modules))).toBeNull();
  });
});

describe("values, in gdb's one-line C form", () => {
  it("reads parameters and locals apart, pointers with their type, decimals without 0n, strings with their text", () => {
    expect(read(probes.arguments(), NATIVE.variables)).toEqual([{ name: "config", value: "(struct config *) 0x1f2a3b4c5d0" }]);
    expect(read(probes.locals(), NATIVE.variables)).toEqual([
      { name: "port", value: "(struct setting *) 0x0" },
      { name: "attempts", value: "3" },
      { name: "name", value: '0x7ff61a2c3e40 "port"' },
    ]);
  });

  it("reads `??` values: integers, null pointers, structures member by member, and nothing from an error", () => {
    expect(read(probes.evaluate("config->count"), NATIVE.evaluateInt)).toBe("3");
    expect(read(probes.evaluate("config->count", {}, "hex"), NATIVE.evaluateInt)).toBe("0x3");
    expect(read(probes.evaluate("port"), NATIVE.evaluatePointer)).toBe("(struct setting *) 0x0");
    expect(read(probes.evaluate("*config"), NATIVE.evaluateStruct)).toBe("{first = 0x1f2a3b4c610 setting, count = 3}");
    expect(read(probes.evaluate("nosuch"), NATIVE.evaluateError)).toBeNull();
  });
});

describe("the exception: `.exr -1`, `.lastevent` and `!analyze -v`", () => {
  it("reads the exception record: code, flags, address and parameters", () => {
    expect(parseExceptionRecord(NATIVE.exceptionRecord)).toEqual({
      type: "exception",
      code: "0xc0000005",
      flags: 0,
      address: "0x7ff61a2b1012",
      parameters: ["0x0", "0x20"],
      thread: null,
    });
    expect(parseExceptionRecord("   ExceptionCode: c0000005")).toBeNull();
    // Windows has no signals: the exit-signal and signal-info probes read none.
    expect(read({ kind: "exit-signal" }, NATIVE.exceptionRecord)).toBeNull();
    expect(read({ kind: "signal-info" }, NATIVE.exceptionRecord)).toBeNull();
  });

  it("reads what the last event was", () => {
    expect(read({ kind: "abort-message" }, NATIVE.lastEvent)).toBe("Access violation - code c0000005 (first/second chance not available)");
    expect(read({ kind: "abort-message" }, "")).toBeNull();
  });

  it("reads !analyze -v into the exception, the faulting IP, the bucket and the culprit, and the design's kind", () => {
    const report = parseAnalyze(NATIVE.analyze);
    expect(report.exception).toMatchObject({ code: "0xc0000005", parameters: ["0x0", "0x20"] });
    expect(report.faultingIp).toBe("0x7ff61a2b1012");
    expect(report.bucket).toBe("NULL_CLASS_PTR_READ_c0000005_config_null.exe!listen_port");
    expect(report.culprit).toEqual({ module: "config_null", function: "listen_port", image: "config_null.exe", file: "C:\\src\\service\\config-null.c", line: 44 });
    expect(report.process).toBe("config_null.exe");
    expect(report.managed).toBeNull();
    const verdict = report.exception && readException(report.exception, { stackExhausted: false, instruction: null });
    expect(verdict).toMatchObject({ kind: "null-dereference", access: "read", faultAddress: "0x20" });
  });

  it("reads a .NET crash's !analyze -v: the CLR exception and the managed exception's type and message", () => {
    const report = parseAnalyze(MANAGED_CRASH.analyze);
    expect(report.exception).toMatchObject({ code: "0xe0434352", flags: 1, address: "0x7ffb11aac319" });
    expect(report.exception?.parameters).toHaveLength(5);
    expect(report.managed).toEqual({ type: "System.NullReferenceException", message: "Object reference not set to an instance of an object.", object: "0x1f2a5000f10", stack: [] });
    expect(report.culprit.function).toBe("OrderService.Pricing.Discount");
    expect(report.bucket).toMatch(/^CLR_EXCEPTION_System\.NullReferenceException_80004003_/);
    const verdict = report.exception && readException(report.exception, { stackExhausted: false, instruction: null });
    expect(verdict).toMatchObject({ kind: "uncaught-exception", message: "unhandled .NET exception (HRESULT 0x80004003)" });
    expect(exceptionName("0xe0434352")).toBe("CLR exception (.NET)");
    expect(managedExceptionText("System.NullReferenceException: Object reference not set to an instance of an object.")).not.toBeNull();
    expect(managedExceptionText("OrderService.Errors.PricingException")).toBe("OrderService.Errors.PricingException");
    expect(managedExceptionText("CLR exception - code e0434352 (first/second chance not available)")).toBeNull();
  });

  it("asks SOS what the runtime died with on a .NET dump, and reads the managed exception's type and message", () => {
    expect(cdbManagedVocabulary.render({ kind: "abort-message" })).toBe("!pe");
    expect(cdbManagedVocabulary.read({ kind: "abort-message" }, MANAGED_CRASH.printException)).toBe("System.NullReferenceException: Object reference not set to an instance of an object.");
    expect(cdbManagedVocabulary.read({ kind: "abort-message" }, MANAGED_CRASH.noException)).toBeNull();
    // Everything else is said the same way.
    expect(cdbManagedVocabulary.render(probes.backtrace(40))).toBe(render(probes.backtrace(40)));
  });

  it("takes the CLR, its JIT and its hosts for runtime code, never the culprit", () => {
    for (const module of ["C:\\Program Files\\dotnet\\shared\\Microsoft.NETCore.App\\8.0.0\\coreclr.dll", "clrjit.dll", "C:\\Windows\\Microsoft.NET\\Framework64\\v4.0.30319\\clr.dll", "hostpolicy.dll"]) {
      expect(isRuntimeModule(module), module).toBe(true);
    }
    expect(isRuntimeModule("C:\\app\\OrderService.dll")).toBe(false);
  });

  it("takes the managed type from the bucket when !analyze printed no SOS lines", () => {
    const report = parseAnalyze("FAILURE_BUCKET_ID:  CLR_EXCEPTION_System.InvalidOperationException_80131509_App.dll!App.Run\n");
    expect(report.managed).toEqual({ type: "System.InvalidOperationException", message: null, object: null, stack: [] });
  });
});

describe("SOS, for .NET dumps", () => {
  it("reads !threads: cdb's number, the OS id, the exception each holds and what the runtime uses it for; a dead thread has no number", () => {
    expect(parseClrThreads(MANAGED_CRASH.threads)).toEqual([
      { thread: 0, managedId: 1, osThreadId: 0x1b3c, lockCount: 0, exception: "System.NullReferenceException", role: null },
      { thread: 4, managedId: 2, osThreadId: 0x2d40, lockCount: 0, exception: null, role: "Finalizer" },
      { thread: null, managedId: 3, osThreadId: 0, lockCount: 0, exception: null, role: "Threadpool Worker" },
    ]);
    // What SOS prints when it cannot read the runtime is no thread list: no managed side, not an empty one.
    expect(parseClrThreads("Failed to find runtime module (coreclr.dll or clr.dll or libcoreclr.so), 0x80004002\nExtension commands need it in order to have something to do.")).toBeNull();
  });

  it("reads a thread that holds an exception besides its role", () => {
    const row = "   6    7     3e54 000001F2A3B7A0F0  1029220 Preemptive  000001F2A5004A10:000001F2A5006000 000001f2a3b2a0e0 0     MTA (Threadpool Worker) System.InvalidOperationException 000001f2a5003b80";
    expect(parseClrThreads(`ThreadCount:      1\n${row}`)).toEqual([{ thread: 6, managedId: 7, osThreadId: 0x3e54, lockCount: 0, exception: "System.InvalidOperationException", role: "Threadpool Worker" }]);
  });

  it("reads !clrstack -a: managed frames with file and line, parameters and locals, runtime frames marked", () => {
    const [stack] = parseClrStacks(MANAGED_CRASH.clrstack);
    expect(stack?.osThreadId).toBe(0x1b3c);
    expect(stack?.thread).toBe(0);
    expect(stack?.frames.map((f) => [f.function, f.file, f.line, f.runtime])).toEqual([
      ["OrderService.Pricing.Discount(OrderService.Order)", "C:\\app\\src\\Pricing.cs", 27, false],
      ["OrderService.Program.Main(System.String[])", "C:\\app\\src\\Program.cs", 12, false],
      ["[GCFrame]", null, null, true],
    ]);
    expect(stack?.frames[0]?.parameters).toEqual([{ name: "order", value: "0x1f2a5000e28" }]);
    expect(stack?.frames[0]?.locals).toEqual([{ name: "0x000000000014F2D8", value: "0x0" }]);
    expect(stack?.frames[1]?.locals).toEqual([]);
  });

  it("reads the assembly newer SOS puts before a method", () => {
    const [stack] = parseClrStacks("OS Thread Id: 0x1b3c (0)\n        Child SP               IP Call Site\n000000000014F2B0 00007FFA1B2C3D4E OrderService.dll!OrderService.Pricing.Discount(OrderService.Order) [C:\\app\\src\\Pricing.cs @ 27]");
    expect(stack?.frames[0]).toMatchObject({ function: "OrderService.Pricing.Discount(OrderService.Order)", module: "OrderService.dll", line: 27 });
  });

  it("reads !pe: the exception's type, message, object and the frames it was thrown through; none on a thread without one", () => {
    const exception = parsePrintException(MANAGED_CRASH.printException);
    expect(exception).toMatchObject({ type: "System.NullReferenceException", message: "Object reference not set to an instance of an object.", object: "0x1f2a5000f10" });
    expect(exception?.stack.map((f) => [f.module, f.function, f.line])).toEqual([
      ["OrderService", "OrderService.Pricing.Discount(OrderService.Order)", null],
      ["OrderService", "OrderService.Program.Main(System.String[])", null],
    ]);
    expect(parsePrintException(MANAGED_CRASH.noException)).toBeNull();
  });

  it("reads !dumpheap -stat, digits grouped or not", () => {
    expect(parseHeapStatistics(MANAGED_CRASH.heap)).toEqual([
      { type: "System.Object", count: 1, bytes: 24 },
      { type: "OrderService.Order", count: 14, bytes: 672 },
      { type: "System.String", count: 1204, bytes: 58912 },
    ]);
  });

  it("reads !syncblk: each held monitor's object, type, owner and waiters", () => {
    expect(parseSyncBlocks(MANAGED_DEADLOCK.syncblk)).toEqual([
      { object: "0x1f2a5001100", type: "Bank.Account", ownerThread: 5, ownerOsThreadId: 0x2d40, waiters: 1 },
      { object: "0x1f2a5001118", type: "Bank.Account", ownerThread: 6, ownerOsThreadId: 0x3e54, waiters: 1 },
    ]);
  });
});

describe("the managed probes", () => {
  const managed: Probe[] = [
    { kind: "managed-threads" },
    { kind: "managed-stack" },
    { kind: "managed-stack", thread: 5 },
    { kind: "managed-stacks" },
    { kind: "managed-exception" },
    { kind: "managed-locks" },
    { kind: "managed-heap" },
  ];

  it("are SOS's commands where SOS is loaded, another thread's stack through ~Ne so the selection stays", () => {
    expect(managed.map((probe) => cdbManagedVocabulary.render(probe))).toEqual(["!threads", "!clrstack -a", "~5e !clrstack -a", "~*e !clrstack -a", "!pe", "!syncblk", "!dumpheap -stat"]);
  });

  it("read SOS's listings into the model", () => {
    const read = cdbManagedVocabulary.read;
    expect(read({ kind: "managed-threads" }, MANAGED_CRASH.threads)).toHaveLength(3);
    expect(read({ kind: "managed-stack" }, MANAGED_CRASH.clrstack)?.frames[0]?.function).toBe("OrderService.Pricing.Discount(OrderService.Order)");
    expect(read({ kind: "managed-stacks" }, MANAGED_DEADLOCK.clrstacks).map((s) => s.thread)).toEqual([0, 5, 6]);
    expect(read({ kind: "managed-exception" }, MANAGED_CRASH.printException)?.type).toBe("System.NullReferenceException");
    expect(read({ kind: "managed-locks" }, MANAGED_DEADLOCK.syncblk).map((lock) => lock.ownerThread)).toEqual([5, 6]);
    expect(read({ kind: "managed-heap" }, MANAGED_CRASH.heap).map((stat) => stat.type)).toContain("OrderService.Order");
  });

  it("without SOS ask for the module list and read no managed side, whatever it lists", () => {
    for (const probe of managed) expect(render(probe)).toBe("lm");
    expect(read({ kind: "managed-threads" }, MANAGED_CRASH.modules)).toBeNull();
    expect(read({ kind: "managed-stack" }, MANAGED_CRASH.modules)).toBeNull();
    expect(read({ kind: "managed-exception" }, MANAGED_CRASH.modules)).toBeNull();
    expect(read({ kind: "managed-stacks" }, MANAGED_CRASH.modules)).toEqual([]);
    expect(read({ kind: "managed-locks" }, MANAGED_CRASH.modules)).toEqual([]);
    expect(read({ kind: "managed-heap" }, MANAGED_CRASH.modules)).toEqual([]);
  });

  it("are recognised in SOS's spellings where SOS is loaded, and round-trip", () => {
    expect(cdbManagedVocabulary.recognise("!clrthreads")).toEqual({ kind: "managed-threads" });
    expect(cdbManagedVocabulary.recognise("!sos.printexception")).toEqual({ kind: "managed-exception" });
    expect(cdbManagedVocabulary.recognise("~6e !clrstack -a")).toEqual({ kind: "managed-stack", thread: 6 });
    expect(cdbManagedVocabulary.recognise("[thread 2] !clrstack -a")).toBeNull();
    for (const probe of managed) expect(cdbManagedVocabulary.recognise(cdbManagedVocabulary.render(probe))).toEqual(probe);
    expect(recognise("!syncblk")).toBeNull();
  });
});

describe("commands cdb users type, recognised as probes", () => {
  const cases: [string, Probe | null][] = [
    ["kn", { kind: "backtrace", limit: 0 }],
    ["kn 0x29", { kind: "backtrace", limit: 41 }],
    ["kn 20", { kind: "backtrace", limit: 32 }],
    ["kn 0n20", { kind: "backtrace", limit: 20 }],
    ["[thread 2] kn 0x29", { kind: "backtrace", limit: 41, thread: 2 }],
    ["[frame 2] kn", null],
    ["~*kn", { kind: "thread-backtraces", threads: "all" }],
    ["~* kn 0x14", { kind: "thread-backtraces", threads: "all", limit: 20 }],
    ["~3kn", { kind: "thread-backtraces", threads: [3] }],
    ["~", { kind: "threads" }],
    ["r", { kind: "registers" }],
    ["[thread 1, frame 2] r", { kind: "registers", thread: 1, frame: 2 }],
    ["lm", { kind: "shared-libraries" }],
    ["lmf", { kind: "sections" }],
    ["!address", { kind: "mappings" }],
    ["uf @$scopeip", { kind: "disassemble" }],
    ["u @$scopeip L0x6", { kind: "instructions", count: 6 }],
    ["!analyze -v", null],
    ["!clrstack -a", null],
  ];
  it.each(cases)("%s", (command, probe) => {
    expect(recognise(command)).toEqual(probe);
  });

  it("renders a probe into a command it recognises back as the same probe", () => {
    for (const probe of [probes.registers({ thread: 2, frame: 1 }), { kind: "instructions", count: 6 } as const, { kind: "shared-libraries" } as const]) {
      expect(recognise(render(probe))).toEqual(probe);
    }
  });

  it("knows which commands move the selection", () => {
    for (const command of ["~2s", "~~[0x1b3c]s", ".frame 3", ".frame /r 2", ".ecxr", ".cxr"]) expect(movesSelection(command), command).toBe(true);
    for (const command of ["~", "~2 kn", "~*kn", ".frame", "kn", "r", "!analyze -v"]) expect(movesSelection(command), command).toBe(false);
  });
});
