/** A hang with no lock cycle: every thread blocked in a wait that records no owner (semaphores, condition variables, joins). */
import { probes, type Probe } from "../../debuggers/probe.js";
import { senderText } from "../../report/origin.js";
import type { Facts } from "./facts.js";
import { waitCall } from "../../analyzers/hang.js";
import type { ThreadBacktrace } from "../../debuggers/model.js";
import type { Evidence } from "../evidence.js";
import { undetermined } from "./conclusions.js";
import { Citations, confirmed, deeperProbes, THREADS, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { where } from "./prose.js";
import { listed } from "../../report/numbers.js";

/** Beyond this many threads a per-thread backtrace costs more than it tells; the thread list groups them. */
const MAX_THREADS_TO_UNWIND = 64;

/** What should have woken each kind of wait, as an engineer names the missing call. */
const WAKE_UP: Record<string, string> = {
  "a condition variable": "the `pthread_cond_signal`/`pthread_cond_broadcast` that should follow a change to the state the waiters check (a flag set, a queue filled) never came",
  "a semaphore": "the `sem_post` the waiters need never came",
  "another thread to finish": "a joined thread never finished, because it waits itself",
  "a barrier": "a thread the barrier counts on never arrived",
  "a read-write lock": "a holder of the read-write lock never released it",
  "a mutex": "a holder of the mutex never unlocked it",
};

function wakeUps(waits: string[]): string {
  const said = [...new Set(waits)].map((wait) => WAKE_UP[wait]).filter((text): text is string => text !== undefined);
  return said.length > 0 ? said.join("; ") : "the post, signal, unlock or write that should wake these threads never came";
}

export function hangPlaybook(facts: Facts): Playbook {
  // Triage's reading of every thread's wait: "all 4 threads are blocked waiting: 3 on a semaphore (in worker), …".
  const blocked = facts.triage.blocked ?? "every thread is blocked waiting";
  const threadsCommand: Probe = facts.triage.threads.count <= MAX_THREADS_TO_UNWIND ? { kind: "thread-backtraces", threads: "all", limit: 8 } : THREADS;
  const exitSignal: Probe = { kind: "exit-signal" };
  const origin = facts.crash.origin;
  const sent = origin?.type === "sent" ? ` It was then sent ${facts.crash.signal ?? "a signal"} ${senderText(origin)}, which is how the dump was taken.` : "";
  /** Each thread's wait, from the threads' stacks: null for a thread that is not blocked in a wait call. */
  const waits = (found: ReturnType<Evidence["find"]>) => {
    const traces = (found?.ok && found.probe.kind === "thread-backtraces" ? (found.reading as ThreadBacktrace[] | null) : null) ?? [];
    return traces.map((trace) => ({ thread: trace.thread, waitsFor: waitCall(trace.frames) }));
  };
  const waiting: PlannedHypothesis = {
    rule: "nothing-wakes",
    statement: `the process hung: ${blocked}`,
    plan: [[exitSignal, threadsCommand]],
    judge(evidence) {
      const threads = evidence.find(threadsCommand);
      const c = new Citations();
      const read = waits(threads);
      const running = read.filter((w) => w.waitsFor === null);
      if (threadsCommand.kind === "thread-backtraces" && read.length > 0 && running.length > 0) {
        return verdict("rejected", `Thread${running.length > 1 ? "s" : ""} ${running.map((w) => w.thread).join(", ")} ${running.length > 1 ? "are" : "is"} not in a wait call${c.cite(threads)}: not every thread is blocked.`, threads);
      }
      const unread = facts.triage.unreadLockOwners ?? [];
      const cycle = unread.length > 0 ? `, and the dump does not show who holds the locks thread${unread.length > 1 ? "s" : ""} ${listed(unread)} wait${unread.length > 1 ? "" : "s"} for (a lock cycle is not ruled out)` : ", and no lock cycle was found";
      return verdict("confirmed", `Every thread's stack ends in a wait call${c.cite(threads)}${cycle}: ${blocked}.`, threads, evidence.find(exitSignal));
    },
  };
  const busy: PlannedHypothesis = {
    rule: "one-still-running",
    statement: "one thread was still working (a busy loop or slow work) and the others wait for it",
    plan: [[threadsCommand]],
    judge(evidence) {
      const threads = evidence.find(threadsCommand);
      const c = new Citations();
      const read = waits(threads);
      const running = read.filter((w) => w.waitsFor === null);
      if (read.length === 0) return verdict("inconclusive", `The threads' stacks could not be read one by one${c.cite(threads)}.`, threads);
      if (running.length > 0) return verdict("confirmed", `Thread${running.length > 1 ? "s" : ""} ${running.map((w) => w.thread).join(", ")} ${running.length > 1 ? "were" : "was"} not waiting${c.cite(threads)}.`, threads);
      return verdict("rejected", `No thread was running: each of the ${read.length} stacks ends in a wait call${c.cite(threads)}.`, threads);
    },
  };
  return {
    hypotheses: [waiting, busy],
    investigate: deeperProbes([facts.inCulprit(probes.locals()), facts.inCulprit(probes.arguments())]),
    conclude(hypotheses, evidence) {
      const c = new Citations();
      if (!confirmed(hypotheses, "nothing-wakes")) return undetermined(facts, hypotheses, evidence, "what the threads wait for");
      const home = facts.culprit ? ` The thread the dump was taken on waits in ${where(facts.culprit)}.` : "";
      return {
        summary: `The process hung: ${blocked}${c.cite(evidence.find(threadsCommand))}.${home} No lock cycle was found, and these waits record no owner, so the dump cannot say which thread should have woken them.${sent}`,
        rootCause: `A wait that nothing ends: ${wakeUps(waits(evidence.find(threadsCommand)).flatMap((w) => (w.waitsFor ? [w.waitsFor] : [])))} — skipped on some path, or its own thread exited or is one of the waiters.`,
        confidence: 0.8,
        recommendations: [
          "Find every place that should wake these waits (sem_post, pthread_cond_signal/broadcast, the writer of the pipe or socket) and check each path reaches it, errors and early returns included.",
          "Take two dumps a few seconds apart to confirm nothing moves, and log around the waits to see which wake-up never happens.",
        ],
        evidenceIds: c.ids,
      };
    },
    openQuestions: [{ text: "The dump alone does not say what should have woken the threads.", question: "Which thread or event was supposed to wake these waits, and on what path could it have been skipped?" }],
  };
}
