/**
 * Go services' cores, from the user's side: each fixture service is built (with `-N -l` as a debug
 * build, and as shipped), crashed with GOTRACEBACK=crash (or hung and dumped alive), and
 * `dumpdbg triage core --exe svc --json` must name the kind, the runtime's message, the culprit
 * function and its line, through gdb and through Delve alike: the same Go reader asks both, and
 * each must give the same verdict (Delve, where it is installed).
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { hasDlv } from "../helpers/dlv-core.js";
import { buildGoCore, goCulpritLine, goFixtureNames, type BuiltGoCore } from "../helpers/go.js";

interface Expected {
  kind: Crash["kind"];
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
    expect(crash.kind).toBe(expected.kind);
    expect(crash.message).toMatch(expected.message);
    if (printedThrow(built)) expect(crash.message).toBe(printedThrow(built));
    expect(crash.culprit.function).toBe(expected.culprit);
    expect(crash.culprit.line).toBe(goCulpritLine(name));
    expect(crash.culprit.file).toMatch(/main\.go$/);
    if (expected.signature) expect(crash.signature).toBe(expected.signature);
    if (expected.faultAddress) expect(crash.faultAddress).toBe(expected.faultAddress);
    if (expected.access) expect(crash.access).toBe(expected.access);
  }, 120_000);
});

describe.each(CASES)("Go service %s, as shipped (optimised, inlined), through %s", (name, debuggerName, expected) => {
  let built: BuiltGoCore;
  beforeAll(async () => {
    built = await buildGoCore(name, { optimized: true });
  });

  it("keeps the kind, the message and the culprit's line", async () => {
    const { crash } = await triageJson(built, debuggerName);
    expect(crash.kind).toBe(expected.kind);
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
    // Only where each debugger reports itself may they differ: the thread's name is gdb's LWP name or Delve's goroutine status.
    expect(VERDICT(dlv.crash)).toEqual(VERDICT(gdb.crash));
  }, 180_000);
});

describe("what triage tells of a Go program under gdb", () => {
  it("says how the goroutine's frames were found, and that Delve lists goroutines", async () => {
    const built = await buildGoCore("nil-map");
    const result = await runCli(["triage", built.core, "--exe", built.exe, "--debugger", "gdb"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/goroutine 1's \d+ frames were walked by frame pointers from its saved registers \(g\.sched\)/);
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
