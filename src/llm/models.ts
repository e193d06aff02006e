/**
 * Which models a run uses: the provider (chosen, or found from the environment with `auto`), the
 * cloud tier for deep reasoning and the local tier (Ollama) for light interpretation. Resolving
 * imports no provider package and sends nothing, except a short probe of Ollama's `/api/tags`.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ProviderError } from "./errors.js";
import { createChatModel, type Endpoint, type Provider } from "./providers.js";

export type { Provider } from "./providers.js";

/** `local` is the Ollama model for light work, `cloud` the provider's model for deep work. */
export type Tier = "local" | "cloud";

/** How one agent asks the models: the tier it tries first, and its temperature. */
export interface ModelProfile {
  /** `local` for light work (choosing commands, reading their output), `cloud` for deep reasoning; the other tier is the second choice. */
  tier: Tier;
  temperature: number;
}

export interface ModelConfig {
  provider: "auto" | "offline" | Provider;
  /** The main model (`--model`): the cloud model, or the Ollama model with `--provider ollama`. */
  model?: string;
  /** The tier-2 Ollama model (`--local-model`) beside a cloud model. */
  localModel?: string;
  /** Mask secrets in what leaves the machine (`--no-redact` turns it off). */
  redact: boolean;
  /** Per request attempt. */
  timeoutMs?: number;
  /** Retries of a request after a 429, a 5xx, a timeout or a dropped connection. */
  maxRetries?: number;
  /**
   * Per attempt, until the model has answered once in this run: a server that accepts requests
   * and never answers is found out in this long, not in `timeoutMs` times the retries.
   */
  firstAnswerTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

export interface TierModel {
  readonly tier: Tier;
  readonly provider: Provider;
  readonly model: string;
  /** Where requests go (for messages; never contains the key). */
  readonly url: string;
  /** What is sent here is redacted: always for the cloud tier, and for an OLLAMA_HOST that is not
   * this machine. */
  readonly leavesMachine: boolean;
  /** The chat model at `temperature`, created on first use, which is when its package is imported. */
  chat(temperature: number): Promise<BaseChatModel>;
}

export interface Models {
  readonly provider: "offline" | Provider;
  readonly cloud: TierModel | null;
  readonly local: TierModel | null;
  readonly redact: boolean;
  /** The user named the provider: one that cannot be used at all is an error (exit 5), not a fallback. */
  readonly strict: boolean;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly firstAnswerTimeoutMs: number;
  /** One line for the progress output and the report, e.g. "openai gpt-4o-mini (cloud, secrets masked)". */
  describe(): string;
}

const DEFAULT_MODEL = { openai: "gpt-4o-mini", anthropic: "claude-sonnet-4-5" } as const;
const DEFAULT_URL = { openai: "https://api.openai.com/v1", anthropic: "https://api.anthropic.com" } as const;
const DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434";
const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_RETRIES = 3;
const DEFAULT_FIRST_ANSWER_TIMEOUT_MS = 25_000;
/** Short: `auto` must not make every run wait on an Ollama that is not there. */
const OLLAMA_PROBE_MS = 1_500;

/** A positive number of seconds from the environment, in milliseconds; else null. */
function secondsOf(text: string | undefined): number | null {
  const seconds = Number(text);
  return text !== undefined && Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : null;
}

/** Whether any configured tier sends prompts off this machine (a cloud model, or Ollama on another host). */
export function leavesMachine(models: Models): boolean {
  return [models.cloud, models.local].some((tier) => tier?.leavesMachine === true);
}

export async function resolveModels(config: ModelConfig): Promise<Models> {
  const env = config.env ?? process.env;
  const settings = {
    timeoutMs: config.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxRetries: config.maxRetries ?? DEFAULT_MAX_RETRIES,
    firstAnswerTimeoutMs: config.firstAnswerTimeoutMs ?? secondsOf(env.DUMPDBG_MODEL_FIRST_ANSWER_SECONDS) ?? DEFAULT_FIRST_ANSWER_TIMEOUT_MS,
  };
  const strict = config.provider !== "auto";
  const notes: string[] = [];
  const ollama = new OllamaProbe(ollamaHost(env));

  let provider = config.provider;
  if (provider === "auto") {
    if (env.OPENAI_API_KEY) provider = "openai";
    else if (env.ANTHROPIC_API_KEY) provider = "anthropic";
    else if (((await ollama.installed()) ?? []).length > 0) provider = "ollama";
    else provider = "offline";
  }

  let cloud: TierModel | null = null;
  let local: TierModel | null = null;
  switch (provider) {
    case "offline":
      // Offline means nothing is sent anywhere, so a --local-model is not used either.
      break;
    case "openai":
    case "anthropic":
      cloud = cloudModel(provider, config.model ?? DEFAULT_MODEL[provider], env, settings.timeoutMs);
      if (config.localModel) local = await localModel(ollama, config.localModel, strict, notes, settings.timeoutMs);
      break;
    case "ollama":
      local = await localModel(ollama, config.model ?? config.localModel, strict, notes, settings.timeoutMs);
      if (!local) provider = "offline";
      break;
  }

  const redact = config.redact;
  return {
    provider,
    cloud,
    local,
    redact,
    strict,
    ...settings,
    describe() {
      const privacy = (tier: TierModel) => (tier.leavesMachine ? (redact ? ", secrets masked" : ", NOT redacted") : "");
      const tiers = [cloud, local].flatMap((tier) => (tier ? [`${tier.provider} ${tier.model} (${tier.tier}${privacy(tier)})`] : []));
      return [tiers.length > 0 ? tiers.join(" + ") : "offline (no model)", ...notes].join("; ");
    },
  };
}

function cloudModel(provider: "openai" | "anthropic", model: string, env: NodeJS.ProcessEnv, timeoutMs: number): TierModel {
  const keyVariable = provider === "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
  const apiKey = env[keyVariable];
  if (!apiKey) {
    const hint = provider === "openai" ? " (any value for an OpenAI-compatible server that takes none)" : "";
    throw new ProviderError(`--provider ${provider} needs ${keyVariable} to be set${hint}`);
  }
  const url = (provider === "openai" ? env.OPENAI_BASE_URL : env.ANTHROPIC_BASE_URL) || DEFAULT_URL[provider];
  return tierModel({ provider, model, url, apiKey, timeoutMs }, "cloud");
}

/** The Ollama model, checked against what the server has installed; `null` (with a note) under `auto`. */
async function localModel(ollama: OllamaProbe, requested: string | undefined, strict: boolean, notes: string[], timeoutMs: number): Promise<TierModel | null> {
  const installed = await ollama.installed();
  let problem: string | null = null;
  if (installed === null) problem = `Ollama is not answering at ${ollama.host}: start it with \`ollama serve\` or set OLLAMA_HOST`;
  else if (requested === undefined && installed.length === 0) problem = `Ollama at ${ollama.host} has no model: run \`ollama pull <model>\``;
  else if (requested !== undefined && !installed.some((name) => name === requested || name === `${requested}:latest`)) {
    problem = `model "${requested}" is not installed in Ollama at ${ollama.host}: run \`ollama pull ${requested}\``;
  }
  if (problem !== null) {
    if (strict) throw new ProviderError(problem);
    notes.push(`local model not used: ${problem}`);
    return null;
  }
  const model = requested ?? (installed?.[0] as string);
  return tierModel({ provider: "ollama", model, url: ollama.host, timeoutMs }, "local");
}

function tierModel(endpoint: Endpoint, tier: Tier): TierModel {
  // One client per temperature (agents use five), created once and shared by concurrent calls.
  const byTemperature = new Map<number, Promise<BaseChatModel>>();
  return {
    tier,
    provider: endpoint.provider,
    model: endpoint.model,
    url: endpoint.url,
    leavesMachine: tier === "cloud" || !isThisMachine(endpoint.url),
    chat(temperature) {
      let chat = byTemperature.get(temperature);
      if (!chat) {
        chat = createChatModel(endpoint, temperature);
        byTemperature.set(temperature, chat);
      }
      return chat;
    },
  };
}

/** Asks Ollama once which models it has; `null` when it does not answer. */
class OllamaProbe {
  private answer: Promise<string[] | null> | undefined;

