/**
 * .NET's side of a dump (src/analyzers/managed.ts) on SOS's listings as cdb prints them
 * (tests/helpers/cdb-transcripts.ts): the culprit of a managed exception is the program's own first
 * frame, a hang's monitor cycle comes from !syncblk and the threads' !clrstack -a, and a dump the
 * debugger reads no runtime in has no managed side.
 */
import { describe, expect, it } from "vitest";
import { exceptionText, methodName, monitorCycles, programFrame, readManaged, withManaged } from "../../src/analyzers/managed.js";
import type { PlacedFrame } from "../../src/analyzers/culprit.js";
import { analyzeOutput } from "../../src/analyzers/registry.js";
import { cdbManagedVocabulary, cdbVocabulary } from "../../src/debuggers/cdb/vocabulary.js";
import { parseClrStacks, parsePrintException, parseSyncBlocks } from "../../src/debuggers/cdb/text/sos.js";
import { answerOf, Inspector } from "../../src/debuggers/inspector.js";
import type { ManagedFrame } from "../../src/debuggers/model.js";
import type { Vocabulary } from "../../src/debuggers/probe.js";
import type { Crash } from "../../src/report/schema.js";
import { MANAGED_CRASH, MANAGED_DEADLOCK } from "../helpers/cdb-transcripts.js";

/** An inspector over recorded outputs by command; a command with none fails as cdb's unknown command does. */
function recorded(vocabulary: Vocabulary, outputs: Record<string, string>): { q: Inspector; asked: string[] } {
  const asked: string[] = [];
  const q = new Inspector(async (probe) => {
    const command = vocabulary.render(probe);
    asked.push(command);
    const output = outputs[command];
    return answerOf(vocabulary, probe, command, output === undefined ? { ok: false, output: "", errorType: "debugger_error", error: `No export ${command} found` } : { ok: true, output });
  });
  return { q, asked };
}

const frame = (name: string, more: Partial<ManagedFrame> = {}): ManagedFrame => ({ function: name, module: null, file: null, line: null, runtime: false, parameters: [], locals: [], ...more });

describe("the culprit of a managed exception", () => {
  it("is the program's first frame with its file and line", () => {
    const [stack] = parseClrStacks(MANAGED_CRASH.clrstack);
    const index = programFrame(stack?.frames ?? []);
    expect(index).toBe(0);
    expect(stack?.frames[index ?? -1]).toMatchObject({ function: "OrderService.Pricing.Discount(OrderService.Order)", file: "C:\\app\\src\\Pricing.cs", line: 27 });
  });

  it("skips the framework's methods, its assemblies and the runtime's transition frames", () => {
    const frames = [
      frame("ThrowHelper", { runtime: true }),
      frame("System.ThrowHelper.ThrowArgumentNullException(System.ExceptionArgument)"),
      frame("Microsoft.Extensions.Options.OptionsCache`1[[System.__Canon, System.Private.CoreLib]].GetOrAdd(System.String)"),
      frame("Newtonsoft.Json.JsonConvert.DeserializeObject(System.String)", { module: "System.Text.Json" }),
      frame("OrderService.Config.Load(System.String)", { file: "C:\\app\\src\\Config.cs", line: 40 }),
    ];
    expect(programFrame(frames)).toBe(4);
    expect(programFrame(frames.slice(0, 4))).toBeNull();
  });

  it("names a method without its parameter types, and the exception by its type and message", () => {
    expect(methodName("OrderService.Pricing.Discount(OrderService.Order)")).toBe("OrderService.Pricing.Discount");
    expect(methodName("OrderService.Program.<Main>$")).toBe("OrderService.Program.<Main>$");
    expect(exceptionText(parsePrintException(MANAGED_CRASH.printException))).toBe("System.NullReferenceException: Object reference not set to an instance of an object.");
    expect(exceptionText({ type: "OrderService.PricingException", message: null, object: null, stack: [] })).toBe("OrderService.PricingException");
  });
});

