/**
 * One model call for one agent step. It asks the tier the agent's model profile prefers first (light
 * work to the local model, deep work to the cloud), at the profile's temperature, fills the agent's prompt within the tier's context budget,
 * masks secrets when the prompt leaves the machine, retries transient failures and a malformed
 * answer once, and counts tokens. When the model path fails, the result says why and the agent
 * takes its offline path; only a provider the user named that cannot be used at all throws.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AIMessage, BaseMessage, BaseMessageLike } from "@langchain/core/messages";
import type { z } from "zod";
import { estimateTokens, fitValues } from "./budget.js";
import { ProviderError } from "./errors.js";
import type { ModelProfile, Models, Tier, TierModel } from "./models.js";
import preamble from "./preamble.md";
import { fillPrompt } from "./prompts.js";
import { structuredRunnable } from "./providers.js";
import type { Redactor } from "./redact.js";
import { withRetries, type Attempted } from "./retry.js";
import type { TokenCount, Usage } from "./usage.js";

export interface PromptSpec {
  /** Who asks (the agent); also the name of the structured answer. */
  name: string;
  /** The agent's prompt, its `{placeholders}` filled from `values`. */
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

const RETRY_NOTE = "\n\n(Your previous answer to this request did not follow the required format. Answer again, following it exactly.)";

/** Tiers found unusable during this run, and why; later calls skip them at once. */
const unusable = new WeakMap<TierModel, string>();
/** Answers each tier has given in this run: until its first, it gets the short first-answer limits. */
const answers = new WeakMap<TierModel, number>();

/** A model that stopped answering during the run: every step after it ran offline. */
export interface ModelDown {
  tier: Tier;
  provider: string;
  model: string;
  url: string;
  /** Answers it gave before it stopped. */
  answered: number;
  reason: string;
}

/** The models of this run that stopped answering, for the report and the closing line. */
export function modelsDown(models: Models): ModelDown[] {
  return [models.cloud, models.local].flatMap((tier) => {
    const reason = tier ? unusable.get(tier) : undefined;
    return tier && reason !== undefined ? [{ tier: tier.tier, provider: tier.provider, model: tier.model, url: tier.url, answered: answers.get(tier) ?? 0, reason }] : [];
  });
}

/** A structured answer parsed into `schema`. */
export async function callStructured<T extends Record<string, unknown>>(
  models: Models,
  profile: ModelProfile,
  prompt: PromptSpec,
  schema: z.ZodType<T>,
  options: CallOptions,
): Promise<CallResult<T>> {
  return call(models, profile, prompt, options, async (chat, target, messages, signal) => {
    const { raw, parsed } = await structuredRunnable(target.provider, chat, schema, prompt.name).invoke(messages, { signal });
    return { message: raw, value: parsed ?? null };
  });
}

/** A free-text answer (the chat). */
export async function callText(models: Models, profile: ModelProfile, prompt: PromptSpec, options: CallOptions): Promise<CallResult<string>> {
  return call(models, profile, prompt, options, async (chat, _target, messages, signal) => {
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

async function call<V>(models: Models, profile: ModelProfile, prompt: PromptSpec, options: CallOptions, exchange: Exchange<V>): Promise<CallResult<V>> {
  const tiers = profile.tier === "local" ? [models.local, models.cloud] : [models.cloud, models.local];
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
      const outcome = await callTier(models, target, profile, prompt, options, exchange);
      if (outcome.ok) {
        answers.set(target, (answers.get(target) ?? 0) + 1);
        return { ok: true, value: outcome.value, tier: target.tier };
      }
      reason = `${target.provider} ${target.model}: ${outcome.failure.message}`;
      if (outcome.failure.kind === "step") return { ok: false, value: null, reason };
      if (outcome.failure.kind === "fatal" && models.strict) throw new ProviderError(reason);
      // Down for good (timeouts, 5xx or 429 through every retry, a refused connection): the rest
      // of the run does not wait on it again; each later step takes its offline path at once.
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
  profile: ModelProfile,
  prompt: PromptSpec,
  options: CallOptions,
  exchange: Exchange<V>,
): Promise<Attempted<V>> {
  const { system, human } = promptText(models, target, prompt, options.redactor);
  const chat = await target.chat(profile.temperature);
  for (let attempt = 1; ; attempt += 1) {
    const messages: BaseMessageLike[] = [
      ["system", system],
      ["human", attempt === 1 ? human : human + RETRY_NOTE],
    ];
    // A model that has not answered yet in this run gets a short wait and one retry: a server that
    // accepts requests and says nothing must not hold the analysis for minutes.
    const proven = (answers.get(target) ?? 0) > 0;
    const limits = proven ? models : { timeoutMs: Math.min(models.timeoutMs, models.firstAnswerTimeoutMs), maxRetries: Math.min(models.maxRetries, 1) };
    const answered = await withRetries(target, limits, options.signal, (signal) => exchange(chat, target, messages, signal));
    if (!answered.ok) return answered;
    options.usage.add(target.tier, tokensOf(answered.value.message));
    if (answered.value.value !== null) return { ok: true, value: answered.value.value };
    if (attempt === 2) {
      return { ok: false, failure: { kind: "step", message: `malformed answer twice (not the "${prompt.name}" format)`, retryAfterMs: null } };
    }
  }
}

/** The preamble and the filled prompt, masked if it leaves the machine, within the tier's budget. */
function promptText(models: Models, target: TierModel, prompt: PromptSpec, redactor: Redactor): { system: string; human: string } {
  const system = preamble;
  const { template } = prompt;
  const values = target.leavesMachine && models.redact ? mapValues(prompt.values, (value) => redactor.redact(value)) : prompt.values;
  // Also validates the placeholders, before anything is trimmed or sent.
  const bare = fillPrompt(template, mapValues(values, () => ""));
  const fixed = estimateTokens(system) + estimateTokens(bare) + estimateTokens(RETRY_NOTE);
  if (fixed >= CONTEXT_BUDGET[target.tier]) throw new Error(`prompt "${prompt.name}" alone exceeds the ${target.tier} context budget`);
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
