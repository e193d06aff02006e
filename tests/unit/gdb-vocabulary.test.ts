/**
 * gdb's language for probes: each probe renders as the console command a user would type (the
 * evidence of a probe is that command's real output), a command gdb users type is recognised as
 * the probe it is, and probes are plain data with one canonical key.
 */
import { describe, expect, it } from "vitest";
import { gdbVocabulary } from "../../src/debuggers/gdb/vocabulary.js";
import { placed, probeKey, probes, type Probe } from "../../src/debuggers/probe.js";

const { render, recognise } = gdbVocabulary;

describe("gdb renders each probe as the command a user would type", () => {
  const cases: Array<[Probe, string]> = [
    [{ kind: "threads" }, "info threads"],
    [probes.backtrace(40), "bt 40"],
    [{ kind: "backtrace", limit: 40, outermost: true }, "bt -40"],
    [probes.backtrace(12, { thread: 3 }), "thread apply 3 -q bt 12"],
    [{ kind: "thread-backtraces", threads: "all", limit: 64 }, "thread apply all bt 64"],
    [{ kind: "thread-backtraces", threads: [2, 3] }, "thread apply 2 3 bt"],
    [probes.registers(), "info registers"],
    [{ kind: "registers", names: ["rip", "rsp"], frame: 1 }, "frame apply level 1 -q info registers rip rsp"],
    [probes.register("sp"), "p/x $sp"],
    [probes.register("rdi", { thread: 4 }), "thread apply 4 -q p/x $rdi"],
    [probes.evaluate("session->client"), "p session->client"],
    [probes.evaluate("*node", { thread: 2, frame: 3 }), "thread apply 2 -q frame apply level 3 -q p *node"],
    [probes.evaluate("flags", {}, "hex"), "p/x flags"],
    [probes.frameInfo(2), "info frame level 2"],
    [probes.locals({ frame: 1 }), "frame apply level 1 -q info locals"],
    [probes.arguments(), "info args"],
    [probes.disassemble(), "disassemble"],
    [{ kind: "disassemble", address: "0x401136" }, "disassemble 0x401136"],
    [{ kind: "disassemble", address: "0x401136", before: 64 }, "disassemble 0x401136-64,0x401136+1"],
    [{ kind: "instructions", count: 1 }, "x/i $pc"],
    [{ kind: "instructions", count: 6, address: "0x401130" }, "x/6i 0x401130"],
    [probes.memory("0x7ffe0000", 4), "x/4gx 0x7ffe0000"],
    [probes.string("0x402010"), "x/s 0x402010"],
    [{ kind: "strings", address: "**(char ***) &environ", count: 3 }, "with print elements unlimited -- with print repeats unlimited -- x/3s **(char ***) &environ"],
    [probes.symbol("0x4010"), "info symbol 0x4010"],
    [probes.symbol("0x4010", true), "info symbol *(void **) 0x4010"],
    [probes.source("server.c", 20, 24), "list server.c:20,24"],
    [{ kind: "source-line", address: "0x1186" }, "info line *0x1186"],
    [{ kind: "exit-signal" }, "p $_exitsignal"],
    [{ kind: "signal-info" }, "p $_siginfo"],
    [{ kind: "shared-libraries" }, "info sharedlibrary"],
    [{ kind: "sections" }, "info files"],
    [{ kind: "mappings" }, "info proc mappings"],
    [{ kind: "abort-message" }, "x/s *(char **)&__abort_msg + 4"],
    [{ kind: "managed-threads" }, "info sharedlibrary"],
    [{ kind: "managed-stack", thread: 2 }, "info sharedlibrary"],
    [{ kind: "managed-heap" }, "info sharedlibrary"],
    [{ kind: "select", thread: 2 }, "thread 2"],
    [{ kind: "select", frame: 0 }, "frame 0"],
    [probes.command("ptype struct client"), "ptype struct client"],
  ];
  for (const [probe, command] of cases) {
    it(`${probe.kind} → ${command}`, () => expect(render(probe)).toBe(command));
  }
});

describe("a command typed in gdb's language is read as the probe it is", () => {
  const cases: Array<[string, Probe | null]> = [
    ["bt 40", { kind: "backtrace", limit: 40 }],
    ["bt -10", { kind: "backtrace", limit: 10, outermost: true }],
    ["backtrace full 5", { kind: "backtrace", limit: 5 }],
    ["thread apply all bt", { kind: "thread-backtraces", threads: "all" }],
    ["thread apply 2 3 bt 8", { kind: "thread-backtraces", threads: [2, 3], limit: 8 }],
    ["thread apply 2 -q bt 12", { kind: "backtrace", limit: 12, thread: 2 }],
    ["i r", { kind: "registers" }],
    ["info registers rip", { kind: "registers", names: ["rip"] }],
    ["print $_siginfo", { kind: "signal-info" }],
    ["p $_exitsignal", { kind: "exit-signal" }],
    ["thread apply 3 -q frame apply level 2 -q info locals", { kind: "locals", thread: 3, frame: 2 }],
    ["frame apply level 1 info args", { kind: "arguments", frame: 1 }],
    ["x/6i $pc", { kind: "instructions", count: 6 }],
    ["info proc mappings", { kind: "mappings" }],
    ["info target", { kind: "sections" }],
    ["info shared", { kind: "shared-libraries" }],
    ["ptype struct client", null],
    ["frame 1", null],
  ];
  for (const [command, probe] of cases) {
    it(command, () => expect(recognise(command)).toEqual(probe));
  }
  it("every probe it renders, except the free-form ones, it reads back as the same probe", () => {
    const probesToRoundTrip: Probe[] = [probes.backtrace(40), probes.registers(), { kind: "signal-info" }, { kind: "threads" }, probes.locals({ frame: 2 }), { kind: "instructions", count: 1 }];
    for (const probe of probesToRoundTrip) expect(probeKey(recognise(render(probe)) as Probe)).toBe(probeKey(probe));
  });
});

