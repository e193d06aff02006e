/**
 * One agent of the analysis graph, declared once: its name (its step in the trail, its transcript
 * lines and its fallbacks), its prompt file, its model profile and the schema of the model's answer.
 * `agentNode` makes the graph node: the step's accounting, the runtime from the graph's context, the
 * model asked under the agent's own name, and every fallback to the offline path recorded.
 */
import type { z } from "zod";
import { callStructured, type ModelProfile } from "../llm/index.js";
import type { Fallback, Spent, State, Update } from "../state.js";
import { minus, snapshot, step, type NodeConfig, type Runtime } from "./runtime.js";

export interface Agent<T extends Record<string, unknown>> {
  name: string;
  /** `prompts/<prompt>.md`; the agent's work fills its placeholders, and nothing else knows them. */
  prompt: string;
  profile: ModelProfile;
  /** The model's answer; every field described, so the model sees what it means. */
  schema: z.ZodType<T>;
}

/** What an agent's work gets for one step. */
export interface Turn<T> {
  runtime: Runtime;
  /** What the step has spent so far (the report writer puts it in the report before the step ends). */
  spentSoFar: () => Spent;
  /** The model's answer to the prompt filled with `values`; null when the offline path takes the step. */
  ask(values: Record<string, string>): Promise<T | null>;
  /** A model answer the evidence check did not take, and why: the offline path took the step. */
  notTaken(reason: string): void;
}

export function agentNode<T extends Record<string, unknown>>(agent: Agent<T>, work: (state: State, turn: Turn<T>) => Promise<[Update, string]>) {
  return (state: State, config: NodeConfig): Promise<Update> =>
    step(config, agent.name, async (runtime, spentSoFar) => {
      const fallbacks: Fallback[] = [];
      const turn: Turn<T> = {
        runtime,
        spentSoFar,
        ask: async (values) => {
          const asked = await ask(runtime, agent, values);
          if (asked.fallback) fallbacks.push(asked.fallback);
          return asked.value;
        },
        notTaken: (reason) => {
          fallbacks.push({ agent: agent.name, reason });
        },
      };
      const [update, note] = await work(state, turn);
      return [fallbacks.length > 0 ? { ...update, fallbacks } : update, note];
    });
}

type Asked<T> = { value: T; fallback: null } | { value: null; fallback: Fallback | null };

/**
 * One structured model call. `null` means the offline path takes the step; the reason is returned
 * as a fallback to record, except when no model is configured at all.
 */
async function ask<T extends Record<string, unknown>>(runtime: Runtime, agent: Agent<T>, values: Record<string, string>): Promise<Asked<T>> {
  if (!runtime.models.cloud && !runtime.models.local) return { value: null, fallback: null };
  const before = snapshot(runtime.usage);
  const result = await callStructured(runtime.models, agent.profile, { template: agent.prompt, values }, agent.schema, { usage: runtime.usage, redactor: runtime.redactor });
  // What this call cost, in the transcript as it happens: a resumed run counts from it what a
  // killed node spent but never checkpointed.
  const after = snapshot(runtime.usage);
  const cost = { llmCalls: after.llmCalls - before.llmCalls, llmMs: Math.round(after.llmMs - before.llmMs), local: minus(after.local, before.local), cloud: minus(after.cloud, before.cloud) };
  if (result.ok) {
    runtime.transcript.append({ type: "model", agent: agent.name, tier: result.tier, ok: true, cost });
    return { value: result.value, fallback: null };
  }
  runtime.transcript.append({ type: "model", agent: agent.name, ok: false, reason: result.reason, cost });
  runtime.progress(`[${agent.name}] model step failed (${result.reason}); the offline path takes it`);
  return { value: null, fallback: { agent: agent.name, reason: result.reason } };
}
