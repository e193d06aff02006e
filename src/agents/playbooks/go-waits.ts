/**
 * Go programs that stop: every goroutine asleep (the runtime's own deadlock verdict) or a hung
 * service dumped alive. Triage read each waiting goroutine from `runtime.allgs`: what it waits on
 * and where in the program's own code; a Go engineer reads the same list.
 */
import type { GoroutineSummary } from "../../analyzers/index.js";
import { concludeOn } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { goWhere } from "./go-frames.js";
import { BACKTRACE, Citations, deeperProbes, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { basename, plural, quoteLine, where } from "./prose.js";
import { codeOf, type SourceFile } from "./source.js";

/** "goroutine 1 waits on chan receive in main.(*Server).Shutdown (main.go:13)". */
function goroutineText(g: GoroutineSummary): string {
  const at = g.file && g.line !== null ? ` (${basename(g.file)}:${g.line})` : "";
  return `goroutine ${g.id ?? "?"} waits on ${g.waitsOn ?? "something"} in \`${g.function ?? "??"}\`${at}`;
}

/**
 * The mutex the culprit's function locked before the line it waits at and has not unlocked by then:
 * a deferred Unlock runs only when the function returns, so the lock is held through the wait.
 */
function heldLock(source: SourceFile | null, line: number | null): { lock: string; at: number } | null {
  if (!source || line === null) return null;
  // gofmt puts every top-level func at the start of its line; a brace-matching reader trips on `struct{}` in parameters.
  let header = line - 1;
  while (header >= 1 && !/^func\b/.test(source.lines[header - 1] ?? "")) header--;
  if (header < 1) return null;
  const held = new Map<string, number>();
  for (let n = header; n < line; n++) {
    const code = codeOf(source.lines[n - 1] ?? "");
    for (const match of code.matchAll(/(?<!defer\s+)\b([A-Za-z_][\w.]*)\.(Lock|RLock|Unlock|RUnlock)\(\)/g)) {
      const [, lock = "", verb = ""] = match;
      if (/^R?Lock$/.test(verb)) held.set(lock, n);
      else held.delete(lock);
    }
  }
  const [first] = held;
  return first ? { lock: first[0], at: first[1] } : null;
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
  const holding: PlannedHypothesis = {
    rule: "lock-held-while-waiting",
    statement: `${where(facts.culprit)} holds a sync.Mutex while it waits on a channel, and the goroutines that would complete the wait need that mutex`,
    plan,
    judge(evidence) {
      const c = new Citations();
      const bt = evidence.find(BACKTRACE);
      const code = evidence.find(facts.culpritListing);
      if (!held) return verdict(facts.source ? "rejected" : "inconclusive", facts.source ? `${where(facts.culprit)} locks no mutex before its wait that it has not unlocked.` : "The culprit's source is not on this machine to show which locks it holds.", bt);
      if (!blamedWaitsOnChannel || onLock.length === 0) return verdict("rejected", `${where(facts.culprit)} holds \`${held.lock}\` (locked at line ${held.at}), but no goroutine waits on a sync.Mutex${c.cite(bt)}.`, bt);
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
      return verdict("inconclusive", `${onLock.length} goroutines wait on a sync.Mutex${c.cite(bt)}; Go does not record a mutex's holder, so the cycle cannot be drawn from the dump.`, bt);
    },
  };
  return {
    hypotheses: held ? [holding, channel, lock] : [channel, lock, holding],
    investigate: deeperProbes([facts.callerListing]),
    conclude: concludeOn(facts, ["lock-held-while-waiting", "channel-without-partner"], "what the goroutines wait for", ({ evidence, hit }, c) => {
      const code = evidence.find(facts.culpritListing);
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
    }),
    openQuestions: [{ text: "Which goroutine was meant to complete the operation is a design fact, not in the dump.", question: `Which goroutine should ${deadlock ? "answer" : "unblock"} ${where(facts.culprit)}, and did it exit or never start?` }],
  };
}