describe(".NET's managed side, which gdb has no reader of", () => {
  // `info sharedlibrary` of a .NET process: its runtime is there, its managed side is not gdb's to read.
  const libraries = `From                To                  Syms Read   Shared Object Library
0x00007f3a5c02d100  0x00007f3a5c1f3a95  Yes (*)     /usr/share/dotnet/shared/Microsoft.NETCore.App/8.0.0/libcoreclr.so
0x00007f3a5d628700  0x00007f3a5d79b93d  Yes         /lib/x86_64-linux-gnu/libc.so.6`;
  it("reads as none, whatever the libraries say", () => {
    expect(gdbVocabulary.read({ kind: "managed-threads" }, libraries)).toBeNull();
    expect(gdbVocabulary.read({ kind: "managed-stack" }, libraries)).toBeNull();
    expect(gdbVocabulary.read({ kind: "managed-exception" }, libraries)).toBeNull();
    expect(gdbVocabulary.read({ kind: "managed-stacks" }, libraries)).toEqual([]);
    expect(gdbVocabulary.read({ kind: "managed-locks" }, libraries)).toEqual([]);
    expect(gdbVocabulary.read({ kind: "managed-heap" }, libraries)).toEqual([]);
  });
});

describe("selection", () => {
  it("tells commands that move the selection from ones that only read", () => {
    for (const moves of ["thread 2", "frame 1", "f 3", "up", "down 2", "select-frame 1"]) expect(gdbVocabulary.movesSelection(moves), moves).toBe(true);
    for (const reads of ["thread apply all bt", "frame apply level 1 info locals", "info frame", "bt"]) expect(gdbVocabulary.movesSelection(reads), reads).toBe(false);
  });
});

describe("probes are plain data", () => {
  it("has one key whatever the order of the fields, and none for absent ones", () => {
    expect(probeKey({ kind: "evaluate", expression: "x", frame: 2 })).toBe(probeKey({ frame: 2, expression: "x", kind: "evaluate" } as Probe));
    expect(probeKey({ kind: "evaluate", expression: "x", thread: null })).toBe(probeKey({ kind: "evaluate", expression: "x" }));
    expect(JSON.parse(JSON.stringify(probes.evaluate("a->b", { frame: 1 })))).toEqual({ kind: "evaluate", expression: "a->b", frame: 1 });
  });
  it("places a probe in a thread and frame, but a frame-info probe keeps its own frame", () => {
    expect(placed(probes.locals(), { thread: 3, frame: 2 })).toEqual({ kind: "locals", thread: 3, frame: 2 });
    expect(placed(probes.locals(), { thread: null, frame: 0 })).toEqual({ kind: "locals" });
    expect(placed(probes.frameInfo(4), { thread: 2, frame: 1 })).toEqual({ kind: "frame-info", frame: 4, thread: 2 });
    expect(placed({ kind: "threads" }, { thread: 2 })).toEqual({ kind: "threads" });
  });
});

describe("gdb on a Go program", () => {
  it("finds a global's address with `info address`, as gdb 13 prints it for a Go service", () => {
    const probe: Probe = { kind: "symbol-address", name: "runtime.allgs" };
    expect(render(probe)).toBe("info address runtime.allgs");
    expect(gdbVocabulary.read(probe, 'Symbol "runtime.allgs" is static storage at address 0x5364b0.')).toBe("0x5364b0");
    expect(gdbVocabulary.read(probe, 'No symbol "runtime.allgs" in current context.')).toBeNull();
  });

  it("reads the Go names gdb prints with their last element in brackets as Go's own", () => {
    const symbol = probes.symbol("0x49d3a4");
    const svc = "/srv/svc";
    expect(gdbVocabulary.read(symbol, `main[load] + 388 in section .text of ${svc}`)?.symbol).toBe("main.load");
    expect(gdbVocabulary.read(symbol, `fmt.(*pp)[printValue] + 5312 in section .text of ${svc}`)?.symbol).toBe("fmt.(*pp).printValue");
    expect(gdbVocabulary.read(symbol, `main.(*Cache).Put + 85 in section .text of ${svc}`)?.symbol).toBe("main.(*Cache).Put");
    expect(gdbVocabulary.read(symbol, "operator[] + 4 in section .text")?.symbol).toBe("operator[]");
  });
});
