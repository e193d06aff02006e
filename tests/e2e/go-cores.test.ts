/**
 * Go services' cores, from the user's side: each fixture service is built (with `-N -l` as a debug
 * build, and as shipped), crashed with GOTRACEBACK=crash (or hung and dumped alive), and
 * `dumpdbg triage core --exe svc --json` must name the kind, the runtime's message, the culprit
 * function and its line, through gdb and through Delve alike: the same Go reader asks both, and
 * each must give the same verdict (Delve, where it is installed).
 */
import { readFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { hasDlv } from "../helpers/dlv-core.js";
import { buildGoCore, goCulpritLine, goFixtureNames, type BuiltGoCore } from "../helpers/go.js";

interface Expected {
  kind: Crash["kind"];
  /** The kind through Delve where it differs: Delve unwinds every goroutine, so it shows who holds a lock where gdb cannot. */
  kindThroughDelve?: Crash["kind"];
  culprit: string;
  message: RegExp;
  /** The signature's frames after the kind, when the test pins them. */
  signature?: string;
  faultAddress?: string;
  access?: "read" | "write";
  /**
   * The culprit of the build as shipped: the compiler inlines small functions into their callers, so
   * the frame is the caller's symbol while the line stays the CULPRIT's (the line table keeps it).
   */
  shipped: string;
}

const EXPECTED: Record<string, Expected> = {
  "nil-map": { kind: "panic", culprit: "main.(*Cache).Put", message: /^assignment to entry in nil map$/, signature: "panic | main.(*Cache).Put | main.load | main.main", shipped: "main.main" },
  "nil-pointer": { kind: "null-dereference", culprit: "main.charge", message: /^runtime error: invalid memory address or nil pointer dereference$/, faultAddress: "0x0", access: "read", shipped: "main.worker" },
  "index-range": { kind: "panic", culprit: "main.(*Queue).Next", message: /^runtime error: index out of range \[5\] with length 3$/, shipped: "main.drain" },
  "panic-error": { kind: "panic", culprit: "main.mustLoad", message: /^loading config: open \/nonexistent\/svc.yaml: file does not exist$/, shipped: "main.mustLoad" },
  "panic-string": { kind: "panic", culprit: "main.(*Ledger).Post", message: /^ledger out of balance$/, shipped: "main.main" },
  "concurrent-map": { kind: "panic", culprit: "main.(*Stats).Record", message: /^fatal error: concurrent map writes$/, shipped: "main.handle" },
  "stack-overflow": { kind: "stack-overflow", culprit: "main.resolve", message: /^fatal error: stack overflow$/, signature: "stack-overflow | main.resolve | main.resolve | main.resolve", shipped: "main.resolve" },
  deadlock: { kind: "deadlock", culprit: "main.(*Server).Shutdown", message: /^fatal error: all goroutines are asleep - deadlock!$/, shipped: "main.main" },
  hang: { kind: "hang", culprit: "main.dispatch", message: /goroutines/, shipped: "main.dispatch" },
  "lock-order-hang": { kind: "hang", kindThroughDelve: "deadlock", culprit: "main.(*Ledger).Transfer", message: /^hung: all 3 goroutines of the program's own wait: 2 on a sync\.Mutex \(in main\.\(\*Ledger\)\.Transfer\), 1 on a sync\.WaitGroup \(in main\.main\)$/, shipped: "main.(*Ledger).Transfer" },
  "lock-order": { kind: "deadlock", culprit: "main.transfer", message: /^fatal error: all goroutines are asleep - deadlock!$/, signature: "deadlock | main.transfer | main.main.func1", shipped: "main.transfer" },
  // Which of the runtime's out-of-memory throws fires depends on where the address space ran out; the verdict is the one it printed.
  "out-of-memory": { kind: "panic", culprit: "main.(*Spool).Begin", message: /^fatal error: (runtime: )?out of memory\b/, signature: "panic | main.(*Spool).Begin | main.accept | main.main", shipped: "main.accept" },
};

/** The `fatal error: …` line the runtime printed before it aborted, when it threw. */
function printedThrow(built: BuiltGoCore): string | null {
  return /^fatal error: .*$/m.exec(built.output)?.[0] ?? null;
}

/** The debuggers every case runs through: gdb always, Delve where it is installed. */
const DEBUGGERS = ["gdb", ...(hasDlv() ? ["dlv"] : [])] as const;
/**
 * The fields of a verdict that must not depend on the debugger. The culprit's `frame` is left out:
 * it counts the runtime's frames above it, and of a throw gdb's walk from the signal frame shows
 * three more (the systemstack switch into fatalthrow) than Delve's own unwind.
 */
const VERDICT = (crash: Crash) => {
  const { frame: _frame, ...culprit } = crash.culprit;
  return { kind: crash.kind, message: crash.message, culprit, signature: crash.signature, faultAddress: crash.faultAddress, access: crash.access };
};

async function triageJson(built: BuiltGoCore, debuggerName = "gdb"): Promise<{ crash: Crash; stderr: string }> {
  const result = await runCli(["triage", built.core, "--exe", built.exe, "--debugger", debuggerName, "--json"]);
  expect(result.code, result.stderr).toBe(0);
  return { crash: JSON.parse(result.stdout) as Crash, stderr: result.stderr };
}

describe("Go fixtures", () => {
  it("every case has an expectation", () => {
    expect(goFixtureNames()).toEqual(Object.keys(EXPECTED).sort());
  });
});

const CASES = DEBUGGERS.flatMap((debuggerName) => Object.entries(EXPECTED).map(([name, expected]) => [name, debuggerName, expected] as const));

describe.each(CASES)("Go service %s, debug build (-N -l), through %s", (name, debuggerName, expected) => {
  let built: BuiltGoCore;
  beforeAll(async () => {
    built = await buildGoCore(name);
  });

  it("is triaged as the runtime told it", async () => {
    const { crash } = await triageJson(built, debuggerName);
    expect(crash.kind).toBe(debuggerName === "dlv" ? (expected.kindThroughDelve ?? expected.kind) : expected.kind);
    expect(crash.message).toMatch(expected.message);
    if (printedThrow(built)) expect(crash.message).toBe(printedThrow(built));
    expect(crash.culprit.function).toBe(expected.culprit);
    expect(crash.culprit.line).toBe(goCulpritLine(name));
    expect(crash.culprit.file).toMatch(/main\.go$/);
    if (expected.signature) expect(crash.signature).toBe(expected.signature);
    if (expected.signature) expect(crash.signature?.startsWith(`${crash.kind} | `)).toBe(true);
    if (expected.faultAddress) expect(crash.faultAddress).toBe(expected.faultAddress);
    if (expected.access) expect(crash.access).toBe(expected.access);
  }, 120_000);
});

/**
 * The crashing goroutine's frames as Go's own traceback printed them (GOTRACEBACK=crash): each
 * frame's function, innermost first, from the `goroutine N [running]:` block; null where the
 * runtime printed none (a deadlock, a hang dumped alive).
 */
function printedFrames(built: BuiltGoCore): string[] | null {
  const block = /^goroutine \d+ \[running\]:\n([\s\S]*?)(?:\n\n|(?![\s\S]))/m.exec(built.output)?.[1];
  if (block === undefined) return null;
  return block
    .split("\n")
    .filter((line) => !line.startsWith("\t") && !line.startsWith("created by ") && !line.startsWith("..."))
    .map((line) => line.replace(/\([^()]*\)$/, ""));
}

describe.each(CASES)("Go service %s, debug build, through %s: the crashing goroutine's stack", (name, debuggerName) => {
  it("is the one Go's own traceback printed: its signature names the same first frames of the program", async (context) => {
    const built = await buildGoCore(name);
    const printed = printedFrames(built);
    // Only a goroutine that crashed running has its stack printed as it ran; a stack overflow's is cut by the runtime.
    if (printed === null || printed.length === 0 || /stack overflow/.test(built.output)) return context.skip("Go printed no running goroutine's whole stack");
    const { crash } = await triageJson(built, debuggerName);
    const own = printed.filter((fn) => !/^(runtime\.|panic$)/.test(fn));
    expect(crash.signature).toBe([crash.kind, ...own.slice(0, 3)].join(" | "));
  }, 120_000);
});

describe.each(CASES)("Go service %s, as shipped (optimised, inlined), through %s", (name, debuggerName, expected) => {
  let built: BuiltGoCore;
  beforeAll(async () => {
    built = await buildGoCore(name, { optimized: true });
  });

  it("keeps the kind, the message and the culprit's line", async () => {
    const { crash } = await triageJson(built, debuggerName);
    expect(crash.kind).toBe(debuggerName === "dlv" ? (expected.kindThroughDelve ?? expected.kind) : expected.kind);
    expect(crash.message).toMatch(expected.message);
    if (printedThrow(built)) expect(crash.message).toBe(printedThrow(built));
    expect(crash.culprit.line).toBe(goCulpritLine(name));
    expect(crash.culprit.function).toBe(expected.shipped);
  }, 120_000);
});

describe.skipIf(!hasDlv()).each(Object.keys(EXPECTED))("Go service %s through gdb and through Delve", (name) => {
  it.each([false, true])("gives the same verdict both ways (optimised: %s)", async (optimized) => {
    const built = await buildGoCore(name, { optimized });
    const [gdb, dlv] = await Promise.all([triageJson(built, "gdb"), triageJson(built, "dlv")]);
    // Only where each debugger reports itself may they differ: the thread's name is gdb's LWP name or Delve's goroutine status;
    // and the kind where Delve shows the holders of the locks that gdb cannot (the signature starts with the kind).
    const seen = (crash: Crash) => (EXPECTED[name]?.kindThroughDelve ? { ...VERDICT(crash), kind: null, signature: crash.signature?.replace(/^[\w-]+ \| /, "") } : VERDICT(crash));
    expect(seen(dlv.crash)).toEqual(seen(gdb.crash));
  }, 180_000);
});

describe("what triage tells of a Go program under gdb", () => {
  it("says how the goroutine's frames were found, and that Delve lists goroutines", async () => {
    const built = await buildGoCore("nil-map");
    const result = await runCli(["triage", built.core, "--exe", built.exe, "--debugger", "gdb"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/goroutine 1's \d+ frames were walked by frame pointers(, then by their sizes in Go's pc-SP table \(.*\))? from its saved registers \(g\.sched\)/);
    expect(result.stdout).toMatch(/a Go go1\.\d+\S* program: gdb shows threads, not goroutines; `dlv core <program> <core>` lists every goroutine/);
  }, 60_000);

  it("names what each goroutine of a hung service waits on", async () => {
    const { crash } = await triageJson(await buildGoCore("hang"));
    expect(crash.message).toBe(
      "hung: all 5 goroutines of the program's own wait: 2 on chan receive (in main.worker), 1 on a sync.WaitGroup (in main.main), 1 on a sync.Mutex (in main.(*Registry).Report), 1 on chan receive (in main.dispatch)",
    );
    expect(crash.origin?.type).toBe("requested");
  }, 60_000);
});

/** What must not depend on how the program was linked: the culprit's path is the build folder's, which differs. */
const LINKED_VERDICT = (crash: Crash) => ({ kind: crash.kind, message: crash.message, function: crash.culprit.function, line: crash.culprit.line, signature: crash.signature, faultAddress: crash.faultAddress, access: crash.access });

describe.each(CASES)("Go service %s built as a PIE (-buildmode=pie), through %s", (name, debuggerName) => {
  it("gives the verdict of the same service built at fixed addresses", async () => {
    const [pie, fixed] = await Promise.all([buildGoCore(name, { pie: true }), buildGoCore(name)]);
    expect((await readFile(pie.exe)).readUInt16LE(16)).toBe(3);
    const [fromPie, fromFixed] = await Promise.all([triageJson(pie, debuggerName), triageJson(fixed, debuggerName)]);
    expect(LINKED_VERDICT(fromPie.crash)).toEqual(LINKED_VERDICT(fromFixed.crash));
    expect(fromPie.stderr).not.toMatch(/another machine/);
  }, 180_000);
});

/**
 * Without symbols the goroutines' frames are named from Go's own pc-line table; only the runtime's
 * list of goroutines (allgs) cannot be found, so what is read from it (a deadlock's waits) is not.
 */
const READ_FROM_ALLGS = new Set(["deadlock", "lock-order", "hang", "lock-order-hang"]);

describe.each(Object.keys(EXPECTED))("Go service %s built stripped (-ldflags=-s -w)", (name) => {
  it.each([false, true])("gives the verdict of the unstripped build through gdb, or says what it cannot know (PIE: %s)", async (pie) => {
    const [stripped, unstripped] = await Promise.all([buildGoCore(name, { optimized: true, stripped: true, pie }), buildGoCore(name, { optimized: true, pie })]);
    const result = await runCli(["triage", stripped.core, "--exe", stripped.exe, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const crash = JSON.parse(result.stdout) as Crash;
    if (hasDlv()) expect(result.stderr).toMatch(/the Go program has no DWARF debug information \(built with -ldflags=-w, or stripped\), which Delve needs: reading its core with gdb/);
    const { crash: expected } = await triageJson(unstripped, "gdb");
    if (READ_FROM_ALLGS.has(name)) {
      // A throw still says what it was; a service dumped alive says nothing of itself: it is not called hung on a guess.
      const said = expected.kind === "hang" ? { kind: "unknown", message: null } : { kind: expected.kind, message: expected.message };
      expect({ kind: crash.kind, message: crash.message }).toEqual(said);
      expect(crash.culprit).toMatchObject({ function: null, file: null, line: null });
    } else {
      expect(LINKED_VERDICT(crash)).toEqual(LINKED_VERDICT(expected));
      expect(crash.culprit.line).toBe(goCulpritLine(name));
    }
  }, 120_000);
});

describe("a stripped Go service's core", () => {
  it("says its frames were named from Go's own table, and what is not read without symbols", async () => {
    const built = await buildGoCore("lock-order", { optimized: true, stripped: true });
    const result = await runCli(["triage", built.core, "--exe", built.exe, "--debugger", "gdb"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Where: +unknown/m);
    expect(result.stdout).toMatch(/the program has no symbol table \(built with -ldflags=-s, or stripped\): its frames were named from Go's own pc-line table \(\.gopclntab\), as the runtime's traceback names them, but the runtime's list of goroutines \(allgs\) cannot be found without symbols/);
    expect(result.stdout).not.toMatch(/dlv core <program> <core>/);
  }, 60_000);

  it.skipIf(!hasDlv())("is refused by Delve in one line that says why and what to use", async () => {
    const built = await buildGoCore("nil-map", { optimized: true, stripped: true });
    const result = await runCli(["triage", built.core, "--exe", built.exe, "--debugger", "dlv"]);
    expect(result.code).toBe(4);
    expect(result.stderr.trim()).toBe(`dumpdbg: Delve cannot read ${built.core}: ${built.exe} has no DWARF debug information (built with -ldflags=-w, or stripped), which Delve needs; read it with --debugger gdb`);
  }, 60_000);
});

describe("a lock-order deadlock between two goroutines", () => {
  /** "0xc000058050: goroutine 6 (main.transfer at main.go:27)" from gdb's note: each mutex and its waiter. */
  const waitsOf = (stdout: string) => [...stdout.matchAll(/(0x[0-9a-f]+): goroutine (\d+) \(main\.transfer at main\.go:(\d+)\)/g)].map((m) => ({ lock: m[1], goroutine: Number(m[2]), line: Number(m[3]) }));

  it.each([false, true])("is grouped by the mutex each goroutine waits on through gdb, its holders said unknown (optimised: %s)", async (optimized) => {
    const built = await buildGoCore("lock-order", { optimized });
    const [text, json] = await Promise.all([runCli(["triage", built.core, "--exe", built.exe, "--debugger", "gdb"]), triageJson(built, "gdb")]);
    expect(text.code, text.stderr).toBe(0);
    const waits = waitsOf(text.stdout);
    expect(waits).toHaveLength(2);
    expect(new Set(waits.map((w) => w.lock)).size).toBe(2);
    expect(waits.every((w) => w.line === goCulpritLine("lock-order"))).toBe(true);
    expect(text.stdout).toMatch(/a sync\.Mutex records no holder, and this debugger shows no goroutine's frame to read one from its code \(Delve does\): who holds each is unknown/);
    expect(json.crash.deadlock).toEqual({ cycle: [] });
  }, 120_000);

  it.skipIf(!hasDlv()).each([false, true])("is a cycle through Delve, over the mutexes gdb's reading names (optimised: %s)", async (optimized) => {
    const built = await buildGoCore("lock-order", { optimized });
    const [text, { crash }] = await Promise.all([runCli(["triage", built.core, "--exe", built.exe, "--debugger", "gdb"]), triageJson(built, "dlv")]);
    const waits = waitsOf(text.stdout);
    const cycle = crash.deadlock?.cycle ?? [];
    expect(cycle).toHaveLength(2);
    const [first, second] = cycle;
    expect(first?.heldByThread).toBe(second?.thread);
    expect(second?.heldByThread).toBe(first?.thread);
    for (const edge of cycle) {
      expect(edge).toMatchObject({ function: "main.transfer", line: goCulpritLine("lock-order"), lockName: "to.mu" });
      // The mutex Delve's cycle says a goroutine waits on is the one the runtime's semaphore table says, through either debugger.
      expect(waits.find((w) => w.goroutine === edge.thread)?.lock).toBe(edge.lock);
    }
  }, 120_000);
});

describe("a service hung on a lock-order cycle, dumped alive", () => {
  it.each([false, true])("is a hang through gdb, whose reading shows the waits but not the holders (optimised: %s)", async (optimized) => {
    const built = await buildGoCore("lock-order-hang", { optimized });
    const { crash } = await triageJson(built, "gdb");
    expect(crash.kind).toBe("hang");
    expect(crash.deadlock).toBeNull();
    expect(crash.origin?.type).toBe("requested");
  }, 120_000);

  it.skipIf(!hasDlv()).each([false, true])("is a deadlock through Delve, the cycle drawn over the mutexes each transfer waits on (optimised: %s)", async (optimized) => {
    const built = await buildGoCore("lock-order-hang", { optimized });
    const { crash } = await triageJson(built, "dlv");
    expect(crash.kind).toBe("deadlock");
    const cycle = crash.deadlock?.cycle ?? [];
    expect(cycle.map((edge) => [edge.function, edge.line, edge.lockName])).toEqual([
      ["main.(*Ledger).Transfer", goCulpritLine("lock-order-hang"), "dst.mu"],
      ["main.(*Ledger).Transfer", goCulpritLine("lock-order-hang"), "dst.mu"],
    ]);
    expect(cycle[0]?.heldByThread).toBe(cycle[1]?.thread);
    expect(cycle[1]?.heldByThread).toBe(cycle[0]?.thread);
    expect(cycle[0]?.lock).not.toBe(cycle[1]?.lock);
  }, 120_000);
});
