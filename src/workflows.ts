/**
 * The analysis graph: wiring and routing only. Each node is an agent in src/agents/.
 *
 *   START → hypothesis → tester → evaluator ─┬→ tester        (gather more, or test the next one)
 *                 ↑                           ├→ hypothesis    (pivot: all rejected or inconclusive)
 *                 └──────── (pivot) ──────────┤→ investigator  (a confirmation to go deeper into)
 *                                             └→ reasoner
 *   investigator → reasoner → critic ─┬→ responder → reasoner → critic (round 2) → report → END
 *                                     └→ report (no issues, or round 2 done)
 */
// LangGraph's "web" entry: its API without the AsyncLocalStorage the main entry installs as LangChain's
// ambient config, whose promise hooks then run on every promise of the process (~20 ms of an offline
// analysis). Nodes get their config as their argument and hand model calls theirs (signal) explicitly;
// what needs the ambient config (interrupt(), getConfig() in a node, subgraphs, the functional API)
// is not used. build.mjs fails if the main entry is imported anywhere.
import { END, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph/web";
import { critic } from "./agents/critic/index.js";
import { evaluator } from "./agents/evaluator/index.js";
import { awaitingInvestigation, canFormMore, mustWrapUp, untested } from "./agents/flow.js";
import { hypothesis } from "./agents/hypothesis/index.js";
import { investigator } from "./agents/investigator/index.js";
import { reasoner } from "./agents/reasoner/index.js";
import { reportWriter } from "./agents/report-writer/index.js";
import { responder } from "./agents/responder/index.js";
import { AnalysisContext, runtimeOf, type NodeConfig } from "./agents/runtime.js";
import { tester } from "./agents/tester/index.js";
import { AnalysisState, type State } from "./state.js";

const CRITIC_ROUNDS = 2;

function afterHypotheses(state: State): "tester" | "reasoner" {
  return state.current !== null && untested(state).length > 0 ? "tester" : "reasoner";
}

function afterEvaluation(state: State, config: NodeConfig): "tester" | "hypothesis" | "investigator" | "reasoner" {
  const runtime = runtimeOf(config);
  if (mustWrapUp(state, runtime)) return "reasoner";
  if (state.current !== null) return "tester";
  if (awaitingInvestigation(state)) return "investigator";
  const anyConfirmed = state.hypotheses.some((h) => h.status === "confirmed");
  return !anyConfirmed && canFormMore(state, runtime) ? "hypothesis" : "reasoner";
}

function afterCritique(state: State): "responder" | "report" {
  const last = state.critique.at(-1);
  return last && last.round < CRITIC_ROUNDS && last.issues.length > 0 ? "responder" : "report";
}

export function buildAnalysisGraph(checkpointer: BaseCheckpointSaver) {
  const builder = new StateGraph(AnalysisState, AnalysisContext)
    // Forms hypotheses from the issue and the triage (and a new one on a pivot).
    .addNode("hypothesis", hypothesis)
    // Runs 2–3 targeted commands for the current hypothesis.
    .addNode("tester", tester)
    // Judges it confirmed, rejected or inconclusive, and picks what to test next.
    .addNode("evaluator", evaluator)
    // Goes deeper into a confirmed hypothesis: where the bad value came from.
    .addNode("investigator", investigator)
    // Concludes over all the evidence, citing it.
    .addNode("reasoner", reasoner)
    // Reviews the conclusion; at most two rounds.
    .addNode("critic", critic)
    // Collects the evidence the critic's first round found missing.
    .addNode("responder", responder)
    // Builds the report, with follow-up questions from what the critic left open.
    .addNode("report", reportWriter)
    .addEdge(START, "hypothesis")
    .addConditionalEdges("hypothesis", afterHypotheses, ["tester", "reasoner"])
    .addEdge("tester", "evaluator")
    .addConditionalEdges("evaluator", afterEvaluation, ["tester", "hypothesis", "investigator", "reasoner"])
    .addEdge("investigator", "reasoner")
    .addEdge("reasoner", "critic")
    .addConditionalEdges("critic", afterCritique, ["responder", "report"])
    .addEdge("responder", "reasoner")
    .addEdge("report", END);
  return builder.compile({ checkpointer, name: "analysis" });
}
