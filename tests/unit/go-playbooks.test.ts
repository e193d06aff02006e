/**
 * The Go playbooks' judges without a debugger: a triage whose Go reading is the runtime's verdict,
 * the fixture services' own sources as the crash site, and a crashing thread's backtrace that shows
 * only the signal machinery (gdb's view of a Go core), so every verdict rests on the runtime's words
 * and the culprit's line, and the culprit's variables are said to be unknown.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Evidence, Found } from "../../src/agents/evidence.js";
import { factsOf } from "../../src/agents/playbooks/facts.js";
import { playbookFor } from "../../src/agents/playbooks/index.js";
import type { GoroutineSummary, TriageResult } from "../../src/analyzers/index.js";
import type { Probe } from "../../src/debuggers/probe.js";
import type { Hypothesis } from "../../src/state.js";

const GO_DIR = fileURLToPath(new URL("../fixtures/go/", import.meta.url));
/** A recorded triage of a C program, for the fields a Go crash shares with any other. */
const BASE = (JSON.parse(readFileSync(new URL("../fixtures/evidence/null-deref.json", import.meta.url), "utf8")) as { triage: TriageResult }).triage;

interface GoCase {
  fixture: string;
  kind: TriageResult["crash"]["kind"];
  message: string;
  culprit: string;
  line: number;
  faultAddress?: string;
  blamed?: Partial<GoroutineSummary>;
  waiting?: Partial<GoroutineSummary>[];
  /** The lock cycle triage drew (goroutine ids as threads), where the debugger showed the holders. */
  cycle?: NonNullable<TriageResult["crash"]["deadlock"]>["cycle"];
}

function goroutine(over: Partial<GoroutineSummary>): GoroutineSummary {
  return { id: 1, status: "waiting", waitsOn: null, lock: null, function: null, file: null, line: null, ...over };
}

function judged({ fixture, kind, message, culprit, line, faultAddress, blamed, waiting = [], cycle }: GoCase) {
  const file = `${GO_DIR}${fixture}/main.go`;
  const frame = { level: 3, address: "0x401000", function: culprit, args: "", file, line, from: null, found: "scan" as const, unwound: null, module: null };
  const triage: TriageResult = {
    ...BASE,
    crash: { ...BASE.crash, kind, message, faultAddress: faultAddress ?? null, access: faultAddress ? "read" : null, culprit: { function: culprit, file, line, column: null, frame: 3, module: null, language: null }, runtime: null, deadlock: kind === "deadlock" ? { cycle: cycle ?? [] } : null },
    frames: [frame],
    // The goroutines waiting on locks were unwound by the debugger where it drew their cycle (Delve), not otherwise (gdb).
    go: { version: "go1.19.8", goroutine: goroutine({ status: "running", function: culprit, file, line, ...blamed }), waiting: waiting.map(goroutine), goroutineFrames: waiting.some((g) => g.lock) ? (cycle ?? []).length > 0 : null },
  };
  const source = { path: file, lines: readFileSync(file, "utf8").split("\n") };
  const facts = factsOf(triage, { homeThread: 1, sources: { [file]: source } });
  const playbook = playbookFor(facts);
  // gdb's unwind of the crashing thread: the runtime's raise, up to its signal trampoline.
  const evidence: Evidence = {
    find<P extends Probe>(probe: P | null): Found<P> | null {
      if (probe === null) return null;
      if (probe.kind === "backtrace") return { id: "E1", ok: true, summary: "", output: "", probe, command: "bt 40", reading: { frames: [{ level: 0, address: "0x4633a1", function: "runtime.raise.abi0", args: "", file: null, line: null, from: null }] } } as unknown as Found<P>;
      if (probe.kind === "source") return { id: "E2", ok: true, summary: "", output: source.lines[line - 1] ?? "", probe, command: "list", reading: [] } as unknown as Found<P>;
      return null;
    },
    findCommand: () => null,
    exists: (id) => id === "E1" || id === "E2",
    succeeded: (id) => id === "E1" || id === "E2",
  };
  const hypotheses: Hypothesis[] = playbook.hypotheses.map((planned, i) => {
    const v = planned.judge(evidence);
    return { id: `H${i + 1}`, rule: planned.rule, statement: planned.statement, status: v.status, finding: v.finding, evidenceIds: v.evidenceIds } as Hypothesis;
  });
  return { verdicts: Object.fromEntries(hypotheses.map((h) => [h.rule, h.status])), draft: playbook.conclude(hypotheses, evidence) };
}

