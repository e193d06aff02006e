/**
 * Hung CPython programs read on the Python side, from gcores of the live processes: which Python
 * thread waits for which lock of `threading` and which thread holds it. A lock-order deadlock
 * between two Python functions is a deadlock naming both, their lines and the locks by the
 * variables holding them (a Lock's holder is the thread a `with` block of which holds it; an RLock
 * records its own); a consumer waiting on a Condition is a hang that says each thread's wait; a
 * thread holding the GIL while blocked in C is named as such. On Debian's interpreter and on a 3.11
 * built from source.
 */
import { describe, expect, it } from "vitest";

import type { Crash, Report } from "../../src/report/schema.js";
import { pipeChat, runCli } from "../helpers/cli.js";
import { crashCore, deadlockCore, hasGdb, pythonInterpreters } from "../helpers/cpython.js";
import { GIL_HOLDER, hungCore, LEDGER, ORDER_QUEUE } from "../helpers/cpython-waits.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const interpreters = pythonInterpreters();

async function triage(core: string, python: string): Promise<{ crash: Crash; text: string }> {
  const json = await runCli(["triage", core, "--exe", python, "--json"]);
  expect(json.code, json.stderr).toBe(0);
  const text = await runCli(["triage", core, "--exe", python]);
  expect(text.code, text.stderr).toBe(0);
  return { crash: JSON.parse(json.stdout) as Crash, text: text.stdout };
}

