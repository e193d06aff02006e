/** The analysis graph's wiring, and the questions its routers ask of the state. */
import { MemorySaver } from "@langchain/langgraph/web";
import { describe, expect, it } from "vitest";
import { canGatherMore, mustWrapUp, nextToTest } from "../../src/agents/flow.js";
import type { Runtime } from "../../src/agents/runtime.js";
import { DEFAULT_LIMITS, ensureLimits } from "../../src/agents/runtime.js";
import { probes } from "../../src/debuggers/probe.js";
import type { Hypothesis, State } from "../../src/state.js";
import { buildAnalysisGraph } from "../../src/workflows.js";

describe("the analysis graph", () => {
  it("wires the agents as the design says, every conditional edge with its explicit targets", async () => {
    const graph = await buildAnalysisGraph(new MemorySaver()).getGraphAsync();
    const edges = graph.edges.map((e) => `${e.source} → ${e.target}${e.conditional ? " (routed)" : ""}`).sort();
    expect(edges).toEqual(
      [
        "__start__ → hypothesis",
        "hypothesis → tester (routed)",
        "hypothesis → reasoner (routed)",
        "tester → evaluator",
        "evaluator → tester (routed)",
        "evaluator → hypothesis (routed)",
        "evaluator → investigator (routed)",
        "evaluator → reasoner (routed)",
        "investigator → reasoner",
        "reasoner → critic",
        "critic → responder (routed)",
        "critic → report (routed)",
        "responder → reasoner",
        "report → __end__",
      ].sort(),
    );
  });
});

const hypothesis = (id: string, fields: Partial<Hypothesis> = {}): Hypothesis => ({
  id,
  statement: `statement of ${id}`,
  origin: "playbook",
  rule: id,
  plan: [[probes.evaluate("x")], [probes.disassemble()]],
  rounds: 1,
  status: "untested",
  finding: null,
  evidenceIds: [],
  ...fields,
});

const runtime = (model = false): Runtime =>
  ({ limits: DEFAULT_LIMITS, models: { cloud: model ? {} : null, local: null } }) as unknown as Runtime;

const state = (fields: Partial<State>): State => ({ hypotheses: [], trail: [], iterations: 0, ...fields }) as State;

describe("routing", () => {
  it("gathers more for an inconclusive hypothesis while its plan has rounds left, then moves on", () => {
    const h1 = hypothesis("H1", { status: "inconclusive", rounds: 1 });
    const h2 = hypothesis("H2");
    expect(canGatherMore(h1, runtime())).toBe(true);
    expect(nextToTest(state({ hypotheses: [h1, h2] }), h1, runtime())).toBe("H1");
    const spent = { ...h1, rounds: 2 };
    expect(canGatherMore(spent, runtime())).toBe(false);
    expect(nextToTest(state({ hypotheses: [spent, h2] }), spent, runtime())).toBe("H2");
  });

  it("lets a model gather more even without planned rounds, but only so often", () => {
    const h1 = hypothesis("H1", { status: "inconclusive", plan: [[probes.evaluate("x")]], rounds: 1 });
    expect(canGatherMore(h1, runtime(false))).toBe(false);
    expect(canGatherMore(h1, runtime(true))).toBe(true);
    expect(canGatherMore({ ...h1, rounds: 2 }, runtime(true))).toBe(false);
  });

  it("never gathers more for a rejected or confirmed hypothesis", () => {
    for (const status of ["rejected", "confirmed"] as const) expect(canGatherMore(hypothesis("H1", { status, rounds: 0 }), runtime(true))).toBe(false);
  });

  it("wraps up before the step budget runs out, and at the iteration limit", () => {
    expect(mustWrapUp(state({ trail: Array(10).fill("tester") }), runtime())).toBe(false);
    expect(mustWrapUp(state({ trail: Array(DEFAULT_LIMITS.recursionLimit - 6).fill("tester") }), runtime())).toBe(true);
    expect(mustWrapUp(state({ iterations: DEFAULT_LIMITS.maxIterations }), runtime())).toBe(true);
  });

  it("checks the limits it is given", () => {
    expect(ensureLimits({ maxHypotheses: 2 })).toEqual({ ...DEFAULT_LIMITS, maxHypotheses: 2 });
    expect(() => ensureLimits({ recursionLimit: 0 })).toThrow(/recursionLimit must be a whole number of at least 1/);
  });
});
