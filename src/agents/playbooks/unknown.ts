/** A dump triage could not classify: say what is known, and look at what every thread was doing. */
import { probes, type Probe } from "../../debuggers/probe.js";
import type { Facts } from "./facts.js";
import { alternativesText, Citations, notYetRun, SIGNAL_INFO, THREADS, verdict, type PlannedHypothesis, type Playbook } from "./index.js";
import { callerFacts } from "./memory.js";
import { plural, where } from "./prose.js";

/** Beyond this many threads a per-thread backtrace costs more than it tells; the thread list groups them. */
const MAX_THREADS_TO_UNWIND = 64;

export function unknownPlaybook(facts: Facts): Playbook {
  const live = facts.crash.signal === null;
  const threadsCommand: Probe = facts.triage.threads.count <= MAX_THREADS_TO_UNWIND ? { kind: "thread-backtraces", threads: "all", limit: 8 } : THREADS;
  const exitSignal: Probe = { kind: "exit-signal" };
  const snapshot: PlannedHypothesis = {
    rule: "live-snapshot",
    statement: live
      ? "the process was dumped while alive (no fatal signal): it was waiting or looping, not crashing"
      : `the process died of ${facts.crash.signal}${facts.crash.signalCode ? ` (${facts.crash.signalCode})` : ""}, which no playbook classifies`,
    plan: [[exitSignal, threadsCommand]],
    judge(evidence) {
      const exit = evidence.find(exitSignal);
      const threads = evidence.find(threadsCommand);
      const c = new Citations();
      if (live) return verdict("confirmed", `There is no terminating signal${c.cite(exit)}; the threads' stacks are a snapshot${c.cite(threads)}.`, exit, threads);
      return verdict("inconclusive", `The process was killed by ${facts.crash.signal}${c.cite(exit)}.`, exit, threads);
    },
  };
  return {
    hypotheses: [snapshot],
    investigate: (_rule, evidence) => notYetRun(evidence, [facts.inCulprit(probes.locals()), facts.inCulprit(probes.arguments())]),
    conclude(hypotheses, evidence) {
      const c = new Citations();
      const threads = evidence.find(threadsCommand);
      const groups = facts.triage.threads.groups.slice(0, 3).map((g) => `${plural(g.threads.length, "thread")} in \`${g.function}\``);
      const summary = live
        ? `The dump is a snapshot of a live process${c.cite(evidence.find(exitSignal))}: ${groups.join(", ")}${c.cite(evidence.find(THREADS), threads)}. No thread crashed and no lock cycle was found.`
        : `The process died of ${facts.crash.signal}${c.cite(evidence.find(SIGNAL_INFO))} in ${where(facts.culprit)}, a kind of crash the offline engine does not classify.`;
      return {
        summary,
        rootCause: [callerFacts(facts, evidence, c), alternativesText(hypotheses, null)].filter(Boolean).join(" ") || "Not determined from the dump alone.",
        confidence: 0.3,
        recommendations: [
          live ? "Take two dumps a few seconds apart: threads that have not moved are stuck, the others are busy." : "Reproduce with debug info (-g) and analyse the new dump.",
          "Describe the symptom with --issue (hang, high CPU, memory growth) so the analysis can focus on it.",
        ],
        evidenceIds: c.ids,
      };
    },
    openQuestions: [{ text: "The dump alone does not say what was expected of the process.", question: "What was the process supposed to be doing when it was dumped, and what did it do instead?" }],
  };
}