describe("a managed deadlock", () => {
  it("is the cycle of threads each waiting in ReliableEnter for the monitor the other holds, named by the waiting method's parameter", () => {
    expect(monitorCycles(parseClrStacks(MANAGED_DEADLOCK.clrstacks), parseSyncBlocks(MANAGED_DEADLOCK.syncblk))).toEqual([
      [
        { thread: 5, function: "Bank.Ledger.Transfer", file: "C:\\bank\\Ledger.cs", line: 21, lock: "0x1f2a5001118", lockName: "Bank.Account to", heldByThread: 6 },
        { thread: 6, function: "Bank.Ledger.Transfer", file: "C:\\bank\\Ledger.cs", line: 21, lock: "0x1f2a5001100", lockName: "Bank.Account to", heldByThread: 5 },
      ],
    ]);
  });

  it("is none when the owner of the awaited monitor waits for nothing", () => {
    const stacks = parseClrStacks(MANAGED_DEADLOCK.clrstacks).filter((stack) => stack.thread !== 6);
    expect(monitorCycles(stacks, parseSyncBlocks(MANAGED_DEADLOCK.syncblk))).toEqual([]);
  });

  it("starts at its lowest thread, whichever thread leads into it", () => {
    const enter = frame("System.Threading.Monitor.Enter(System.Object)", { runtime: true });
    const waiter = (thread: number, on: string) => ({ thread, osThreadId: thread, frames: [enter, frame("App.Worker.Run()", { parameters: [{ name: "gate", value: on }] })] });
    const lock = (object: string, owner: number) => ({ object, type: "System.Object", ownerThread: owner, ownerOsThreadId: owner, waiters: 1 });
    const cycles = monitorCycles([waiter(3, "0x10"), waiter(9, "0x20"), waiter(7, "0x30")], [lock("0x10", 9), lock("0x20", 7), lock("0x30", 9)]);
    expect(cycles.map((cycle) => cycle.map((edge) => [edge.thread, edge.heldByThread]))).toEqual([[[7, 9], [9, 7]]]);
  });
});

describe("reading the managed side", () => {
  it("of a .NET crash: SOS's threads, exception, the thread's stack and the heap's statistics", async () => {
    const { q, asked } = recorded(cdbManagedVocabulary, { "!threads": MANAGED_CRASH.threads, "!pe": MANAGED_CRASH.printException, "!clrstack -a": MANAGED_CRASH.clrstack, "!dumpheap -stat": MANAGED_CRASH.heap });
    const found = await readManaged(q, "exception");
    expect(asked).toEqual(["!threads", "!pe", "!clrstack -a", "!dumpheap -stat"]);
    expect(found?.exception?.type).toBe("System.NullReferenceException");
    expect(found?.threads.find((t) => t.exception)?.thread).toBe(0);
    expect(found?.culprit).toBe(0);
    expect(found?.heap.find((stat) => stat.type === "OrderService.Order")).toEqual({ type: "OrderService.Order", count: 14, bytes: 672 });
  });

  it("falls back on the frames !pe kept when the thread's managed stack is gone", async () => {
    const { q } = recorded(cdbManagedVocabulary, { "!threads": MANAGED_CRASH.threads, "!pe": MANAGED_CRASH.printException, "!clrstack -a": "OS Thread Id: 0x1b3c (0)\nUnable to walk the managed stack. The current thread is likely not a managed thread.", "!dumpheap -stat": MANAGED_CRASH.heap });
    const found = await readManaged(q, "exception");
    expect(found?.stack[found.culprit ?? -1]).toMatchObject({ function: "OrderService.Pricing.Discount(OrderService.Order)", module: "OrderService", line: null });
  });

  it("of a hang: the monitors, then every thread's stack only because some are held", async () => {
    const { q, asked } = recorded(cdbManagedVocabulary, { "!threads": MANAGED_CRASH.threads, "!syncblk": MANAGED_DEADLOCK.syncblk, "~*e !clrstack -a": MANAGED_DEADLOCK.clrstacks, "!dumpheap -stat": MANAGED_CRASH.heap });
    const found = await readManaged(q, "hang");
    expect(asked).toEqual(["!threads", "!syncblk", "~*e !clrstack -a", "!dumpheap -stat"]);
    expect(found?.cycles).toHaveLength(1);
    expect(found?.stack[found.culprit ?? -1]?.function).toBe("Bank.Ledger.Transfer(Bank.Account, Bank.Account, Int32)");

    const idle = recorded(cdbManagedVocabulary, { "!threads": MANAGED_CRASH.threads, "!syncblk": "Index         SyncBlock MonitorHeld Recursion Owning Thread Info          SyncBlock Owner\n-----------------------------\nTotal           0", "!dumpheap -stat": MANAGED_CRASH.heap });
    expect((await readManaged(idle.q, "hang"))?.cycles).toEqual([]);
    expect(idle.asked).not.toContain("~*e !clrstack -a");
  });

  it("is none when the debugger reads no runtime: nothing more is asked", async () => {
    const { q, asked } = recorded(cdbVocabulary, { lm: MANAGED_CRASH.modules });
    expect(await readManaged(q, "exception")).toBeNull();
    expect(asked).toEqual(["lm"]);
  });
});

