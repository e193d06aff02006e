/**
 * The LangChain chat model behind each provider, and how each gives structured output. Every
 * provider package is imported here and only when a model is first used, so the offline path and
 * `dumpdbg --version` never load one.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import type { BaseMessage } from "@langchain/core/messages";
import type { Runnable } from "@langchain/core/runnables";
import type { z } from "zod";
import { noteCodeUse } from "../code-cache.js";

export type Provider = "openai" | "anthropic" | "ollama";

export interface Endpoint {
  provider: Provider;
  model: string;
  /** OpenAI: base URL with /v1; Anthropic: API root; Ollama: host. Always explicit, never read from
   * the environment by LangChain, which would otherwise route through a LangSmith gateway when
   * `LANGSMITH_GATEWAY` is set. */
  url: string;
  apiKey?: string;
  timeoutMs: number;
}

/** Ollama's default context (2–4k tokens) would silently cut the local tier's prompts. */
const OLLAMA_CONTEXT_TOKENS = 8192;

/**
 * A chat model at `temperature`. Retries and streaming are off in the clients: our retry loop
 * (retry.ts) is the only one, and a non-streamed answer carries the provider's token usage, even
 * when a graph is streamed by messages (where LangChain would otherwise estimate tokens with a
 * tokenizer it downloads).
 */
export async function createChatModel(endpoint: Endpoint, temperature: number): Promise<BaseChatModel> {
  const chat = await constructChatModel(endpoint, temperature);
  // Also given to the constructors, since ChatOpenAI rebuilds itself from its fields in
  // withStructuredOutput; set here because ChatAnthropic ignores the field.
  chat.disableStreaming = true;
  return chat;
}

async function constructChatModel(endpoint: Endpoint, temperature: number): Promise<BaseChatModel> {
  const { model, url, apiKey } = endpoint;
  // Its client's code is kept in this command's code cache from now on.
  noteCodeUse(endpoint.provider);
  switch (endpoint.provider) {
    case "openai": {
      const { ChatOpenAI } = await import("@langchain/openai");
      return new ChatOpenAI({
        model,
        apiKey,
        configuration: { baseURL: url },
        // Reasoning models (o1, o3, gpt-5) reject any temperature but their default.
        ...(isOpenAIReasoningModel(model) ? {} : { temperature }),
        maxRetries: 0,
        disableStreaming: true,
      });
    }
    case "anthropic": {
      const { ChatAnthropic } = await import("@langchain/anthropic");
      return new ChatAnthropic({ model, apiKey, anthropicApiUrl: url, temperature, maxRetries: 0, disableStreaming: true });
    }
    case "ollama": {
      const { ChatOllama } = await import("@langchain/ollama");
      // ChatOllama gives its requests no signal of ours; without this a timed-out call would keep
      // its socket, and the process, alive until the model finished.
      const timeoutMs = endpoint.timeoutMs;
      const fetchWithTimeout: typeof fetch = (input, init) => {
        const timeout = AbortSignal.timeout(timeoutMs);
        return fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
      };
      return new ChatOllama({ model, baseUrl: url, temperature, numCtx: OLLAMA_CONTEXT_TOKENS, fetch: fetchWithTimeout, disableStreaming: true });
    }
  }
}

/** The raw message (for its usage numbers) and the parsed answer, `null` when it did not parse. */
export type StructuredRunnable<T> = Runnable<BaseLanguageModelInput, { raw: BaseMessage; parsed: T | null | undefined }>;

/**
 * Structured output per provider:
 * - OpenAI: a forced function call. `json_schema` would force strict mode, which rejects optional
 *   fields, and its SDK-side parse throws on malformed JSON instead of letting us retry it; tool
 *   calls are also what OpenAI-compatible servers support most widely.
 * - Anthropic: a forced `tool_use`.
 * - Ollama: `format` with the JSON schema (constrained decoding). The schema carries `name` as its
 *   title, since Ollama's request has no other place for it.
 */
export function structuredRunnable<T extends Record<string, unknown>>(
  provider: Provider,
  chat: BaseChatModel,
  schema: z.ZodType<T>,
  name: string,
): StructuredRunnable<T> {
  switch (provider) {
    case "openai":
    case "anthropic":
      return chat.withStructuredOutput<T>(schema, { name, method: "functionCalling", includeRaw: true });
    case "ollama":
      return chat.withStructuredOutput<T>(schema.meta({ ...schema.meta(), title: name }), { name, method: "jsonSchema", includeRaw: true });
  }
}

function isOpenAIReasoningModel(model: string): boolean {
  return /^o\d/.test(model) || (model.startsWith("gpt-5") && !model.startsWith("gpt-5-chat"));
}
