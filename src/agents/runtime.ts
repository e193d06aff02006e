/**
 * What every node needs besides the state: the live debugger session, the executor, the evidence
 * store, the models. They cannot be checkpointed, so they reach the nodes through the run's
 * context (LangGraph's `contextSchema`, given to `invoke`) and are rebuilt by `dumpdbg resume`.
 * Also the helpers every agent shares: one step's accounting and progress line, running commands.
 */
import { readFileSync } from "node:fs";
import { Annotation, type LangGraphRunnableConfig } from "@langchain/langgraph/web";
import type { TriageOptions } from "../analyzers/triage/index.js";
import type { Probe } from "../debuggers/probe.js";
import type { DebuggerSession } from "../debuggers/session.js";
import type { Transcript } from "../evidence/sessions.js";
import type { EvidenceStore } from "../evidence/store.js";
import type { Models, Redactor, Usage } from "../llm/index.js";
import type { ModuleSymbolsRow } from "../report/document.js";
import type { CommandAgent, Observation, Spent, State, Update } from "../state.js";
import type { CommandExecutor, ExecutedCommand } from "./executor.js";

export interface Limits {
  /** Hypotheses formed in all, pivots included. */
  maxHypotheses: number;
  /** Test rounds in all, over every hypothesis. */
  maxIterations: number;
  /** Graph steps (LangGraph's recursion limit). The routers wrap up before it; if it is hit anyway the report is written from the last checkpoint. */
  recursionLimit: number;
}

export const DEFAULT_LIMITS: Limits = { maxHypotheses: 6, maxIterations: 10, recursionLimit: 60 };