describe("triage's result with the managed side", () => {
  const crash: Crash = {
    kind: "uncaught-exception",
    signal: "CLR exception (.NET)",
    signalCode: "0xe0434352",
    faultAddress: null,
    access: null,
    message: "System.NullReferenceException: Object reference not set to an instance of an object.",
    thread: { id: 0, lwp: 0x1b3c, name: null },
    culprit: { function: null, file: null, line: null, column: null, frame: null, module: null, language: null }, runtime: null,
    origin: { type: "exception", sender: null, evidence: "exception 0xe0434352 (CLR exception (.NET)): a software exception thrown by the program and not handled" },
    exploitability: { rating: "not-exploitable", reasons: ["the program stopped itself on a check it made (an assertion, abort, panic or terminate)"] },
    annotations: null,
    cut: null,
    signature: "uncaught-exception",
    deadlock: null,
  };

  it("takes the culprit, the signature and the frames from the managed stack", async () => {
    const { q } = recorded(cdbManagedVocabulary, { "!threads": MANAGED_CRASH.threads, "!pe": MANAGED_CRASH.printException, "!clrstack -a": MANAGED_CRASH.clrstack, "!dumpheap -stat": MANAGED_CRASH.heap });
    const result = withManaged({ crash, frames: [] as PlacedFrame[], hiddenFrames: 0, stackDepth: 8 }, await readManaged(q, "exception"));
    expect(result.crash.culprit).toEqual({ function: "OrderService.Pricing.Discount", file: "C:\\app\\src\\Pricing.cs", line: 27, frame: 0, module: "OrderService", language: null });
    expect(result.crash.signature).toBe("uncaught-exception | OrderService.Pricing.Discount | OrderService.Program.Main");
    expect(result.frames.map((f) => [f.function, f.line, f.args])).toEqual([
      ["OrderService.Pricing.Discount", 27, "order=0x1f2a5000e28"],
      ["OrderService.Program.Main", 12, "args=0x1f2a5000d10"],
      ["[GCFrame]", null, ""],
    ]);
    expect(result.stackDepth).toBe(3);
  });

  it("leaves it as it was without a managed side or a program frame", () => {
    const result = { crash, frames: [], hiddenFrames: 0, stackDepth: 8 };
    expect(withManaged(result, null)).toBe(result);
    expect(withManaged(result, { threads: [], exception: null, stack: [frame("System.Threading.Thread.Sleep(Int32)")], culprit: null, cycles: [], heap: [] })).toBe(result);
  });
});

describe("the managed side as evidence", () => {
  const summary = (probe: Parameters<typeof analyzeOutput>[0], output: string, vocabulary: Vocabulary = cdbManagedVocabulary) => {
    const analysis = analyzeOutput(probe, vocabulary, output);
    return { summary: analysis?.summary, findings: analysis?.findings };
  };

  it("says which threads hold an exception or monitors, and that there is no runtime to read without SOS", () => {
    expect(summary({ kind: "managed-threads" }, MANAGED_CRASH.threads)).toEqual({ summary: "3 managed threads", findings: ["thread 0 holds a System.NullReferenceException"] });
    expect(summary({ kind: "managed-threads" }, MANAGED_DEADLOCK.threads).findings).toEqual(["thread 5 holds 1 monitor", "thread 6 holds 1 monitor"]);
    expect(summary({ kind: "managed-threads" }, MANAGED_CRASH.modules, cdbVocabulary).summary).toMatch(/^no \.NET runtime read/);
  });

  it("names the exception, the frames, the monitors with their owners, and the heap's largest types", () => {
    expect(summary({ kind: "managed-exception" }, MANAGED_CRASH.printException).findings).toEqual(["System.NullReferenceException: Object reference not set to an instance of an object."]);
    expect(summary({ kind: "managed-stack" }, MANAGED_CRASH.clrstack).findings).toEqual(["#0 OrderService.Pricing.Discount at C:\\app\\src\\Pricing.cs:27", "#1 OrderService.Program.Main at C:\\app\\src\\Program.cs:12", "#2 [GCFrame]"]);
    expect(summary({ kind: "managed-stacks" }, MANAGED_DEADLOCK.clrstacks).findings).toEqual(["thread 5 waits to enter a monitor", "thread 6 waits to enter a monitor"]);
    expect(summary({ kind: "managed-locks" }, MANAGED_DEADLOCK.syncblk)).toEqual({
      summary: "2 monitors held",
      findings: ["0x1f2a5001100 (Bank.Account) held by thread 5, 1 thread waiting", "0x1f2a5001118 (Bank.Account) held by thread 6, 1 thread waiting"],
    });
    expect(summary({ kind: "managed-heap" }, MANAGED_CRASH.heap)).toEqual({
      summary: "1,219 objects, 59,608 bytes on the managed heap",
      findings: ["System.String: 1,204 objects, 58,912 bytes", "OrderService.Order: 14 objects, 672 bytes", "System.Object: 1 object, 24 bytes"],
    });
  });
});
