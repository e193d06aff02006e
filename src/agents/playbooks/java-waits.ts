/**
 * A hung JVM read on its Java side: a cycle of Java threads each waiting for a lock (a `synchronized`
 * monitor, a ReentrantLock) another holds, or every thread of the program's own waiting with no cycle.
 * The facts are the JDK's jhsdb's reading of the core (`jstack -v`: each thread's state, frames, the
 * monitors and ownable synchronizers it holds and what it waits for), kept as evidence by its command.
 */
import type { JvmFacts } from "../../analyzers/index.js";
import type { Evidence } from "../evidence.js";
import { concludeOn } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { Citations, deeperProbes, THREADS, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { at, cycleSteps, heldElsewhere, type Edge } from "./lock-cycles.js";
import { where } from "./prose.js";


export function javaWaitsPlaybook(facts: Facts): Playbook {
  const jvm = facts.triage.jvm as JvmFacts;
  const threadsRead = (evidence: Evidence) => evidence.findCommand(jvm.threadsCommand);
  const nameOf = (id: number | null) => {
    const name = jvm.threads.find((thread) => thread.id !== null && thread.id === id)?.name;
    return id === null ? "a thread" : name ? `thread ${id} "${name}"` : `thread ${id}`;
  };
  if (facts.crash.kind === "deadlock") {
    const cycle = facts.crash.deadlock?.cycle ?? [];
    const types = [...new Set(cycle.map((edge) => edge.lockName ?? "a lock"))];
    const sameMethod = new Set(cycle.map((edge) => edge.function)).size === 1;
    const order: PlannedHypothesis = {
      rule: "java-lock-order",
      statement: `the threads take the same locks in opposite orders: each holds one ${types.join(" or ")} and waits in ${[...new Set(cycle.map(at))].join(" and ")} for the one the other holds`,
      plan: [[THREADS]],
      judge(evidence) {
        const read = threadsRead(evidence);
        const c = new Citations();
        if (cycle.length < 2) return verdict("inconclusive", `jhsdb's reading${c.cite(read)} shows no cycle of two threads or more.`, read);
        const steps = cycleSteps(cycle, nameOf);
        const how = sameMethod ? ` Both wait in the same method: it locks its two arguments in the order it is given them, and the threads gave them in opposite orders.` : "";
        return verdict("confirmed", `${steps.join("; ")}${c.cite(read)}.${how}`, read, evidence.find(THREADS));
      },
    };
    const held = heldElsewhere("java-lock-held-elsewhere", cycle, threadsRead);
    return {
      hypotheses: [order, held],
      investigate: deeperProbes([]),
      conclude: concludeOn(facts, ["java-lock-order"], "how the Java threads came to wait for each other", ({ hit, evidence }, c) => ({
        summary: `A Java deadlock: ${cycle.length} threads each wait for a lock another holds, in ${[...new Set(cycle.map(at))].join(" and ")}${c.cite(threadsRead(evidence))}; none can go on, and the program hangs.`,
        cause: [hit.finding ?? ""],
        confidence: 0.9,
        recommendations: [
          sameMethod
            ? `Make ${at(cycle[0] as Edge)} take its two locks in one global order (by an id or a key of the objects locked, whichever argument comes first), or take one lock that guards both.`
            : `Take the locks of ${[...new Set(cycle.map((edge) => `\`${edge.function}\``))].join(" and ")} in one order everywhere, or hold one lock at a time.`,
          "Where the order cannot be fixed, use ReentrantLock.tryLock with a timeout and back off, so a cycle ends in a retry instead of a hang.",
        ],
      })),
      openQuestions: [{ text: "How long the threads had been waiting is not in the dump.", question: "Did the program hang right after a change in load or in the order requests arrive?" }],
    };
  }
  const waiting: PlannedHypothesis = {
    rule: "java-nothing-wakes",
    statement: `the JVM hung: ${facts.triage.blocked ?? "every thread of the program's own waits"}`,
    plan: [[THREADS]],
    judge(evidence) {
      const read = threadsRead(evidence);
      const c = new Citations();
      if (!read) return verdict("inconclusive", "The Java threads' states were not kept as evidence.");
      return verdict("confirmed", `jhsdb's reading of the threads${c.cite(read)}: ${facts.triage.blocked ?? "every thread of the program's own waits"}.`, read, evidence.find(THREADS));
    },
  };
  const busy: PlannedHypothesis = {
    rule: "java-still-running",
    statement: "a thread of the program's own was still running and would have woken the others: a slow step, not a hang",
    plan: [[THREADS]],
    judge(evidence) {
      const read = threadsRead(evidence);
      const c = new Citations();
      if (!read || !facts.triage.blocked) return verdict("inconclusive", "The Java threads' states were not read.", read);
      return verdict("rejected", `No thread of the program's own was running: each was waiting${c.cite(read)}.`, read);
    },
  };
  return {
    hypotheses: [waiting, busy],
    investigate: deeperProbes([]),
    conclude: concludeOn(facts, ["java-nothing-wakes"], "what the Java threads wait for", ({ hit, evidence }, c) => ({
      summary: `The JVM hung with no lock cycle: every thread of the program's own waits${c.cite(threadsRead(evidence))}, ${where(facts.culprit)} among them; whatever should wake them (a countDown, a put into a queue, a thread finishing) never happened.`,
      cause: [hit.finding ?? ""],
      confidence: 0.7,
      recommendations: [
        "Find the code that should signal what each thread waits for (the latch's countDown, the queue's producer, the joined thread's end) and why it did not run: an exception that ended it, a path that returns early, or an order of start-up that leaves it waiting too.",
        "Give waits a timeout (await(timeout), poll(timeout), join(millis)) and log when one expires, so a hang shows itself.",
      ],
    })),
    openQuestions: [{ text: "Which code was meant to wake these threads is not in the dump.", question: "What should have counted the latch down or fed the queue, and did it run?" }],
  };
}
