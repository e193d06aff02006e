/**
 * A runtime that died for want of memory: a JVM's OutOfMemoryError it was told to crash on
 * (-XX:+CrashOnOutOfMemoryError) or its own allocation failing; V8's heap limit. The question is
 * whether the heap was simply too small for the work, or something kept growing: which type held the
 * heap, and the program's code that allocated last. The JVM's heap figures are the JDK's jhsdb's
 * reading of the core (`universe`, `jhisto`), which triage made; the allocating frames are the stack's.
 */
import type { JavaHeap } from "../../runtimes/jvm/index.js";
import { thousands } from "../../report/numbers.js";
import { concludeOn } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { backtraceOf, BACKTRACE, Citations, deeperProbes, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { callPath, where } from "./prose.js";

/** A heap this full had nothing left for the allocation that failed. */
const FULL = 0.9;
/** One type holding this share of what was used is what filled it. */
const DOMINANT = 0.5;

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function outOfMemoryPlaybook(facts: Facts): Playbook {
  const heap: JavaHeap | null = facts.triage.jvm?.heap ?? null;
  const reader = facts.triage.jvm?.source ?? "the runtime's own tools";
  const said = facts.crash.message ? ` (${facts.crash.message})` : "";
  const full: PlannedHypothesis = {
    rule: "heap-full",
    statement: `the heap was full when ${where(facts.culprit)} allocated${said}: every space in use, nothing left to collect`,
    plan: [[BACKTRACE]],
    judge(evidence) {
      const { found } = backtraceOf(evidence, facts);
      const c = new Citations();
      if (!heap || heap.capacity === null || heap.used === null || heap.capacity === 0) {
        return verdict("inconclusive", `How full the heap was is not known: ${facts.triage.jvm ? `${reader} printed no space of this collector's heap` : "the runtime's heap was not read"}; the stack${c.cite(found)} shows where the allocation failed.`, found);
      }
      const share = heap.used / heap.capacity;
      const spaces = heap.spaces.map((space) => `${space.name} ${Math.round((100 * space.used) / Math.max(1, space.capacity))}% of ${mib(space.capacity)}`).join(", ");
      const text = `${mib(heap.used)} of the heap's ${mib(heap.capacity)} was in use (${spaces}), as ${reader} read it from the core`;
      return share >= FULL ? verdict("confirmed", `${text}: the allocation in ${where(facts.culprit)}${c.cite(found)} found no room.`, found) : verdict("rejected", `Only ${text}: the allocation that failed was larger than what was free, or memory other than the Java heap ran out.`, found);
    },
  };
  const top = heap?.histogram[0] ?? null;
  const held: PlannedHypothesis = {
    rule: "one-type-holds-heap",
    statement: "one kind of object kept growing and held most of the heap: a collection the program keeps adding to (a cache, a queue, a list never cleared)",
    plan: [[BACKTRACE]],
    judge(evidence) {
      const { found } = backtraceOf(evidence, facts);
      if (!heap || heap.histogram.length === 0 || !top) return verdict("inconclusive", "Which types held the heap is not known: the heap's object histogram was not read.", found);
      const used = heap.used ?? heap.histogram.reduce((total, row) => total + row.bytes, 0);
      const rows = heap.histogram.slice(0, 3).map((row) => `${row.type} ${mib(row.bytes)} in ${thousands(row.instances)} objects`).join(", ");
      if (used > 0 && top.bytes / used >= DOMINANT) return verdict("confirmed", `${top.type} held ${mib(top.bytes)} of the ${mib(used)} in use, in ${thousands(top.instances)} objects (the largest types: ${rows}; ${reader}'s jhisto).`, found);
      return verdict("rejected", `No one type held most of the heap (the largest: ${rows}; ${reader}'s jhisto): the program's whole working set outgrew it.`, found);
    },
  };
  return {
    hypotheses: [full, held],
    investigate: deeperProbes([]),
    conclude: concludeOn(facts, ["one-type-holds-heap", "heap-full"], "why the runtime ran out of memory", ({ hit, hypotheses, evidence }, c) => {
      const growing = hit.rule === "one-type-holds-heap";
      const fullFinding = hypotheses.find((h) => h.rule === "heap-full" && h.status === "confirmed")?.finding ?? "";
      return {
        summary: `The ${facts.triage.jvm ? "JVM" : "runtime"} ran out of memory${said} while ${where(facts.culprit)} allocated${c.cite(evidence.find(BACKTRACE))}${growing && top ? `, with ${top.type} holding most of the heap` : ""}; it ended the process.`,
        cause: [hit.finding ?? "", growing ? fullFinding : "", `The failing allocation was made on the path ${callPath(facts)}.`],
        confidence: growing ? 0.8 : 0.7,
        recommendations: [
          growing && top
            ? `Find what keeps the ${top.type} objects reachable: the collection ${where(facts.culprit)} adds to is the first suspect. A heap dump at the error (-XX:+HeapDumpOnOutOfMemoryError, or \`jhsdb jmap --binaryheap\` on this core) opened in a heap analyser shows the path that holds them.`
            : "Measure the working set under this load: a heap dump at the error (-XX:+HeapDumpOnOutOfMemoryError) shows what filled it.",
          "Bound what grows (a cache with a size limit or eviction, a queue with back-pressure), or give the heap the room the work needs (-Xmx) once it is known to be bounded.",
        ],
      };
    }),
    openQuestions: [{ text: "Whether this much data was expected at this point of the program's run is not in the dump.", question: "How much data should the program hold at once under this load, and does anything remove what it adds?" }],
  };
}
