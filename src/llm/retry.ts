/**
 * One request with backoff: retried after 429, 5xx, 408, a timeout or a dropped connection, with
 * the server's `retry-after-ms`/`retry-after` hint when it gives one. The clients' own retries are
 * off: LangChain's wait at least a second and grow to a minute, ignore `retry-after-ms`, and
 * ChatOllama has none, so one loop here behaves the same for every provider (and lets tests run fast).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Provider } from "./providers.js";

export interface Failure {
  /**
   * `transient`: worth retrying; `step`: this request will not succeed, the step takes its offline
   * path; `fatal`: the provider cannot be used at all (key, server, model).
   */
  kind: "transient" | "step" | "fatal";
  message: string;
  retryAfterMs: number | null;
}

export interface RetryLimits {
  maxRetries: number;
  timeoutMs: number;
}

export type Attempted<R> = { ok: true; value: R } | { ok: false; failure: Failure };

const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
/** A server asking for a longer pause than this is left alone; the step goes offline instead. */
const MAX_RETRY_AFTER_MS = 30_000;

const UNREACHABLE = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/**
 * Runs `attempt` with a fresh timeout each time. The user's abort (Ctrl+C) is not a failure: it
 * propagates at once.
 */
export async function withRetries<R>(
  endpoint: { provider: Provider; url: string },
  limits: RetryLimits,
  userSignal: AbortSignal | undefined,
  attempt: (signal: AbortSignal) => Promise<R>,
): Promise<Attempted<R>> {
  for (let retry = 0; ; retry += 1) {
    const timeout = AbortSignal.timeout(limits.timeoutMs);
    try {
      return { ok: true, value: await attempt(userSignal ? AbortSignal.any([userSignal, timeout]) : timeout) };
    } catch (error) {
      userSignal?.throwIfAborted();
      const failure = timeout.aborted ? timedOut(limits.timeoutMs) : classify(error, endpoint);
      const wait = failure.retryAfterMs ?? backoff(retry);
      if (failure.kind !== "transient" || retry >= limits.maxRetries || wait > MAX_RETRY_AFTER_MS) {
        const tries = retry > 0 ? `, after ${retry} ${retry === 1 ? "retry" : "retries"}` : "";
        return { ok: false, failure: { ...failure, message: `${failure.message}${tries}` } };
      }
      await sleep(wait, undefined, { signal: userSignal });
    }
  }
}

function backoff(retry: number): number {
  return Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** retry) * (1 - Math.random() * 0.25);
}

function timedOut(timeoutMs: number): Failure {
  return { kind: "transient", message: `no answer within ${timeoutMs / 1000} s`, retryAfterMs: null };
}

/** What the three clients' errors mean: the status and headers of an HTTP error, or a network code. */
function classify(error: unknown, endpoint: { provider: Provider; url: string }): Failure {
  const status = statusOf(error);
  const retryAfterMs = retryAfterOf(error);
  if (status !== undefined) {
    const detail = firstLine(messageOf(error));
    if (status === 401 || status === 403) {
      const key = endpoint.provider === "openai" ? "OPENAI_API_KEY" : endpoint.provider === "anthropic" ? "ANTHROPIC_API_KEY" : "the server's credentials";
      return { kind: "fatal", message: `authentication failed (HTTP ${status}): check ${key}`, retryAfterMs };
    }
    if (status === 404) return { kind: "fatal", message: `model or endpoint not found at ${endpoint.url} (HTTP 404): check --model and the base URL`, retryAfterMs };
    if (status === 429 && codeOf(error) === "insufficient_quota") return { kind: "fatal", message: "quota exhausted (HTTP 429 insufficient_quota)", retryAfterMs };
    if (status === 429) return { kind: "transient", message: "rate limited (HTTP 429)", retryAfterMs };
    if (status === 408 || status >= 500) return { kind: "transient", message: `server error (HTTP ${status}): ${detail}`, retryAfterMs };
    return { kind: "step", message: `request refused (HTTP ${status}): ${detail}`, retryAfterMs };
  }
  const codes = networkCodes(error);
  const unreachable = codes.find((code) => UNREACHABLE.has(code));
  if (unreachable) return { kind: "fatal", message: `cannot connect to ${endpoint.url} (${unreachable})`, retryAfterMs: null };
  // fetch refuses some addresses outright (ports it deems unsafe, malformed URLs): no retry will help.
  const refused = causeMessages(error).find((m) => /^(bad port|invalid url)/i.test(m));
  if (refused) return { kind: "fatal", message: `cannot connect to ${endpoint.url} (${refused})`, retryAfterMs: null };
  if (codes.length > 0 || /fetch failed|connection error|socket|terminated/i.test(messageOf(error))) {
    return { kind: "transient", message: `connection failed (${codes[0] ?? firstLine(messageOf(error))})`, retryAfterMs: null };
  }
  return { kind: "step", message: firstLine(messageOf(error)), retryAfterMs: null };
}

type Loose = { [key: string]: unknown } | undefined;

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null ? (value as Loose)?.[key] : undefined;
}

/** OpenAI and Anthropic errors carry `status`, Ollama's `status_code`. */
function statusOf(error: unknown): number | undefined {
  const status = field(error, "status") ?? field(error, "status_code");
  return typeof status === "number" ? status : undefined;
}

function codeOf(error: unknown): unknown {
  return field(error, "code") ?? field(field(error, "error"), "code");
}

function retryAfterOf(error: unknown): number | null {
  const headers = field(error, "headers");
  const header = (name: string): string | null => {
    if (headers instanceof Headers) return headers.get(name);
    const value = field(headers, name);
    return typeof value === "string" ? value : null;
  };
  const ms = Number(header("retry-after-ms") ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const seconds = Number(header("retry-after") ?? Number.NaN);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
}

/** Node's fetch hides the socket error a few `cause`s down. */
function networkCodes(error: unknown): string[] {
  const codes: string[] = [];
  for (let e = error, depth = 0; e !== undefined && depth < 5; e = field(e, "cause"), depth += 1) {
    const code = field(e, "code");
    // System and undici socket codes only; Node's ERR_* codes are bugs, not network trouble.
    if (typeof code === "string" && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) codes.push(code);
  }
  return codes;
}

function causeMessages(error: unknown): string[] {
  const messages: string[] = [];
  for (let e = error, depth = 0; e !== undefined && depth < 5; e = field(e, "cause"), depth += 1) messages.push(messageOf(e));
  return messages;
}

function messageOf(error: unknown): string {
  const message = field(error, "message");
  return typeof message === "string" ? message : String(error);
}

function firstLine(text: string): string {
  return text.split("\n")[0]?.trim() ?? "";
}