/** Limits with the defaults filled in, each checked. */
export function ensureLimits(partial: Partial<Limits> = {}): Limits {
  const limits = { ...DEFAULT_LIMITS, ...partial };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a whole number of at least 1, got ${value}`);
  }
  return limits;
}

/** Hypotheses formed at once; the rest of a playbook's list is kept for pivots. */
export const INITIAL_HYPOTHESES = 3;
/** "Test each with 2–3 targeted commands." */
export const COMMANDS_PER_TEST = 3;
/** Commands the investigator, and the responder, may run in one step. */
export const COMMANDS_PER_STEP = 12;

export interface Runtime {
  session: DebuggerSession;
  executor: CommandExecutor;
  store: EvidenceStore;
  transcript: Transcript;
  models: Models;
  /** The run's model usage in this process, for the Ctrl+C line; the state sums it across processes. */
  usage: Usage;
  redactor: Redactor;
  limits: Limits;
  /** One progress line (stderr); `detail` marks one command's line, which a terminal collapses. */
  progress: (line: string, detail?: boolean) => void;
  /** For the report's session block. */
  meta: { id: string; dump: string; executable: string | null; debugger: string; startedAt: string };
  /** The thread the debugger selects on opening the dump (the one that got the signal); commands run relative to it. */
  homeThread: number | null;
  /** What the dump file itself records (stop reason, platform, regions, the program's imports), read by dumpdbg: triage's ground truth. */
  triageOptions: TriageOptions;
  /** What the debugger warned about while loading the dump: for the report, not the terminal. */
  debuggerWarnings: string[];
  /** The dump as it was found (decompressed from, what systemd-coredump or apport recorded), for the report; optional for runtimes made before it. */
  dumpSource?: string[];
  /** Where each module's symbols came from, for the report; empty when no place to look was named. */
  symbols: ModuleSymbolsRow[];
  /** Time this process spent before its first node (opening the dump, triage): the first step claims it. */
  unclaimedMs: number;
  /** Model usage a killed run spent but never checkpointed; the first node of a resumed run claims it. */
  unclaimedUsage: Pick<Spent, "llmCalls" | "llmMs" | "local" | "cloud"> | null;
}

/** The analysis graph's context: what a run is given besides its state, never checkpointed. */
export const AnalysisContext = Annotation.Root({
  /** This process's session, executor, store and models; a resumed run is given new ones. */
  runtime: Annotation<Runtime>,
});

/** What a node and a router of the analysis graph are called with besides the state. */
export type NodeConfig = LangGraphRunnableConfig<typeof AnalysisContext.State>;

export function runtimeOf(config: NodeConfig): Runtime {
  const runtime = config.context?.runtime;
  if (!runtime) throw new Error("the analysis graph was run without its runtime in its context");
  return runtime;
}

/**
 * Runs one node's work, prints its one-line note with the time it took, and adds what every node
 * reports: its name to the trail, and the time, debugger time and tokens it spent. `spentSoFar`
 * is for the report writer, which puts the totals in the report before its step is over.
 */
export async function step(
  config: NodeConfig,
  agent: string,
  work: (runtime: Runtime, spentSoFar: () => Spent) => Promise<[Update, string]>,
): Promise<Update> {
  const runtime = runtimeOf(config);
  const started = performance.now();
  const before = { debuggerMs: runtime.executor.debuggerMs, usage: snapshot(runtime.usage) };
  const setupMs = runtime.unclaimedMs;
  runtime.unclaimedMs = 0;
  const carried = runtime.unclaimedUsage ?? { llmCalls: 0, llmMs: 0, local: { inputTokens: 0, outputTokens: 0 }, cloud: { inputTokens: 0, outputTokens: 0 } };
  runtime.unclaimedUsage = null;
  const spentSoFar = (): Spent => {
    const model = spentSince(runtime.usage, before.usage);
    return {
      ms: performance.now() - started + setupMs,
      debuggerMs: runtime.executor.debuggerMs - before.debuggerMs,
      llmMs: model.llmMs + carried.llmMs,
      llmCalls: model.llmCalls + carried.llmCalls,
      local: plus(model.local, carried.local),
      cloud: plus(model.cloud, carried.cloud),
    };
  };
  const [update, note] = await work(runtime, spentSoFar);
  runtime.progress(`[${agent}] ${note} (${Math.round(performance.now() - started)} ms)`);
  return { ...update, trail: [agent], spent: spentSoFar(), redactions: runtime.redactor.stats().kinds };
}

/** Runs probes through the executor (policy for proposed commands, cache, store) and reports each on the progress line. */
export async function runCommands(
  runtime: Runtime,
  agent: CommandAgent,
  steps: Probe[],
  hypothesis: string | null = null,
): Promise<Observation[]> {
  const observations: Observation[] = [];
  for (const running of asked(runtime, steps)) {
    const done = await running();
    const command = done.command;
    const how = done.cached ? "cached" : `${Math.round(done.ms)} ms`;
    const failure = done.ok ? "" : ` — ${done.errorType === "not_allowed" ? "refused" : done.errorType}: ${done.error ?? ""}`;
    runtime.progress(`[${agent}] ${hypothesis ? `${hypothesis}: ` : ""}${command} (${done.evidenceId}, ${how})${failure}`, true);
    observations.push(observationOf(done, agent, hypothesis));
  }
  // A command may have moved the selection (`frame 2`, `thread 3`): the agents' commands and the
  // store's cache are relative to the crashing thread's innermost frame, so go back there.
  const { selectedThread, selectedFrame } = runtime.session.context();
  const back: Probe[] = [
    ...(runtime.homeThread !== null && selectedThread !== null && selectedThread.id !== runtime.homeThread ? [{ kind: "select", thread: runtime.homeThread } as const] : []),
    ...(selectedFrame !== null && selectedFrame.level !== 0 ? [{ kind: "select", frame: 0 } as const] : []),
  ];
  for (const command of back) observations.push(observationOf(await runtime.executor.run(command, "agent"), agent, null));
  return observations;
}

/**
 * Each step's run, in order. Steps that are distinct commands and move no selection are asked all
 * at once, so the debugger works through the next while the executor stores and reads the last
 * (each is still answered, stored and cached in its turn, as one by one); otherwise one by one,
 * each asked when the one before it has its answer.
 */
function asked(runtime: Runtime, steps: Probe[]): (() => Promise<ExecutedCommand>)[] {
  const { vocabulary } = runtime.session;
  const commands = steps.map((probe) => vocabulary.render(probe));
  const together = new Set(commands).size === commands.length && !commands.some((command) => vocabulary.movesSelection(command));
  if (!together) return steps.map((probe) => () => runtime.executor.run(probe, "agent"));
  const runs = steps.map((probe) => runtime.executor.run(probe, "agent"));
  // Awaited in order below: a later one's failure is reported there, not as unhandled.
  for (const run of runs) run.catch(() => undefined);
  return runs.map((run) => () => run);
}

function observationOf(done: ExecutedCommand, agent: CommandAgent, hypothesis: string | null): Observation {
  return {
    evidenceId: done.evidenceId,
    command: done.command,
    agent,
    hypothesis,
    ok: done.ok,
    errorType: done.errorType,
    summary: done.summary,
    cached: done.cached,
  };
}

/** The hypothesis with this id; a node that needs it cannot go on without it. */
export function hypothesisById(state: State, id: string | null) {
  const found = state.hypotheses.find((h) => h.id === id);
  if (!found) throw new Error(`no hypothesis ${id ?? "(none selected)"} in the state`);
  return found;
}

export function requireTriage(state: State) {
  if (!state.triage) throw new Error("the analysis graph was started without a triage result");
  return state.triage;
}

/**
 * The model usage the transcript records beyond what the checkpointed state counts: the calls of a
 * node that was killed before its checkpoint. Added to the state when a run is resumed.
 */
export function uncheckpointedSpend(transcriptFile: string, counted: Spent): Runtime["unclaimedUsage"] {
  let text: string;
  try {
    text = readFileSync(transcriptFile, "utf8");
  } catch {
    return null;
  }
  const total = { llmCalls: 0, llmMs: 0, local: { inputTokens: 0, outputTokens: 0 }, cloud: { inputTokens: 0, outputTokens: 0 } };
  for (const line of text.split("\n")) {
    if (!line.includes('"type":"model"')) continue;
    const cost = (JSON.parse(line) as { cost?: typeof total }).cost;
    if (!cost) continue;
    total.llmCalls += cost.llmCalls;
    total.llmMs += cost.llmMs;
    total.local = plus(total.local, cost.local);
    total.cloud = plus(total.cloud, cost.cloud);
  }
  const lost = { llmCalls: total.llmCalls - counted.llmCalls, llmMs: Math.max(0, total.llmMs - counted.llmMs), local: minus(total.local, counted.local), cloud: minus(total.cloud, counted.cloud) };
  const any = lost.llmCalls > 0 || lost.local.inputTokens > 0 || lost.cloud.inputTokens > 0;
  const negative = lost.llmCalls < 0 || lost.local.inputTokens < 0 || lost.cloud.inputTokens < 0 || lost.local.outputTokens < 0 || lost.cloud.outputTokens < 0;
  return any && !negative ? lost : null;
}

function plus(a: { inputTokens: number; outputTokens: number }, b: { inputTokens: number; outputTokens: number }) {
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
}

/** The model spending counted so far, to measure a step or a call against. */
export function snapshot(usage: Usage) {
  return { llmMs: usage.llmMs, llmCalls: usage.llmCalls, local: { ...usage.local }, cloud: { ...usage.cloud } };
}

/** What `usage` has counted since `before` was taken: calls, model time, tokens per tier. */
export function spentSince(usage: Usage, before: ReturnType<typeof snapshot>): ReturnType<typeof snapshot> {
  const after = snapshot(usage);
  return { llmCalls: after.llmCalls - before.llmCalls, llmMs: after.llmMs - before.llmMs, local: minus(after.local, before.local), cloud: minus(after.cloud, before.cloud) };
}

function minus(a: { inputTokens: number; outputTokens: number }, b: { inputTokens: number; outputTokens: number }) {
  return { inputTokens: a.inputTokens - b.inputTokens, outputTokens: a.outputTokens - b.outputTokens };
}
