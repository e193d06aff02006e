/** A dump triage could not classify: say what is known, and look at what every thread was doing. */
import { probes, type Probe } from "../../debuggers/probe.js";
import { senderPid, signalStory } from "../../report/origin.js";
import type { Facts } from "./facts.js";
import { Citations, deeperProbes, SIGNAL_INFO, THREADS, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { conclusion } from "./conclusions.js";
import { plural, where } from "./prose.js";
import { listed } from "../../report/numbers.js";

/** Beyond this many threads a per-thread backtrace costs more than it tells; the thread list groups them. */
const MAX_THREADS_TO_UNWIND = 64;

export function unknownPlaybook(facts: Facts): Playbook {
  const live = facts.crash.signal === null;
  // Triage reads si_code first: a signal a process sent, or the program raised at itself, is no crash.
  const story = signalStory(facts.crash);
  const self = facts.crash.origin?.type === "raised";
  const threadsCommand: Probe = facts.triage.threads.count <= MAX_THREADS_TO_UNWIND ? { kind: "thread-backtraces", threads: "all", limit: 8 } : THREADS;
  const exitSignal: Probe = { kind: "exit-signal" };
  const snapshot: PlannedHypothesis = {
    rule: "live-snapshot",
    statement: live
      ? "the process was dumped while alive (no fatal signal): it was waiting or looping, not crashing"
      : story
        ? `${story}: nothing faulted`
        : `the process died of ${facts.crash.signal}${facts.crash.signalCode ? ` (${facts.crash.signalCode})` : ""}, which no playbook classifies`,
    plan: [[exitSignal, threadsCommand]],
    judge(evidence) {
      const exit = evidence.find(exitSignal);
      const threads = evidence.find(threadsCommand);
      const c = new Citations();
      if (live) return verdict("confirmed", `There is no terminating signal${c.cite(exit)}; the threads' stacks are a snapshot${c.cite(threads)}.`, exit, threads);
      const record = evidence.find(SIGNAL_INFO);
      if (story) return verdict("confirmed", `The signal record says ${facts.crash.signalCode ?? "a sent signal"}${c.cite(record)}: ${story}; nothing faulted. The threads' stacks show where each one was when it arrived${c.cite(threads)}.`, record, exit, threads);
      return verdict("inconclusive", `The process was killed by ${facts.crash.signal}${c.cite(exit)}.`, exit, threads);
    },
  };
  return {
    hypotheses: [snapshot],
    investigate: deeperProbes([facts.inCulprit(probes.locals()), facts.inCulprit(probes.arguments())]),
    conclude(hypotheses, evidence) {
      const c = new Citations();
      const threads = evidence.find(threadsCommand);
      const groups = facts.triage.threads.groups.slice(0, 3).map((g) => `${plural(g.threads.length, "thread")} in \`${g.function}\``);
      if (story) {
        const sender = senderPid(facts.crash.origin);
        return {
          summary: `${story.charAt(0).toUpperCase()}${story.slice(1)}${c.cite(evidence.find(SIGNAL_INFO))}: nothing faulted. ${where(facts.culprit)} was running when it arrived; ${groups.join(", ")}${c.cite(threads)}.`,
          rootCause: self
            ? `The program raised ${facts.crash.signal} itself${facts.culprit?.function ? ` from \`${facts.culprit.function}\`` : ""}: a deliberate signal, not a memory fault. Why it chose to is in its own code at that line.`
            : `Another process sent the signal${sender ? ` (pid ${sender})` : ""}: a watchdog, a supervisor, a test harness or a person with kill. The dump shows where the threads were, not why the sender acted.`,
          confidence: 0.9,
          recommendations: self
            ? [`Read the code that raises ${facts.crash.signal} in ${where(facts.culprit)}: it decided to end the process.`, "If the intent is to stop the process, exit with a status or call abort() so the reason is recorded."]
            : [
                `Find what runs as pid ${sender ?? "the sender"} (or ran: process accounting, the supervisor's logs, journalctl) and why it signals this program.`,
                `If it is meant to stop the program, send SIGTERM (or SIGQUIT for a dump of a hang) rather than ${facts.crash.signal}, so nobody mistakes it for a crash.`,
              ],
          evidenceIds: c.ids,
        };
      }
      const unread = live ? (facts.triage.unreadLockOwners ?? []) : [];
      const unreadStacks = live ? (facts.triage.unreadStacks ?? []) : [];
      const summary = live
        ? `The dump is a snapshot of a live process${c.cite(evidence.find(exitSignal))}: ${groups.join(", ")}${c.cite(evidence.find(THREADS), threads)}. No thread crashed${
            unread.length > 0
              ? `; ${unread.length === 1 ? "thread" : "threads"} ${listed(unread)} wait${unread.length === 1 ? "s" : ""} for locks whose holders the dump does not show, so whether the process deadlocked cannot be told.`
              : unreadStacks.length > 0
                ? `; the stacks of ${unreadStacks.length === 1 ? "thread" : "threads"} ${listed(unreadStacks)} could not be read (stopped in a system module without its unwind information, the program's module not here), so what they wait for, and whether the process deadlocked, cannot be told.`
                : " and no lock cycle was found."
          }`
        : `The process died of ${facts.crash.signal}${c.cite(evidence.find(SIGNAL_INFO))} in ${where(facts.culprit)}, a kind of crash the offline engine does not classify.`;
      return conclusion({ facts, evidence, hypotheses, hit: null }, c, {
        summary,
        cause: [],
        withCaller: true,
        confidence: 0.3,
        recommendations: [
          ...(unread.length > 0 ? ["Analyse the dump where the program's sources are (where its debug information names them), or take one that holds the locks' memory (a full dump, or MiniDumpWithDataSegs on Windows): either shows who holds each lock."] : []),
          live ? "Take two dumps a few seconds apart: threads that have not moved are stuck, the others are busy." : "Reproduce with debug info (-g) and analyse the new dump.",
          "Describe the symptom with --issue (hang, high CPU, memory growth) so the analysis can focus on it.",
        ],
      });
    },
    openQuestions: [{ text: "The dump alone does not say what was expected of the process.", question: "What was the process supposed to be doing when it was dumped, and what did it do instead?" }],
  };
}
