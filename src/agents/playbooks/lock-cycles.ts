/**
 * What the playbooks of runtimes whose waits triage read (a JVM's Java threads, a CPython process's
 * Python threads) say alike of a lock cycle: where each thread waits, each step of the cycle as a
 * sentence, and the hypothesis that a thread outside the cycle holds one of its locks.
 */
import type { Evidence, Found } from "../evidence.js";
import type { Facts } from "./facts.js";
import { Citations, THREADS, verdict, type PlannedHypothesis } from "./kit.js";

export type Edge = NonNullable<Facts["crash"]["deadlock"]>["cycle"][number];

/** `Bank.transfer` (Bank.java:23) */
export function at(edge: Pick<Edge, "function" | "file" | "line">): string {
  const place = edge.line === null ? "" : ` (${edge.file ?? "line"}${edge.file ? ":" : " "}${edge.line})`;
  return `\`${edge.function ?? "?"}\`${place}`;
}

/** Each wait of the cycle: `thread 16 "teller-1" waits in `Bank.transfer` (Bank.java:23) for a Bank$Account (0x…), held by thread 17 "teller-2"`. */
export function cycleSteps(cycle: Edge[], nameOf: (thread: number | null) => string): string[] {
  return cycle.map((edge) => `${nameOf(edge.thread)} waits in ${at(edge)} for ${edge.lockName ?? "a lock"} (${edge.lock}), held by ${nameOf(edge.heldByThread)}`);
}

/** A third thread holds one of the cycle's locks: rejected where every lock's holder is a thread of the cycle, read in the runtime's reading of the threads. */
export function heldElsewhere(rule: string, cycle: Edge[], threadsRead: (evidence: Evidence) => Found | null): PlannedHypothesis {
  return {
    rule,
    statement: "a third thread holds one of the locks and never releases it (the cycle's threads only look stuck on each other)",
    plan: [[THREADS]],
    judge(evidence) {
      const read = threadsRead(evidence);
      const c = new Citations();
      const members = new Set(cycle.map((edge) => edge.thread));
      const outside = cycle.filter((edge) => edge.heldByThread === null || !members.has(edge.heldByThread));
      if (outside.length === 0) return verdict("rejected", `Every lock of the cycle is held by a thread of the cycle${c.cite(read)}: no other thread is involved.`, read);
      return verdict("inconclusive", `The holder of ${outside.map((edge) => `${edge.lockName ?? "a lock"} (${edge.lock})`).join(", ")} is not a thread of the cycle${c.cite(read)}.`, read);
    },
  };
}
