/**
 * Go programs that stop: every goroutine asleep (the runtime's own deadlock verdict) or a hung
 * service dumped alive. Triage read each waiting goroutine from `runtime.allgs`: what it waits on
 * and where in the program's own code; a Go engineer reads the same list.
 */
import { goFunctionStart, goLocksHeldBefore } from "../../analyzers/go-locks.js";
import type { GoroutineSummary } from "../../analyzers/index.js";
import type { DeadlockEdge } from "../../analyzers/deadlock.js";
import { concludeOn } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { goWhere } from "./go-frames.js";
import { BACKTRACE, Citations, deeperProbes, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { basename, plural, quoteLine, where } from "./prose.js";
import type { SourceFile } from "./source.js";
import { listed } from "../../report/numbers.js";

/** "goroutine 1 waits on chan receive in main.(*Server).Shutdown (main.go:13)", with a mutex's address where the runtime shows it. */
function goroutineText(g: GoroutineSummary): string {
  const at = g.file && g.line !== null ? ` (${basename(g.file)}:${g.line})` : "";
  return `goroutine ${g.id ?? "?"} waits on ${g.waitsOn ?? "something"} in \`${g.function ?? "??"}\`${at}${g.lock ? `, the mutex at ${g.lock}` : ""}`;
}

/**
 * The mutex the culprit's function locked before the line it waits at and has not unlocked by then:
 * a deferred Unlock runs only when the function returns, so the lock is held through the wait.
 */
function heldLock(source: SourceFile | null, line: number | null): { lock: string; at: number } | null {
  if (!source || line === null) return null;
  const lineAt = (n: number) => source.lines[n - 1] ?? null;
  const start = goFunctionStart(lineAt, line - 1);
  if (start === null) return null;
  const body = Array.from({ length: line - start }, (_, i) => ({ line: start + i, text: lineAt(start + i) ?? "" }));
  const [first] = goLocksHeldBefore(body, line);
  return first ? { lock: first.expression, at: first.line } : null;
}

/** "goroutine 18 waits in `main.transfer` (main.go:27) to lock `to.mu` (0xc0000ac030), which goroutine 19 holds". */
function edgeText(edge: DeadlockEdge): string {
  const at = edge.file && edge.line !== null ? ` (${basename(edge.file)}:${edge.line})` : "";
  const lock = edge.lockName ? `\`${edge.lockName}\` (${edge.lock})` : (edge.lock ?? "a sync.Mutex");
  return `goroutine ${edge.thread} waits in \`${edge.function ?? "??"}\`${at} to lock ${lock}, which goroutine ${edge.heldByThread ?? "?"} holds`;
}

const ON_CHANNEL = /^(chan|select)/;
const ON_LOCK = /sync\.(Mutex|RWMutex)/;

/** The Go playbook of a deadlock or a hang, from the goroutines triage read. */
export function goWaitPlaybook(facts: Facts): Playbook {
  const waiting = facts.triage.go?.waiting ?? [];
  const onChannel = waiting.filter((g) => ON_CHANNEL.test(g.waitsOn ?? ""));
  const onLock = waiting.filter((g) => ON_LOCK.test(g.waitsOn ?? ""));
  const list = waiting.map(goroutineText).join("; ");
  const deadlock = facts.crash.kind === "deadlock";
  const plan = [[BACKTRACE, ...(facts.culpritListing ? [facts.culpritListing] : [])]];
  const held = heldLock(facts.source, facts.culprit?.line ?? null);
  const blamedWaitsOnChannel = ON_CHANNEL.test(facts.triage.go?.goroutine?.waitsOn ?? "");
  const blamedWaitsOnLock = ON_LOCK.test(facts.triage.go?.goroutine?.waitsOn ?? "");
  // Goroutine ids are the cycle's threads: read from the runtime, with the holders from the waiters' frames.
  const cycle = facts.triage.go ? (facts.crash.deadlock?.cycle ?? []) : [];
  const mutexes = [...new Set(onLock.map((g) => g.lock).filter((lock): lock is string => lock !== null))];
  const unwound = facts.triage.go?.goroutineFrames === true;
  const holding: PlannedHypothesis = {
    rule: "lock-held-while-waiting",
    statement: `${where(facts.culprit)} holds a sync.Mutex while it waits on a channel, and the goroutines that would complete the wait need that mutex`,
    plan,
    judge(evidence) {
      const c = new Citations();
      const bt = evidence.find(BACKTRACE);
      const code = evidence.find(facts.culpritListing);
      if (!held) return verdict(facts.source ? "rejected" : "inconclusive", facts.source ? `${where(facts.culprit)} locks no mutex before its wait that it has not unlocked.` : "The culprit's source is not on this machine to show which locks it holds.", bt);
      if (!blamedWaitsOnChannel) return verdict("rejected", `${where(facts.culprit)} holds \`${held.lock}\` (locked at line ${held.at}), but what it waits on is ${facts.triage.go?.goroutine?.waitsOn ?? "not known"}, not a channel${c.cite(bt)}.`, bt);
      if (onLock.length === 0) return verdict("rejected", `${where(facts.culprit)} holds \`${held.lock}\` (locked at line ${held.at}), but no goroutine waits on a sync.Mutex${c.cite(bt)}.`, bt);
      const blocked = onLock.map(goroutineText).join("; ");
      return verdict(
        "confirmed",
        `${where(facts.culprit)} locked \`${held.lock}\` at line ${held.at} and has not unlocked it (a deferred Unlock waits for the return) when it waits on ${facts.triage.go?.goroutine?.waitsOn} at ${quoteLine(facts.line) ?? "its line"}${code?.ok ? c.cite(code) : ""}; meanwhile ${blocked}${c.cite(bt)}. ${onLock.length === 1 ? "That goroutine cannot" : "Those goroutines cannot"} take the lock to make progress, so nothing will ever complete the wait.`,
        bt,
        code?.ok ? code : null,
      );
    },
  };
  const channel: PlannedHypothesis = {
    rule: "channel-without-partner",
    statement: `${where(facts.culprit)} waits on a channel no other goroutine will ${/send/.test(facts.triage.go?.goroutine?.waitsOn ?? "") ? "receive from" : "send to"}`,
    plan,
    judge(evidence) {
      const c = new Citations();
      const bt = evidence.find(BACKTRACE);
      const code = evidence.find(facts.culpritListing);
      if (onChannel.length === 0) return verdict("rejected", `No goroutine of the program's own waits on a channel${c.cite(bt)}.`, bt);
      const partnerless = deadlock || onChannel.length === waiting.length;
      const text = `${waiting.length} goroutine${waiting.length === 1 ? "" : "s"} of the program's own wait${c.cite(bt)}: ${list}. ${deadlock ? "The runtime found no goroutine left that could run, so none will ever complete the channel operation." : "No goroutine of the program's own is running or runnable to complete the operation."} The wait is ${quoteLine(facts.line) ?? "at the culprit's line"}${code?.ok ? c.cite(code) : ""}.`;
      return verdict(partnerless ? "confirmed" : "inconclusive", text, bt, code?.ok ? code : null);
    },
  };
  const lock: PlannedHypothesis = {
    rule: "lock-cycle",
    statement: "goroutines wait on each other's sync.Mutex (a lock-order inversion)",
    plan,
    judge(evidence) {
      const bt = evidence.find(BACKTRACE);
      const c = new Citations();
      if (onLock.length < 2) return verdict("rejected", `${onLock.length === 0 ? "No goroutine waits" : "Only one goroutine waits"} on a sync.Mutex${c.cite(bt)}: there is no cycle of locks.`, bt);
      if (cycle.length >= 2) return verdict("confirmed", `${cycle.map(edgeText).join("; ")}${c.cite(bt)}. Each holds the lock the next one waits for, so none can go on.`, bt);
      const byLock = mutexes.length > 0 ? ` (${mutexes.map((lock) => `${lock}: goroutine${onLock.filter((g) => g.lock === lock).length > 1 ? "s" : ""} ${onLock.filter((g) => g.lock === lock).map((g) => g.id).join(", ")}`).join("; ")})` : "";
      const holding = held ? ` ${where(facts.culprit)} locked \`${held.lock}\` at line ${held.at} and waits for another while it holds it, the shape of a lock-order inversion.` : "";
      const why = unwound ? "no waiting goroutine's own function took them before its wait (a caller, or a goroutine that has exited, may hold them)" : "the debugger showed no goroutine's frame to read the held locks' addresses from (`dlv core` does)";
      return verdict("inconclusive", `${onLock.length} goroutines wait on ${mutexes.length > 1 ? `${mutexes.length} sync.Mutexes` : "a sync.Mutex"}${byLock}${c.cite(bt)}.${holding} A sync.Mutex records no holder, and ${why}, so the cycle cannot be drawn from this dump.`, bt);
    },
  };
  const decided = concludeOn(facts, ["lock-cycle", "lock-held-while-waiting", "channel-without-partner"], "what the goroutines wait for", ({ evidence, hit }, c) => {
    const code = evidence.find(facts.culpritListing);
    if (hit.rule === "lock-cycle") {
      const members = [...new Set(cycle.map((edge) => edge.thread))];
      const functions = [...new Set(cycle.map((edge) => `\`${edge.function ?? "??"}\``))];
      return {
        summary: `${deadlock ? "All goroutines were asleep" : "The service hung"}: goroutines ${listed(members)} each hold the sync.Mutex the other waits to lock, in ${functions.join(" and ")} at ${quoteLine(facts.line) ?? "the culprit's line"}${code?.ok ? c.cite(code) : ""}${held ? `, having locked \`${held.lock}\` first (line ${held.at})` : ""}: a lock-order inversion.`,
        cause: [hit.finding ?? "", "The runtime's semaphore table says which mutex each goroutine waits on; who holds each was read from their own frames: the lock their function took before the wait and has not released."],
        confidence: 0.9,
        recommendations: [
          held
            ? `Take the locks in one order whatever the call's direction: lock \`${held.lock}\` and the other by a stable key (an ID, or the smaller address first), or guard both with one lock.`
            : "Take the locks in one global order (by a stable key such as an ID), or guard the data they protect with one lock.",
          "Keep the code between the first Lock and the second short and free of waits, and add a test that runs the two directions at once: the inversion then hangs the test instead of production.",
        ],
      };
    }
    if (hit.rule === "lock-held-while-waiting" && held) {
      return {
        summary: `${deadlock ? "All goroutines were asleep" : "The service hung"}: ${goWhere(facts)} waits on ${facts.triage.go?.goroutine?.waitsOn ?? "a channel"} at ${quoteLine(facts.line) ?? "its line"}${code?.ok ? c.cite(code) : ""} while holding \`${held.lock}\`, which ${plural(onLock.length, "other goroutine")} need${onLock.length === 1 ? "s" : ""} to go on.`,
        cause: [hit.finding ?? ""],
        confidence: 0.8,
        recommendations: [
          `Do not hold \`${held.lock}\` across a channel operation: unlock before \`${(quoteLine(facts.line) ?? "the wait").replace(/\`/g, "")}\` (lock only around the shared state, not around the handoff), or hand the result over without the lock.`,
          "Bound the wait: select on the channel together with a context's Done() or time.After, so a missing partner becomes an error instead of a hang.",
          "On a live service, the pprof goroutine profile (`/debug/pprof/goroutine?debug=2`) or `kill -QUIT` with GOTRACEBACK=all shows every goroutine's wait and how long it has lasted.",
        ],
      };
    }
    return {
      summary: `${deadlock ? 'All goroutines were asleep ("' + (facts.crash.message ?? "") + '")' : "The service hung"}: ${goWhere(facts)} waits on ${facts.triage.go?.goroutine?.waitsOn ?? "a channel"} at ${quoteLine(facts.line) ?? "its line"}${code?.ok ? c.cite(code) : ""}, and no goroutine is left to complete it.`,
      cause: [hit.finding ?? ""],
      confidence: deadlock ? 0.85 : 0.75,
      recommendations: [
        "Make sure every channel receive has a sender that always sends (also on its error paths), or close the channel when no more values will come; an unbuffered send needs a receiver already waiting.",
        "Bound the wait: select on the channel together with a context's Done() or time.After, so a missing partner becomes an error instead of a hang.",
        ...(deadlock ? [] : ["For a live service, `kill -QUIT` (or GOTRACEBACK=all) prints every goroutine's stack, and the pprof goroutine profile (`/debug/pprof/goroutine?debug=2`) shows how long each has waited."]),
      ],
    };
  });
  return {
    hypotheses: blamedWaitsOnLock ? [lock, holding, channel] : held ? [holding, channel, lock] : [channel, lock, holding],
    investigate: deeperProbes([facts.callerListing]),
    conclude: (hypotheses, evidence) => {
      const locks = hypotheses.find((h) => h.rule === "lock-cycle");
      if (mutexes.length < 2 || locks?.status !== "inconclusive" || hypotheses.some((h) => h.status === "confirmed")) return decided(hypotheses, evidence);
      // Which mutex each goroutine waits on is in the dump; who holds each is not shown through this debugger.
      const c = new Citations();
      const bt = evidence.find(BACKTRACE);
      const code = evidence.find(facts.culpritListing);
      const waits = mutexes.map((lock) => `${lock} (goroutine${onLock.filter((g) => g.lock === lock).length > 1 ? "s" : ""} ${onLock.filter((g) => g.lock === lock).map((g) => g.id).join(", ")})`);
      return {
        summary: `${deadlock ? "All goroutines were asleep" : "The service hung"}: ${onLock.length} goroutines wait to lock ${mutexes.length} different sync.Mutexes — ${waits.join(", ")}${c.cite(bt)} — ${goWhere(facts)} at ${quoteLine(facts.line) ?? "its line"}${code?.ok ? c.cite(code) : ""}${held ? ` while holding \`${held.lock}\` (locked at line ${held.at})` : ""}; which goroutine holds which mutex is not shown ${unwound ? "in the dump" : "through this debugger"}.`,
        rootCause: [locks.finding ?? "", ...hypotheses.filter((h) => h !== locks && h.finding).map((h) => `${h.id} (${h.statement}) is ${h.status}: ${h.finding}`)].filter(Boolean).join(" "),
        confidence: 0.5,
        recommendations: [
          unwound
            ? "Find every path that locks these mutexes, callers included: the holder took one outside the waiting functions, or exited without unlocking it."
            : "Read the core with Delve (`--debugger dlv`, or `dlv core`): it unwinds every goroutine, so the lock each one holds is read from its frame and the cycle is drawn.",
          held
            ? `If two calls can take \`${held.lock}\` and the lock they wait for in opposite orders, take them in one order (by a stable key such as an ID), or guard both with one lock.`
            : "If two goroutines can take the same two locks in opposite orders, take them in one order (by a stable key such as an ID), or guard both with one lock.",
        ],
        evidenceIds: [...new Set([...c.ids, ...locks.evidenceIds])],
      };
    },
    openQuestions: [{ text: "Which goroutine was meant to complete the operation is a design fact, not in the dump.", question: `Which goroutine should ${deadlock ? "answer" : "unblock"} ${where(facts.culprit)}, and did it exit or never start?` }],
  };
}
