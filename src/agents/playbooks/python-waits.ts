/**
 * A hung CPython process read on its Python side: a cycle of Python threads each taking a lock of
 * `threading` another holds, or every thread of the program's own waiting with no cycle, one of them
 * perhaps holding the GIL while blocked in C. The facts are dumpdbg's reading of the interpreter's
 * structures in the core (each thread's frames, the lock its innermost frame was taking, the locks
 * its `with` blocks hold, who held the GIL), kept as evidence under `cpython-threads <core>`.
 */
import type { PythonFacts } from "../../analyzers/index.js";
import type { Evidence } from "../evidence.js";
import { concludeOn } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { Citations, deeperProbes, THREADS, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { at, cycleSteps, heldElsewhere, type Edge } from "./lock-cycles.js";
import { where } from "./prose.js";

export function pythonWaitsPlaybook(facts: Facts): Playbook {
  const python = facts.triage.python as PythonFacts;
  const threadsRead = (evidence: Evidence) => evidence.findCommand(python.threadsCommand);
  const nameOf = (id: number | null) => {
    const name = python.threads.find((thread) => thread.id !== null && thread.id === id)?.name;
    return id === null ? "no thread the dump shows" : name ? `thread ${id} "${name}"` : `thread ${id}`;
  };
  if (facts.crash.kind === "deadlock") {
    const cycle = facts.crash.deadlock?.cycle ?? [];
    const sameFunction = new Set(cycle.map((edge) => edge.function)).size === 1;
    const order: PlannedHypothesis = {
      rule: "python-lock-order",
      statement: `the threads take the same locks in opposite orders: each holds one and waits in ${[...new Set(cycle.map(at))].join(" and ")} for the one the other holds`,
      plan: [[THREADS]],
      judge(evidence) {
        const read = threadsRead(evidence);
        const c = new Citations();
        if (cycle.length < 2) return verdict("inconclusive", `The Python threads' reading${c.cite(read)} shows no cycle of two threads or more.`, read);
        const steps = cycleSteps(cycle, nameOf);
        const how = sameFunction ? " Both wait in the same function: it takes the locks of its arguments in the order it is given them, and the threads gave them in opposite orders." : "";
        return verdict("confirmed", `${steps.join("; ")}${c.cite(read)}.${how}`, read, evidence.find(THREADS));
      },
    };
    const held = heldElsewhere("python-lock-held-elsewhere", cycle, threadsRead);
    return {
      hypotheses: [order, held],
      investigate: deeperProbes([]),
      conclude: concludeOn(facts, ["python-lock-order"], "how the Python threads came to wait for each other", ({ hit, evidence }, c) => ({
        summary: `A Python deadlock: ${cycle.length} threads each wait for a lock another holds, in ${[...new Set(cycle.map(at))].join(" and ")}${c.cite(threadsRead(evidence))}; none can go on, and the program hangs.`,
        cause: [hit.finding ?? ""],
        confidence: 0.9,
        recommendations: [
          sameFunction
            ? `Make ${at(cycle[0] as Edge)} take its two locks in one global order (by an id or a key of the objects locked), or guard both with one lock.`
            : `Take the locks of ${[...new Set(cycle.map((edge) => `\`${edge.function}\``))].join(" and ")} in one order everywhere, or hold one lock at a time.`,
          "Where the order cannot be fixed, take the second lock with `lock.acquire(timeout=…)` and back off when it fails, so a cycle ends in a retry instead of a hang.",
        ],
      })),
      openQuestions: [{ text: "How long the threads had been waiting is not in the dump.", question: "Did the program hang right after a change in load or in the order requests arrive?" }],
    };
  }
  const gil = python.gil ? python.threads.find((thread) => thread.lwp === python.gil?.lwp) : undefined;
  const gilBlocked = gil !== undefined && (facts.triage.blocked ?? "").includes("holds the GIL and is blocked");
  const waiting: PlannedHypothesis = {
    rule: gilBlocked ? "python-gil-held-in-c" : "python-nothing-wakes",
    statement: gilBlocked
      ? `${nameOf(gil?.id ?? null)} holds the GIL while it is blocked in C, so no other Python thread can run: ${facts.triage.blocked ?? ""}`
      : `the Python program hung: ${facts.triage.blocked ?? "every thread of the program's own waits"}`,
    plan: [[THREADS]],
    judge(evidence) {
      const read = threadsRead(evidence);
      const c = new Citations();
      if (!read) return verdict("inconclusive", "The Python threads' reading was not kept as evidence.");
      return verdict("confirmed", `The interpreter's threads as read from the core${c.cite(read)}: ${facts.triage.blocked ?? "every thread of the program's own waits"}.`, read, evidence.find(THREADS));
    },
  };
  const busy: PlannedHypothesis = {
    rule: "python-still-running",
    statement: "a thread of the program's own was still running Python code and would have woken the others: a slow step, not a hang",
    plan: [[THREADS]],
    judge(evidence) {
      const read = threadsRead(evidence);
      const c = new Citations();
      if (!read || !facts.triage.blocked) return verdict("inconclusive", "The Python threads' waits were not read.", read);
      return verdict("rejected", `No thread of the program's own was running: each was waiting${c.cite(read)}.`, read);
    },
  };
  return {
    hypotheses: [waiting, busy],
    investigate: deeperProbes([]),
    conclude: concludeOn(facts, [waiting.rule], "what the Python threads wait for", ({ hit, evidence }, c) => ({
      summary: gilBlocked
        ? `The Python program hung: ${nameOf(gil?.id ?? null)} holds the GIL and is blocked in C${c.cite(threadsRead(evidence))}, ${where(facts.culprit)}; every other Python thread waits for the GIL.`
        : `The Python program hung with no lock cycle: every thread of the program's own waits${c.cite(threadsRead(evidence))}, ${where(facts.culprit)} among them; whatever should wake them (a notify, a put into a queue, a thread finishing) never happened.`,
      cause: [hit.finding ?? ""],
      confidence: gilBlocked ? 0.85 : 0.7,
      recommendations: gilBlocked
        ? [
            "Release the GIL around the blocking call: in a C extension, wrap it in Py_BEGIN_ALLOW_THREADS / Py_END_ALLOW_THREADS; through ctypes, call it with ctypes.CDLL (which releases the GIL) rather than ctypes.PyDLL or ctypes.pythonapi.",
            "Give the blocking call a timeout, so a thread that must hold the GIL cannot hold it forever.",
          ]
        : [
            "Find the code that should signal what each thread waits for (the Condition's notify, the queue's producer, the joined thread's end) and why it did not run: an exception that ended that thread, a path that returns early, or a start-up order that leaves it waiting too.",
            "Give waits a timeout (Condition.wait(timeout), Queue.get(timeout=…), Thread.join(timeout)) and log when one expires, so a hang shows itself.",
          ],
    })),
    openQuestions: [
      gilBlocked
        ? { text: "Why the C call blocked (what it waited for) is not in the Python side of the dump.", question: "What does the blocking call wait for, and should it have returned?" }
        : { text: "Which code was meant to wake these threads is not in the dump.", question: "What should have notified the Condition or fed the queue, and did it run?" },
    ],
  };
}
