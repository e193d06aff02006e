/**
 * Go programs that stop: every goroutine asleep (the runtime's own deadlock verdict) or a hung
 * service dumped alive. Triage read each waiting goroutine from `runtime.allgs`: what it waits on
 * and where in the program's own code; a Go engineer reads the same list.
 */
import type { GoroutineSummary } from "../../analyzers/index.js";
import { concludeOn } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { BACKTRACE, Citations, deeperProbes, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { basename, quoteLine, where } from "./prose.js";

/** "goroutine 1 waits on chan receive in main.(*Server).Shutdown (main.go:13)". */
function goroutineText(g: GoroutineSummary): string {
  const at = g.file && g.line !== null ? ` (${basename(g.file)}:${g.line})` : "";
  return `goroutine ${g.id ?? "?"} waits on ${g.waitsOn ?? "something"} in \`${g.function ?? "??"}\`${at}`;
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
    hypotheses: [channel, lock],
    investigate: deeperProbes([facts.callerListing]),
    conclude: concludeOn(facts, ["channel-without-partner"], "what the goroutines wait for", ({ evidence, hit }, c) => {
      const code = evidence.find(facts.culpritListing);
      return {
        summary: `${deadlock ? 'All goroutines were asleep ("' + (facts.crash.message ?? "") + '")' : "The service hung"}: ${where(facts.culprit)} waits on ${facts.triage.go?.goroutine?.waitsOn ?? "a channel"} at ${quoteLine(facts.line) ?? "its line"}${code?.ok ? c.cite(code) : ""}, and no goroutine is left to complete it.`,
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
