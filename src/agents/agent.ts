/**
 * One agent of the analysis graph, declared once: its name (its step in the trail, its transcript
 * lines and its fallbacks), its prompt, its model profile, the schema of the model's answer,
 * the check that answer must pass against the evidence, and the offline path.
 * `agentNode` makes the graph node: the step's accounting, the runtime from the graph's context, the
 * model asked under the agent's own name, its answer checked, and every fallback to the offline
 * path recorded.
 */
import type { z } from "zod";
import { callStructured, type ModelProfile } from "../llm/index.js";
import type { Fallback, Spent, State, Update } from "../state.js";
import { snapshot, spentSince, step, type NodeConfig, type Runtime } from "./runtime.js";

/** What an agent's check and offline path are given: the step's state and runtime. */
export interface Given {
  state: State;
  runtime: Runtime;
}

/** `T`: the model's answer; `R`: what the step decides, from that answer or offline. */
export interface Agent<T extends Record<string, unknown>, R> {
  name: string;
  /** Its prompt (`prompt.md` beside it, imported as text); the agent's work fills its placeholders, and nothing else knows them. */
  prompt: string;
  profile: ModelProfile;
  /** The model's answer; every field described, so the model sees what it means. */
  schema: z.ZodType<T>;
  /** What the step decides without a model. (Declare it before `check`: TypeScript infers `R` from it.) */
  offline(given: Given): R | Promise<R>;
  /**
   * The model's answer checked against the evidence: what the step takes from it, or `notTaken`.
   * `floor()` is the offline result, for a check that measures the answer against it.
   */
  check(answer: T, given: Given & { floor: () => Promise<R> }): R | NotTaken<R> | Promise<R | NotTaken<R>>;
}

/** A model's answer the check did not take, and why. */
class NotTaken<R> {
  constructor(
    readonly reason: string,
    /** What the step takes instead (the offline result with the model's view beside it); the offline result when absent. */
    readonly instead?: R,
  ) {}
}

export type { NotTaken };

export function notTaken<R = never>(reason: string, instead?: R): NotTaken<R> {
  return new NotTaken(reason, instead);
}

/** What an agent's work gets for one step. */
export interface Turn<R> {
  runtime: Runtime;
  /** What the step has spent so far (the report writer puts it in the report before the step ends). */
  spentSoFar: () => Spent;
  /** What the step decides: the model's answer to the prompt filled with `values` if its check takes it, else the offline path's. */
  decide(values: Record<string, string>): Promise<R>;
}

export function agentNode<T extends Record<string, unknown>, R>(agent: Agent<T, R>, work: (state: State, turn: Turn<R>) => Promise<[Update, string]>) {
  return (state: State, config: NodeConfig): Promise<Update> =>
    step(config, agent.name, async (runtime, spentSoFar) => {
      const fallbacks: Fallback[] = [];
      const given: Given = { state, runtime };
      const decide = async (values: Record<string, string>): Promise<R> => {
        // The offline path runs at most once, whether the check measured the answer against it or it takes the step.
        let offline: Promise<R> | undefined;
        const floor = () => (offline ??= Promise.resolve(agent.offline(given)));
        const asked = await ask(runtime, agent, values);
        if (asked.fallback) fallbacks.push(asked.fallback);
        if (asked.value === null) return floor();
        const checked = await agent.check(asked.value, { ...given, floor });
        if (!(checked instanceof NotTaken)) return checked;
        fallbacks.push({ agent: agent.name, reason: checked.reason });
        runtime.progress(`[${agent.name}] ${checked.reason}; the offline path takes it`);
        return checked.instead ?? floor();
      };
      const [update, note] = await work(state, { runtime, spentSoFar, decide });
      return [fallbacks.length > 0 ? { ...update, fallbacks } : update, note];
    });
}

type Asked<T> = { value: T; fallback: null } | { value: null; fallback: Fallback | null };

/**
 * One structured model call. `null` means the offline path takes the step; the reason is returned
 * as a fallback to record, except when no model is configured at all.
 */
async function ask<T extends Record<string, unknown>>(runtime: Runtime, agent: Agent<T, unknown>, values: Record<string, string>): Promise<Asked<T>> {
  if (!runtime.models.cloud && !runtime.models.local) return { value: null, fallback: null };
  const before = snapshot(runtime.usage);
  const result = await callStructured(runtime.models, agent.profile, { name: agent.name, template: agent.prompt, values }, agent.schema, { usage: runtime.usage, redactor: runtime.redactor });
  // What this call cost, in the transcript as it happens: a resumed run counts from it what a
  // killed node spent but never checkpointed.
  const spent = spentSince(runtime.usage, before);
  const cost = { ...spent, llmMs: Math.round(spent.llmMs) };
  if (result.ok) {
    runtime.transcript.append({ type: "model", agent: agent.name, tier: result.tier, ok: true, cost });
    return { value: result.value, fallback: null };
  }
  runtime.transcript.append({ type: "model", agent: agent.name, ok: false, reason: result.reason, cost });
  runtime.progress(`[${agent.name}] model step failed (${result.reason}); the offline path takes it`);
  return { value: null, fallback: { agent: agent.name, reason: result.reason } };
}
