/**
 * The stack ran out. Triage has measured the recursion (its cycle and estimated depth) without
 * unwinding it; here the frame size is checked and the recursion's input is read from an inner frame.
 */
import { toBigInt } from "../../debuggers/model.js";
import { probes, type Probe } from "../../debuggers/probe.js";
import type { Evidence, Found } from "../evidence.js";
import type { Facts } from "./facts.js";
import { BACKTRACE, Citations, confirmed, notYetRun, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { conclusion, undetermined } from "./conclusions.js";
import { listedCode } from "./origins.js";
import { basename, plural, where } from "./prose.js";
import { functionSpan, grep } from "./source.js";
import { pointerOf, printed } from "./values.js";

/** The stack pointer of the crashing frame. */
const STACK_POINTER = probes.register("sp");

/** Bytes one step of the stack takes, from two adjacent frames' CFAs. */
function frameBytes(evidence: Evidence, inner: number): { bytes: bigint | null; found: (Found | null)[] } {
  const a = evidence.find(probes.frameInfo(inner));
  const b = evidence.find(probes.frameInfo(inner + 1));
  const x = toBigInt(a?.reading ?? null);
  const y = toBigInt(b?.reading ?? null);
  return { bytes: x !== null && y !== null ? y - x : null, found: [a, b] };
}

/** Fewer frames than this use a few KiB each at most: if the stack ran out, one of them is huge. */
const SHALLOW_STACK = 100;

/** A frame this large is no ordinary function's locals: an array or alloca sized by data. */
const HUGE_FRAME = 1n << 16n;

/**
 * The largest of the innermost frames: frame 0 from its CFA down to the stack pointer (an alloca
 * lowers it), frames 1..3 each between its own CFA and its callee's.
 */
function largestFrame(evidence: Evidence): { level: number; bytes: bigint; found: (Found | null)[] } | null {
  let best: { level: number; bytes: bigint; found: (Found | null)[] } | null = null;
  const frame0 = evidence.find(probes.frameInfo(0));
  const sp = evidence.find(STACK_POINTER);
  const cfa0 = toBigInt(frame0?.reading ?? null);
  const spValue = toBigInt(sp?.reading ?? null);
  if (cfa0 !== null && spValue !== null && cfa0 > spValue) best = { level: 0, bytes: cfa0 - spValue, found: [frame0, sp] };
  for (let callee = 0; callee <= 2; callee++) {
    const size = frameBytes(evidence, callee);
    if (size.bytes !== null && (best === null || size.bytes > best.bytes)) best = { level: callee + 1, bytes: size.bytes, found: size.found };
  }
  return best;
}

function mebibytes(bytes: bigint): string {
  return bytes >= 1n << 20n ? `${(Number(bytes) / 2 ** 20).toFixed(1)} MiB` : `${(Number(bytes) / 1024).toFixed(0)} KiB`;
}

function hugeFrameConclusion(
  facts: Facts,
  hypotheses: Parameters<Playbook["conclude"]>[0],
  evidence: Evidence,
  hit: Parameters<Playbook["conclude"]>[0][number],
  largest: { level: number; bytes: bigint },
) {
  const c = new Citations();
  const frame = facts.triage.frames.find((f) => f.level === largest.level) ?? facts.culprit;
  // The allocation that made the frame huge: an alloca or a variable-length array in the function.
  const span = frame?.level === facts.culprit?.level && facts.fn ? functionSpan(facts.source, facts.fn, facts.culprit?.line ?? undefined) : null;
  const allocation = span ? grep(facts.source, /\balloca\s*\(|\b\w+\s+\**\w+\s*\[\s*[A-Za-z_][^\]]*\]\s*[;=]/, span.header, span.end)[0] ?? null : null;
  const line = allocation !== null ? (facts.source?.lines[allocation - 1] ?? null) : null;
  const sized = line ? /\balloca\s*\(([^;]*)\)\s*;|\[\s*([A-Za-z_][^\]]*)\]/.exec(line) : null;
  const by = sized ? (sized[1] ?? sized[2] ?? "").trim() : null;
  const args = evidence.find(facts.inCulprit(probes.arguments()));
  const summary = `Stack overflow: ${where(frame)} set up a ${mebibytes(largest.bytes)} stack frame${by ? ` (\`${sized?.[1] !== undefined ? `alloca(${by})` : `[${by}]`}\`)` : ""}${c.cite(evidence.find(probes.frameInfo(largest.level)))}, more than the thread's stack, and faulted writing into it at ${facts.crash.faultAddress}${c.cite(evidence.find(facts.fault.record))}.`;
  return conclusion({ facts, evidence, hypotheses, hit }, c, {
    summary,
    cause: [
      hit.finding ?? "",
      line ? `The frame is sized at ${basename(facts.culprit?.file ?? "")}:${allocation}: \`${line.replace(/\/\/.*$/, "").trim()}\`.` : "",
      args?.reading?.length ? `Its arguments: ${args.reading.map((v) => `${v.name} = ${v.value}`).join(", ")}${c.cite(args)}.` : "",
    ],
    confidence: 0.85,
    recommendations: [
      `Allocate the buffer in \`${frame?.function ? frame.function.split("::").at(-1) : "this function"}\` on the heap (malloc/new, or a std::vector), not on the stack${by ? `, or bound \`${by}\` first` : ""}.`,
      "Build with -Wstack-usage=65536 (or -Walloca-larger-than) to be told about frames like this at compile time.",
    ],
  });
}

export function stackOverflowPlaybook(facts: Facts): Playbook {
  const recursion = facts.triage.recursion;
  const cycle = recursion?.cycle ?? [];
  const depth = recursion?.depth ?? facts.triage.stackDepth;
  // Frame 1 is a whole frame of the recursion (frame 0 faulted while setting up).
  const inner = 1;
  const recursing: PlannedHypothesis = {
    rule: "runaway-recursion",
    statement: cycle.length
      ? `${cycle.map((f) => `\`${f}\``).join(" → ")} recursed without bound until the stack ran out (about ${plural(depth, "frame")})`
      : `unbounded recursion ran the stack out`,
    plan: [[BACKTRACE, probes.frameInfo(inner), probes.frameInfo(inner + 1)]],
    judge(evidence) {
      const bt = evidence.find(BACKTRACE);
      const size = frameBytes(evidence, inner);
      const info = evidence.find(facts.fault.record);
      const c = new Citations();
      if (recursion && size.bytes !== null && size.bytes > 0n) {
        return verdict(
          "confirmed",
          `The backtrace repeats ${cycle.join(" → ")}${c.cite(bt)}; one turn takes ${size.bytes} bytes of stack${c.cite(...size.found)}, so the ${recursion.estimated ? "estimated " : ""}${plural(depth, "frame")} fill the stack, and the fault at ${facts.crash.faultAddress} is just below it${c.cite(info)}.`,
          bt,
          ...size.found,
          info,
        );
      }
      if (recursion) return verdict("confirmed", `The backtrace repeats ${cycle.join(" → ")}${c.cite(bt)}, ${plural(depth, "frame")} deep.`, bt);
      // A few frames cannot have used a whole stack by their number alone.
      if (facts.triage.stackDepth < SHALLOW_STACK) return verdict("rejected", `The stack is only ${plural(facts.triage.stackDepth, "frame")} deep${c.cite(bt)}, with no repeating cycle: no recursion.`, bt);
      return verdict("inconclusive", `The backtrace does not repeat a cycle${c.cite(bt)}.`, bt);
    },
  };
  const bigFrame: PlannedHypothesis = {
    rule: "huge-frame",
    statement: "one frame with a huge local array or alloca exhausted the stack",
    plan: [[probes.frameInfo(0), STACK_POINTER, probes.frameInfo(inner)], [probes.frameInfo(inner + 1), probes.frameInfo(inner + 2)]],
    judge(evidence) {
      const largest = largestFrame(evidence);
      const c = new Citations();
      if (largest === null) return verdict("inconclusive", "The frame sizes could not be read.", ...frameBytes(evidence, inner).found);
      if (largest.bytes < HUGE_FRAME) return verdict("rejected", `The largest of the innermost frames takes ${largest.bytes} bytes${c.cite(...largest.found)}: the depth, not the size of a frame, used up the stack.`, ...largest.found);
      return verdict("confirmed", `Frame ${largest.level} takes ${largest.bytes} bytes (${mebibytes(largest.bytes)})${c.cite(...largest.found)}, more than a thread's stack holds.`, ...largest.found);
    },
  };
  const at = <P extends Probe>(probe: P) => facts.at(inner, probe);
  const pointerArgs = [...facts.args.entries()].filter(([, v]) => (pointerOf(v) ?? 0n) > 0n || /<error reading variable/.test(v)).map(([name]) => name).slice(0, 2);
  const span = facts.fn ? functionSpan(facts.source, facts.fn, facts.culprit?.line ?? undefined) : null;
  const recursiveCall = span && facts.fn ? grep(facts.source, new RegExp(`\\b${facts.fn}\\s*\\(`), span.start + 1, span.end)[0] ?? null : null;
  const limits = span ? grep(facts.source, /\b(depth|level|nesting|limit|max_?depth|MAX_DEPTH)\b/i, span.header, span.end) : [];
  return {
    hypotheses: [recursing, bigFrame],
    investigate: (rule, evidence) =>
      rule === "huge-frame"
        ? notYetRun(evidence, [facts.inCulprit(probes.arguments())])
        : rule === "runaway-recursion"
        ? notYetRun(evidence, [at(probes.arguments()), at(probes.locals()), ...pointerArgs.map((name) => at(probes.evaluate(`*${name}`))), recursiveCall === null ? null : facts.list(recursiveCall)])
        : [],
    conclude(hypotheses, evidence) {
      const huge = confirmed(hypotheses, "huge-frame");
      const largest = largestFrame(evidence);
      if (huge && largest) return hugeFrameConclusion(facts, hypotheses, evidence, huge, largest);
      const hit = confirmed(hypotheses, "runaway-recursion");
      if (!hit) return undetermined(facts, hypotheses, evidence, "what exhausted the stack");
      const c = new Citations();
      const listing = recursiveCall === null ? null : facts.list(recursiveCall);
      const call = listing ? evidence.find(listing) : null;
      const state = pointerArgs.map((name) => ({ name, found: evidence.find(at(probes.evaluate(`*${name}`))) })).filter((s) => printed(s.found) !== null);
      const locals = evidence.find(at(probes.locals()));
      const summary = `Stack overflow: ${cycle.length > 1 ? `${cycle.map((f) => `\`${f}\``).join(" → ")}, from ${where(facts.culprit)},` : where(facts.culprit)} recursed about ${plural(depth, "time")}${c.cite(evidence.find(BACKTRACE))} until the stack was exhausted; ${
        facts.crash.faultAddress === null
          ? `${facts.crash.message ?? "the next call ran into the stack's guard page"}${c.cite(evidence.find(BACKTRACE))}`
          : `the next call's frame faulted at ${facts.crash.faultAddress}${c.cite(evidence.find(facts.fault.record))}`
      }.`;
      return conclusion({ facts, evidence, hypotheses, hit }, c, {
        summary,
        cause: [
          call?.ok ? `It recurses at ${basename(facts.culprit?.file ?? "")}:${recursiveCall}: \`${listedCode(call)}\`${c.cite(call)}, once per level of nesting in its input.` : "",
          state.length ? `At the fault its input state was ${state.map((s) => `\`*${s.name}\` = ${printed(s.found)}${c.cite(s.found)}`).join("; ")}.` : "",
          locals?.reading?.length ? `An inner frame's locals: ${locals.reading.slice(0, 4).map((v) => `${v.name} = ${v.value}`).join(", ")}${c.cite(locals)}.` : "",
          span ? (limits.length === 0 ? `Nothing in \`${facts.fn}\` limits the depth: its body has no depth or limit variable, so the input alone decides how deep it goes.` : `\`${facts.fn}\` mentions a depth/limit at line ${limits[0]}, yet the recursion went ${plural(depth, "frame")} deep: check that limit.`) : "",
        ],
        confidence: 0.9,
        recommendations: [
          `Bound the recursion in \`${facts.fn ?? cycle[0]}\`: pass a depth and reject input nested deeper than a fixed limit (a few hundred levels is plenty for real data).`,
          "Or replace the recursion with an explicit stack on the heap, so nesting costs memory, not the thread's stack.",
        ],
      });
    },
    openQuestions: [
      { text: "The dump cannot show whether such deeply nested input is legitimate or hostile.", question: "Where did the deeply nested input come from, and is it from an untrusted client?" },
      { text: "The thread's stack size limit is not recorded in the core.", question: "What stack size does this thread run with (ulimit -s, or the thread attributes)?" },
    ],
  };
}