describe.skipIf(!hasGdb() || interpreters.length === 0)("hung Python programs, read on the Python side", () => {
  describe.each(interpreters)("on $name", ({ python }) => {
    it("a restocker and an order desk each holding the Lock the other takes: a deadlock between the two functions", async () => {
      const core = await deadlockCore(tempDir("dumpdbg-pywait-"), python);
      const { crash, text } = await triage(core.core, python);
      expect(crash.kind).toBe("deadlock");
      expect(crash.signature).toBe("deadlock | place_order | restock");
      const cycle = crash.deadlock!.cycle;
      expect(cycle.map((edge) => [edge.function, edge.file, edge.line, edge.lockName]).sort()).toEqual([
        ["place_order", core.program, core.sourceLines["WAITS place_order"], "threading.Lock inventory"],
        ["restock", core.program, core.sourceLines["WAITS restock"], "threading.Lock orders"],
      ]);
      // Each waits for the lock the other holds.
      const [a, b] = cycle;
      expect([a!.heldByThread, b!.heldByThread]).toEqual([b!.thread, a!.thread]);
      expect(crash.culprit).toMatchObject({ file: core.program, language: "python" });
      expect(["restock", "place_order"]).toContain(crash.culprit.function);
      expect(["restocker", "order-desk"]).toContain(crash.thread.name);
      expect(crash.runtime).toMatchObject({ name: "cpython" });
      expect(text).toMatch(/waits for lock threading\.Lock (orders|inventory) \(0x[0-9a-f]+\) held by thread \d+/);
    });

    it("two tellers each holding an account's RLock the other takes: the RLocks' own holders, named by attribute", async () => {
      const core = await hungCore(tempDir("dumpdbg-pywait-"), python, "ledger", LEDGER);
      const { crash } = await triage(core.core, python);
      expect(crash.kind).toBe("deadlock");
      expect(crash.signature).toBe("deadlock | Ledger.transfer | Ledger.transfer");
      const cycle = crash.deadlock!.cycle;
      expect(cycle.map((edge) => edge.line)).toEqual([core.sourceLines["WAITS transfer"], core.sourceLines["WAITS transfer"]]);
      expect(cycle.map((edge) => edge.lockName).sort()).toEqual(["threading.RLock target.guard", "threading.RLock target.guard"]);
      expect(new Set(cycle.map((edge) => edge.lock)).size).toBe(2);
      expect(["teller-1", "teller-2"]).toContain(crash.thread.name);
    });

    it("a consumer waiting on a Condition nobody notifies, the main thread joining it: a hang that says each wait", async () => {
      const core = await hungCore(tempDir("dumpdbg-pywait-"), python, "order_queue", ORDER_QUEUE);
      const { crash, text } = await triage(core.core, python);
      expect(crash.kind).toBe("hang");
      expect(crash.deadlock).toBeNull();
      expect(crash.thread.name).toBe("MainThread");
      expect(crash.culprit).toMatchObject({ function: "<module>", line: core.sourceLines["WAITS main"], language: "python" });
      expect(crash.message).toMatch(/^hung: all 2 Python threads of the program's own wait, and no lock cycle joins them: /);
      expect(crash.message).toContain(`"consumer" waits in Condition.wait for a notify in take_order (order_queue.py:${core.sourceLines["WAITS consumer"]})`);
      expect(crash.message).toContain(`thread 1 "MainThread" waits in Thread.join for the thread it joins to end in <module> (order_queue.py:${core.sourceLines["WAITS main"]})`);
      expect(text).toContain("hang");
    });

    it("a worker holding the GIL while blocked in C: the hang is blamed on it, and the thread waiting for the GIL says so", async () => {
      const core = await hungCore(tempDir("dumpdbg-pywait-"), python, "gil_holder", GIL_HOLDER);
      const { crash } = await triage(core.core, python);
      expect(crash.kind).toBe("hang");
      expect(crash.thread.name).toBe("MainThread");
      expect(crash.culprit).toMatchObject({ function: "wait_for_signal", line: core.sourceLines.BLOCKS, language: "python" });
      expect(crash.message).toMatch(/thread 1 "MainThread" holds the GIL and is blocked in \S*pause in wait_for_signal \(gil_holder\.py:\d+\)/);
      expect(crash.message).toMatch(/thread \d+ "ticker" waits for the GIL in count_ticks \(gil_holder\.py:\d+\)/);
    });
  });
});

describe.skipIf(!hasGdb() || interpreters.length === 0)("a Python deadlock and a Python crash analysed and asked about", () => {
  const { python } = interpreters[0]!;

  it("the deadlock's analysis confirms the lock order on the Python threads' reading, and the chat answers in Python", async () => {
    const dir = tempDir("dumpdbg-pywait-report-");
    const core = await deadlockCore(dir, python);
    const analysed = await runCli(["analyze", core.core, "--exe", python, "--offline", "--sessions-dir", "sessions", "--out", "reports", "--json"], { cwd: dir });
    expect(analysed.code, analysed.stderr).toBe(0);
    const report = JSON.parse(analysed.stdout) as Report;
    expect(report.hypotheses.map((h) => h.status)).toEqual(["confirmed", "rejected"]);
    expect(report.hypotheses[0]!.statement).toMatch(/^the threads take the same locks in opposite orders/);
    // The cited evidence is the Python threads' reading, kept in the session's store.
    const reading = report.evidence.find((e) => e.command === `cpython-threads ${core.core}`);
    expect(reading).toBeDefined();
    expect(report.conclusion.summary).toMatch(new RegExp(`^A Python deadlock: 2 threads each wait for a lock another holds, in .*\\(${reading!.id}\\)`));
    expect(report.conclusion.rootCause).toMatch(/thread \d+ "(restocker|order-desk)" waits in `(restock|place_order)` \(.*warehouse\.py:\d+\) for threading\.Lock (orders|inventory) \(0x[0-9a-f]+\), held by thread \d+ "(order-desk|restocker)"/);

    const chat = await pipeChat(["chat", report.session.id, "--sessions-dir", "sessions", "--out", "reports", "--provider", "offline"], dir, "who holds the locks?\nwhat is restocker doing?\n");
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(new RegExp(`Python deadlock \\[${reading!.id}\\]: thread \\d+ "(restocker|order-desk)" waits in (restock|place_order) \\(.*warehouse\\.py:\\d+\\) for threading\\.Lock (orders|inventory)`));
    expect(chat.stdout).toMatch(new RegExp(`Thread \\d+ "restocker", its Python frames as read from the interpreter in the core \\[${reading!.id}\\]:\\n  restock \\(.*warehouse\\.py:${core.sourceLines["WAITS restock"]}\\)`));
    expect(chat.stdout).toMatch(/It holds threading\.Lock inventory at 0x[0-9a-f]+\./);
    expect(chat.stdout).toMatch(/It waits for threading\.Lock orders at 0x[0-9a-f]+, held by thread \d+ "order-desk"\./);
  });

  it("the crash's conclusion and chat give the Python culprit's locals as the core holds them", async () => {
    const dir = tempDir("dumpdbg-pywait-locals-");
    const crash = await crashCore(dir, python);
    const analysed = await runCli(["analyze", crash.core, "--exe", python, "--offline", "--sessions-dir", "sessions", "--out", "reports", "--json"], { cwd: dir });
    expect(analysed.code, analysed.stderr).toBe(0);
    const report = JSON.parse(analysed.stdout) as Report;
    expect(report.crash.culprit).toMatchObject({ function: "parse_record", language: "python" });
    const reading = report.evidence.find((e) => e.command === `cpython-threads ${crash.core}`);
    expect(report.conclusion.rootCause).toContain(`The locals of \`parse_record\` as the core holds them: \`address = 8\` (${reading!.id}).`);
    const chat = await pipeChat(["chat", report.session.id, "--sessions-dir", "sessions", "--out", "reports", "--provider", "offline"], dir, "what are the local variables?\n");
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(new RegExp(`Python frame parse_record \\(.*app\\.py:${crash.sourceLines.CULPRIT}\\) of thread 1, its locals as read from the interpreter's frame in the core \\[E\\d+\\]:\\nLocals:\\n  address = 8`));
  });
});
