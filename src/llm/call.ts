/**
 * One model call for one agent step. It picks the tier (light work to the local model, deep work to
 * the cloud), sets the agent's temperature, fills the prompt file within the tier's context budget,
 * masks secrets when the prompt leaves the machine, retries transient failures and a malformed
 * answer once, and counts tokens. When the model path fails, the result says why and the agent
 * takes its offline path; only a provider the user named that cannot be used at all throws.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AIMessage, BaseMessage, BaseMessageLike } from "@langchain/core/messages";
import type { z } from "zod";
import { estimateTokens, fitValues } from "./budget.js";
import { ProviderError } from "./errors.js";
import type { AgentName, Models, Tier, TierModel } from "./models.js";
import { fillPrompt, loadPrompt } from "./prompts.js";
import { structuredRunnable } from "./providers.js";
import type { Redactor } from "./redact.js";
import { withRetries, type Attempted } from "./retry.js";
import type { TokenCount, Usage } from "./usage.js";

export interface PromptSpec {
  /** The prompt file, `prompts/<template>.md`; also the name of the structured answer. */
  template: string;
  values: Record<string, string>;
}

export interface CallOptions {
  usage: Usage;
  /** The run's redactor (it knows the dump's environment and keeps the counts for the report). */
  redactor: Redactor;
  /** Ctrl+C: aborts at once and propagates, never turned into a fallback. */
  signal?: AbortSignal;
}

/** `ok` discriminates even where `T` is generic (where `value !== null` cannot narrow). */
export type CallResult<T> = { ok: true; value: T; tier: Tier } | { ok: false; value: null; reason: string };

/** Prompt tokens per call, preamble included; the local one fits the context providers.ts gives Ollama. */
export const CONTEXT_BUDGET: Readonly<Record<Tier, number>> = { local: 6_000, cloud: 16_000 };

const TEMPERATURE: Readonly<Record<AgentName, number>> = {
  hypothesis: 0.0,
  tester: 0.1,
  investigator: 0.1,
  reasoner: 0.2,
  critic: 0.5,
  report: 0.2,
  chat: 0.2,
};

/** Choosing commands and reading their output; everything else is deep reasoning. */
const LIGHT_WORK: ReadonlySet<AgentName> = new Set(["tester", "investigator"]);

const RETRY_NOTE = "\n\n(Your previous answer to this request did not follow the required format. Answer again, following it exactly.)";

/** Tiers found unusable during this run under `auto`, and why; later calls skip them at once. */
const unusable = new WeakMap<TierModel, string>();

/** A structured answer parsed into `schema`. */
export async function callStructured<T extends Record<string, unknown>>(
  models: Models,
  agent: AgentName,
  prompt: PromptSpec,
  schema: z.ZodType<T>,
  options: CallOptions,
): Promise<CallResult<T>> {
  return call(models, agent, prompt, options, async (chat, target, messages, signal) => {
    const { raw, parsed } = await structuredRunnable(target.provider, chat, schema, prompt.template).invoke(messages, { signal });
    return { message: raw, value: parsed ?? null };
  });
}

/** A free-text answer (the chat). */
export async function callText(models: Models, agent: AgentName, prompt: PromptSpec, options: CallOptions): Promise<CallResult<string>> {
  return call(models, agent, prompt, options, async (chat, _target, messages, signal) => {
    const message = await chat.invoke(messages, { signal });
    const text = message.text.trim();
    return { message, value: text === "" ? null : text };
  });
}

interface Answer<V> {
  message: BaseMessage;
  /** `null` when the answer was malformed. */
  value: V | null;
}

type Exchange<V> = (chat: BaseChatModel, target: TierModel, messages: BaseMessageLike[], signal: AbortSignal) => Promise<Answer<V>>;

async function call<V>(models: Models, agent: AgentName, prompt: PromptSpec, options: CallOptions, exchange: Exchange<V>): Promise<CallResult<V>> {
  const tiers = LIGHT_WORK.has(agent) ? [models.local, models.cloud] : [models.cloud, models.local];
  const candidates = tiers.filter((tier): tier is TierModel => tier !== null);
  if (candidates.length === 0) return { ok: false, value: null, reason: "offline: no model configured" };

  const started = performance.now();
  try {
    let reason = "";
    for (const target of candidates) {
      const known = unusable.get(target);
      if (known !== undefined) {
        reason = known;
        continue;
      }
      const outcome = await callTier(models, target, agent, prompt, options, exchange);
      if (outcome.ok) return { ok: true, value: outcome.value, tier: target.tier };
      reason = `${target.provider} ${target.model}: ${outcome.failure.message}`;
      if (outcome.failure.kind !== "fatal") return { ok: false, value: null, reason };
      if (models.strict) throw new ProviderError(reason);
      unusable.set(target, reason);
    }
    return { ok: false, value: null, reason };
  } finally {
    options.usage.addTime(performance.now() - started);
  }
}

async function callTier<V>(
  models: Models,
  target: TierModel,
  agent: AgentName,
  prompt: PromptSpec,
  options: CallOptions,
  exchange: Exchange<V>,
): Promise<Attempted<V>> {
  const { system, human } = promptText(models, target, prompt, options.redactor);
  const chat = await target.chat(TEMPERATURE[agent]);
  for (let attempt = 1; ; attempt += 1) {
    const messages: BaseMessageLike[] = [
      ["system", system],
      ["human", attempt === 1 ? human : human + RETRY_NOTE],
    ];
    const answered = await withRetries(target, models, options.signal, (signal) => exchange(chat, target, messages, signal));
    if (!answered.ok) return answered;
    options.usage.add(target.tier, tokensOf(answered.value.message));
    if (answered.value.value !== null) return { ok: true, value: answered.value.value };
    if (attempt === 2) {
      return { ok: false, failure: { kind: "step", message: `malformed answer twice (not the "${prompt.template}" format)`, retryAfterMs: null } };
    }
  }
}

/** The preamble and the filled prompt, masked if it leaves the machine, within the tier's budget. */
function promptText(models: Models, target: TierModel, prompt: PromptSpec, redactor: Redactor): { system: string; human: string } {
  const system = loadPrompt("preamble");
  const template = loadPrompt(prompt.template);
  const values = target.leavesMachine && models.redact ? mapValues(prompt.values, (value) => redactor.redact(value)) : prompt.values;
  // Also validates the placeholders, before anything is trimmed or sent.
  const bare = fillPrompt(template, mapValues(values, () => ""));
  const fixed = estimateTokens(system) + estimateTokens(bare) + estimateTokens(RETRY_NOTE);
  if (fixed >= CONTEXT_BUDGET[target.tier]) throw new Error(`prompt "${prompt.template}" alone exceeds the ${target.tier} context budget`);
  return { system, human: fillPrompt(template, fitValues(values, CONTEXT_BUDGET[target.tier] - fixed)) };
}

/** As the provider reported them; an answer without usage numbers counts as zero, never estimated. */
function tokensOf(message: BaseMessage): TokenCount {
  const usage = "usage_metadata" in message ? (message as AIMessage).usage_metadata : undefined;
  return { inputTokens: usage?.input_tokens ?? 0, outputTokens: usage?.output_tokens ?? 0 };
}

function mapValues(values: Record<string, string>, f: (value: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, f(value)]));
}