  constructor(readonly host: string) {}

  installed(): Promise<string[] | null> {
    this.answer ??= fetch(`${this.host}/api/tags`, { signal: AbortSignal.timeout(OLLAMA_PROBE_MS) })
      .then(async (response) => {
        if (!response.ok) return null;
        const body = (await response.json()) as { models?: Array<{ name?: unknown }> };
        return (body.models ?? []).flatMap((m) => (typeof m.name === "string" ? [m.name] : []));
      })
      .catch(() => null);
    return this.answer;
  }
}

/** OLLAMA_HOST as Ollama itself reads it: the scheme and the port 11434 may be left out. */
function ollamaHost(env: NodeJS.ProcessEnv): string {
  const raw = env.OLLAMA_HOST?.trim() || DEFAULT_OLLAMA_HOST;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  const url = new URL(withScheme);
  const authority = withScheme.split("//")[1]?.split("/")[0] ?? "";
  if (url.protocol === "http:" && !/:\d+$/.test(authority)) url.port = "11434";
  return url.origin;
}

/** Loopback, or 0.0.0.0, which Ollama's own docs put in OLLAMA_HOST to mean this machine. */
function isThisMachine(url: string): boolean {
  const host = new URL(url).hostname;
  return host === "localhost" || host === "[::1]" || host === "0.0.0.0" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