describe("Go playbooks", () => {
  it("nil map: the field the culprit's line writes, its declared type for make, and its value said unknown", () => {
    const { verdicts, draft } = judged({ fixture: "nil-map", kind: "panic", message: "assignment to entry in nil map", culprit: "main.(*Cache).Put", line: 15 });
    expect(verdicts).toEqual({ "nil-map": "confirmed", "concurrent-map": "rejected" });
    expect(draft.summary).toMatch(/wrote to a nil map — `c\.entries`/);
    expect(draft.rootCause).toMatch(/The value of `c\.entries` is not printed: the culprit's frame is not on the stack/);
    expect(draft.recommendations[0]).toContain("make(map[string]string)");
    expect(draft.confidence).toBe(0.9);
  });

  it("index out of range: the index and length from the message, the slice and index from the line", () => {
    const { verdicts, draft } = judged({ fixture: "index-range", kind: "panic", message: "runtime error: index out of range [5] with length 3", culprit: "main.(*Queue).Next", line: 16 });
    expect(verdicts).toEqual({ "index-past-end": "confirmed", "negative-index": "rejected" });
    expect(draft.summary).toMatch(/index 5, but `q\.jobs` holds 3 elements \(valid indexes 0\.\.2\)/);
  });

  it("any other runtime error: the runtime's words at the culprit's line decide, at a lower confidence", () => {
    const { verdicts, draft } = judged({ fixture: "index-range", kind: "panic", message: "runtime error: integer divide by zero", culprit: "main.(*Queue).Next", line: 16 });
    expect(verdicts).toEqual({ "runtime-stopped": "confirmed", "program-panic": "rejected" });
    expect(draft.summary).toMatch(/failed a Go runtime check at `job := q\.jobs\[q\.cursor\]` \(E2\): "runtime error: integer divide by zero"/);
    expect(draft.confidence).toBe(0.7);
  });

  it("a build as shipped: the function whose body holds the line is named as inlined", () => {
    const { draft } = judged({ fixture: "nil-map", kind: "panic", message: "assignment to entry in nil map", culprit: "main.main", line: 15 });
    expect(draft.summary).toMatch(/^`main\.main` \(main\.go:15, in `\(\*Cache\)\.Put` inlined into it\)/);
  });

  it("hang: the blamed goroutine holds the mutex another waits on, across its channel wait", () => {
    const { verdicts, draft } = judged({
      fixture: "hang",
      kind: "hang",
      message: "hung",
      culprit: "main.dispatch",
      line: 34,
      blamed: { id: 21, status: "waiting", waitsOn: "chan receive" },
      waiting: [
        { id: 18, waitsOn: "a sync.Mutex", function: "main.(*Registry).Report" },
        { id: 21, waitsOn: "chan receive", function: "main.dispatch" },
      ],
    });
    expect(verdicts["lock-held-while-waiting"]).toBe("confirmed");
    expect(verdicts["lock-cycle"]).toBe("rejected");
    expect(draft.summary).toMatch(/while holding `r\.mu`/);
    expect(draft.recommendations[0]).toMatch(/Do not hold `r\.mu` across a channel operation/);
  });

  it("deadlock: a wait on a channel with no lock held is the channel's missing partner", () => {
    const { verdicts } = judged({ fixture: "deadlock", kind: "deadlock", message: "fatal error: all goroutines are asleep - deadlock!", culprit: "main.(*Server).Shutdown", line: 13, blamed: { waitsOn: "chan receive", status: "waiting" }, waiting: [{ id: 1, waitsOn: "chan receive", function: "main.(*Server).Shutdown" }] });
    expect(verdicts).toEqual({ "channel-without-partner": "confirmed", "lock-cycle": "rejected", "lock-held-while-waiting": "rejected" });
  });

  it("out of memory: the allocation at the culprit's line and what sizes it, and that it is the last straw", () => {
    const { verdicts, draft } = judged({ fixture: "out-of-memory", kind: "panic", message: "fatal error: out of memory", culprit: "main.(*Spool).Begin", line: 25 });
    expect(verdicts).toEqual({ "heap-exhausted": "confirmed", "program-panic": "rejected" });
    expect(draft.summary).toMatch(/allocated at `u\.body = make\(\[\]byte, declared\)` \(E2\) when the Go heap could not grow any more: the runtime threw "fatal error: out of memory"\. The allocation's size is `declared`\./);
    expect(draft.rootCause).toMatch(/The value of `declared` is not printed/);
    expect(draft.recommendations.join("\n")).toMatch(/Bound `declared` before `make\(\[\]byte, declared\)`[\s\S]*GOMEMLIMIT/);
    expect(draft.confidence).toBe(0.8);
  });

  const lockOrder = (cycle: GoCase["cycle"]) =>
    judged({
      fixture: "lock-order",
      kind: "deadlock",
      message: "fatal error: all goroutines are asleep - deadlock!",
      culprit: "main.transfer",
      line: 27,
      blamed: { id: 18, status: "waiting", waitsOn: "a sync.Mutex", lock: "0xc0000ac030" },
      waiting: [
        { id: 1, waitsOn: "a sync.WaitGroup", function: "main.main" },
        { id: 18, waitsOn: "a sync.Mutex", lock: "0xc0000ac030", function: "main.transfer", line: 27 },
        { id: 19, waitsOn: "a sync.Mutex", lock: "0xc0000ac010", function: "main.transfer", line: 27 },
      ],
      cycle,
    });

  it("lock-order deadlock, holders shown: the cycle, and one lock order", () => {
    const edge = (thread: number, lock: string, heldByThread: number) => ({ thread, function: "main.transfer", file: `${GO_DIR}lock-order/main.go`, line: 27, lock, lockName: "to.mu", heldByThread });
    const { verdicts, draft } = lockOrder([edge(18, "0xc0000ac030", 19), edge(19, "0xc0000ac010", 18)]);
    expect(verdicts).toEqual({ "lock-cycle": "confirmed", "lock-held-while-waiting": "rejected", "channel-without-partner": "rejected" });
    expect(draft.summary).toBe("All goroutines were asleep: goroutines 18 and 19 each hold the sync.Mutex the other waits to lock, in `main.transfer` at `to.mu.Lock()` (E2), having locked `from.mu` first (line 24): a lock-order inversion.");
    expect(draft.rootCause).toMatch(/^goroutine 18 waits in `main\.transfer` \(main\.go:27\) to lock `to\.mu` \(0xc0000ac030\), which goroutine 19 holds; goroutine 19 waits in `main\.transfer` \(main\.go:27\) to lock `to\.mu` \(0xc0000ac010\), which goroutine 18 holds \(E1\)/);
    expect(draft.confidence).toBe(0.9);
  });

  it("lock-order deadlock, holders not shown: the goroutines grouped by the mutex they wait on, and no cycle claimed", () => {
    const { verdicts, draft } = lockOrder([]);
    expect(verdicts["lock-cycle"]).toBe("inconclusive");
    expect(draft.summary).toBe("All goroutines were asleep: 2 goroutines wait to lock 2 different sync.Mutexes — 0xc0000ac030 (goroutine 18), 0xc0000ac010 (goroutine 19) (E1) — `main.transfer` (main.go:27) at `to.mu.Lock()` (E2) while holding `from.mu` (locked at line 24); which goroutine holds which mutex is not shown through this debugger.");
    expect(draft.summary).not.toMatch(/held by|holds the sync/);
    expect(draft.recommendations[0]).toMatch(/^Read the core with Delve/);
    expect(draft.confidence).toBe(0.5);
  });
});
