/** A hang with no lock cycle: every thread blocked in a wait that records no owner (semaphores, condition variables, joins). */
import { probes, type Probe } from "../../debuggers/probe.js";
import { senderText } from "../../report/origin.js";
import type { Facts } from "./facts.js";
import { Citations, deeperProbes, THREADS, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";

/** Beyond this many threads a per-thread backtrace costs more than it tells; the thread list groups them. */
const MAX_THREADS_TO_UNWIND = 64;

export function hangPlaybook(facts: Facts): Playbook {
  // Triage's reading of every thread's wait: "all 4 threads are blocked waiting: 3 on a semaphore (in worker), …".
  const blocked = facts.triage.blocked ?? "every thread is blocked waiting";
  const threadsCommand: Probe = facts.triage.threads.count <= MAX_THREADS_TO_UNWIND ? { kind: "thread-backtraces", threads: "all", limit: 8 } : THREADS;
  const exitSignal: Probe = { kind: "exit-signal" };
  const origin = facts.crash.origin;
  const sent = origin?.type === "sent" ? ` It was then sent ${facts.crash.signal ?? "a signal"} ${senderText(origin)}, which is how the dump was taken.` : "";
  const waiting: PlannedHypothesis = {
    rule: "live-snapshot",
    statement: `the process hung: ${blocked}`,
    plan: [[exitSignal, threadsCommand]],
    judge(evidence) {
      const threads = evidence.find(threadsCommand);
      const c = new Citations();
      return verdict("confirmed", `Every thread's stack ends in a wait call${c.cite(threads)}, and no lock cycle was found: ${blocked}.`, threads, evidence.find(exitSignal));
    },
  };
  return {
    hypotheses: [waiting],
    investigate: deeperProbes([facts.inCulprit(probes.locals()), facts.inCulprit(probes.arguments())]),
    conclude(_hypotheses, evidence) {
      const c = new Citations();
      return {
        summary: `The process hung: ${blocked}${c.cite(evidence.find(threadsCommand))}. No lock cycle was found, and these waits record no owner, so the dump cannot say which thread should have woken them.${sent}`,
        rootCause: "A wait that nothing ends: the post, signal, unlock or write that should wake these threads never came — it was skipped on some path, or its own thread exited or is one of the waiters.",
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
