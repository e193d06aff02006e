/**
 * Which provider a run uses (`auto` from the environment, with a real probe of a fake Ollama), and
 * what happens when a provider cannot be used at all: an error (exit 5) when the user named it, the
 * offline path under `auto`.
 */
import { createServer } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { callStructured, ProviderError, Redactor, resolveModels, Usage, type Models } from "../../src/llm/index.js";
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeServer } from "../helpers/fake-providers.js";

const Verdict = z.object({ verdict: z.string() });
const prompt = { name: "llm-test", template: "Explain this crash.\n{backtrace}\n", values: { backtrace: "#0 main () at main.c:3" } };
/** The reasoner's model profile: the cloud first, at its temperature. */
const REASONER = { tier: "cloud", temperature: 0.2 } as const;
const call = (models: Models, usage = new Usage()) => callStructured(models, REASONER, prompt, Verdict, { usage, redactor: new Redactor() });

const servers: FakeServer[] = [];
async function running<T extends FakeServer>(server: Promise<T>): Promise<T> {
  servers.push(await server);
  return servers[servers.length - 1] as T;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A port nothing listens on: connecting to it is refused at once. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe("auto", () => {
  it("picks OpenAI when OPENAI_API_KEY is set, without probing Ollama", async () => {
    const ollama = await running(startFakeOllama([]));
    const models = await resolveModels({ provider: "auto", redact: true, env: { OPENAI_API_KEY: "sk-x", ANTHROPIC_API_KEY: "a", OLLAMA_HOST: ollama.url } });
    expect(models).toMatchObject({ provider: "openai", strict: false, local: null, cloud: { tier: "cloud", provider: "openai", model: "gpt-4o-mini", url: "https://api.openai.com/v1" } });
    expect(ollama.requests).toHaveLength(0);
  });

  it("picks Anthropic when only ANTHROPIC_API_KEY is set", async () => {
    const models = await resolveModels({ provider: "auto", model: "claude-haiku-4-5", redact: true, env: { ANTHROPIC_API_KEY: "a", OLLAMA_HOST: await closedPort() } });
    expect(models).toMatchObject({ provider: "anthropic", cloud: { provider: "anthropic", model: "claude-haiku-4-5" } });
  });

  it("picks Ollama when it answers at OLLAMA_HOST, with its first installed model", async () => {
    const ollama = await running(startFakeOllama([], { models: ["qwen2.5:7b", "llama3.2:latest"] }));
    // OLLAMA_HOST as people write it: no scheme.
    const models = await resolveModels({ provider: "auto", redact: true, env: { OLLAMA_HOST: ollama.url.replace("http://", "") } });
    expect(models).toMatchObject({ provider: "ollama", cloud: null, local: { tier: "local", provider: "ollama", model: "qwen2.5:7b", url: ollama.url } });
    expect(models.describe()).toBe("ollama qwen2.5:7b (local)");
    expect(ollama.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /api/tags"]);
  });

  it("is offline, quickly, when nothing is configured and Ollama is not answering", async () => {
    const started = performance.now();
    const models = await resolveModels({ provider: "auto", redact: true, env: { OLLAMA_HOST: await closedPort() } });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(models).toMatchObject({ provider: "offline", cloud: null, local: null });
    expect(models.describe()).toBe("offline (no model)");
    expect(await call(models)).toEqual({ ok: false, value: null, reason: "offline: no model configured" });
  });

  it("is offline when Ollama answers but has no model", async () => {
    const ollama = await running(startFakeOllama([], { models: [] }));
    expect((await resolveModels({ provider: "auto", redact: true, env: { OLLAMA_HOST: ollama.url } })).provider).toBe("offline");
  });

  it("goes on without a --local-model that Ollama does not have, and says so", async () => {
    const ollama = await running(startFakeOllama([], { models: ["llama3.2:latest"] }));
    const models = await resolveModels({ provider: "auto", localModel: "qwen2.5:7b", redact: true, env: { OPENAI_API_KEY: "sk-x", OLLAMA_HOST: ollama.url } });
    expect(models.local).toBeNull();
    expect(models.describe()).toBe(
      `openai gpt-4o-mini (cloud, secrets masked); local model not used: model "qwen2.5:7b" is not installed in Ollama at ${ollama.url}: run \`ollama pull qwen2.5:7b\``,
    );
  });
});

describe("a provider the user named", () => {
  it("fails at once without its key", async () => {
    await expect(resolveModels({ provider: "openai", redact: true, env: {} })).rejects.toThrow(new ProviderError("--provider openai needs OPENAI_API_KEY to be set (any value for an OpenAI-compatible server that takes none)"));
    await expect(resolveModels({ provider: "anthropic", redact: true, env: {} })).rejects.toThrow(ProviderError);
  });

  it("fails at once when Ollama is not answering, or lacks the model", async () => {
    await expect(resolveModels({ provider: "ollama", redact: true, env: { OLLAMA_HOST: await closedPort() } })).rejects.toThrow(/^Ollama is not answering at http:\/\/127\.0\.0\.1:\d+: start it with `ollama serve` or set OLLAMA_HOST$/);
    const ollama = await running(startFakeOllama([], { models: ["llama3.2:latest"] }));
    await expect(resolveModels({ provider: "ollama", model: "mistral", redact: true, env: { OLLAMA_HOST: ollama.url } })).rejects.toThrow(/model "mistral" is not installed/);
    await expect(resolveModels({ provider: "openai", localModel: "mistral", redact: true, env: { OPENAI_API_KEY: "sk-x", OLLAMA_HOST: ollama.url } })).rejects.toThrow(ProviderError);
    // "llama3.2" is how people name "llama3.2:latest".
    expect((await resolveModels({ provider: "ollama", model: "llama3.2", redact: true, env: { OLLAMA_HOST: ollama.url } })).local?.model).toBe("llama3.2");
  });

  it("throws a ProviderError when the key is refused (HTTP 401), without retrying", async () => {
    const openai = await running(startFakeOpenAI([{ status: 401, message: "Incorrect API key provided" }]));
    const models = await resolveModels({ provider: "openai", redact: true, env: { OPENAI_API_KEY: "sk-bad", OPENAI_BASE_URL: openai.url } });
    await expect(call(models)).rejects.toThrow(new ProviderError("openai gpt-4o-mini: authentication failed (HTTP 401): check OPENAI_API_KEY"));
    expect(openai.requests).toHaveLength(1);
  });

  it("throws a ProviderError when the server refuses connections", async () => {
    const models = await resolveModels({ provider: "anthropic", redact: true, env: { ANTHROPIC_API_KEY: "a", ANTHROPIC_BASE_URL: await closedPort() } });
    await expect(call(models)).rejects.toThrow(/^anthropic claude-sonnet-4-5: cannot connect to http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)$/);
  });

  it("does not turn a step's failure into an error: a refused request (HTTP 400) falls back, unretried", async () => {
    const anthropic = await running(startFakeAnthropic([{ status: 400, message: "prompt is malformed" }]));
    const models = await resolveModels({ provider: "anthropic", redact: true, env: { ANTHROPIC_API_KEY: "a", ANTHROPIC_BASE_URL: anthropic.url } });
    expect(await call(models)).toEqual({ ok: false, value: null, reason: expect.stringMatching(/^anthropic claude-sonnet-4-5: request refused \(HTTP 400\): .*prompt is malformed/) });
    expect(anthropic.requests).toHaveLength(1);
  });
});

describe("under auto, a provider that cannot be used", () => {
  it("is dropped for the rest of the run: deep work moves to the local model, and nothing more goes to the dead one", async () => {
    const openai = await running(startFakeOpenAI([{ status: 401 }]));
    const ollama = await running(startFakeOllama([{ json: { verdict: "local" } }, { json: { verdict: "local again" } }], { models: ["qwen2.5:7b"] }));
    const models = await resolveModels({ provider: "auto", localModel: "qwen2.5:7b", redact: true, env: { OPENAI_API_KEY: "sk-bad", OPENAI_BASE_URL: openai.url, OLLAMA_HOST: ollama.url } });
    expect(await call(models)).toEqual({ ok: true, value: { verdict: "local" }, tier: "local" });
    expect(await call(models)).toEqual({ ok: true, value: { verdict: "local again" }, tier: "local" });
    expect(openai.requests).toHaveLength(1);
  });

  it("leaves the step to the offline path when there is no other tier", async () => {
    const models = await resolveModels({ provider: "auto", redact: true, env: { OPENAI_API_KEY: "sk-x", OPENAI_BASE_URL: `${await closedPort()}/v1` } });
    expect(await call(models)).toEqual({ ok: false, value: null, reason: expect.stringMatching(/^openai gpt-4o-mini: cannot connect to .* \(ECONNREFUSED\)$/) });
    expect(await call(models)).toEqual({ ok: false, value: null, reason: expect.stringMatching(/ECONNREFUSED/) });
  });
});

describe("the offline provider", () => {
  it("uses no model, not even a --local-model, and asks Ollama nothing", async () => {
    const ollama = await running(startFakeOllama([]));
    const models = await resolveModels({ provider: "offline", localModel: "llama3.2", redact: true, env: { OPENAI_API_KEY: "sk-x", OLLAMA_HOST: ollama.url } });
    expect(models).toMatchObject({ provider: "offline", cloud: null, local: null });
    expect(ollama.requests).toHaveLength(0);
  });
});

describe("Ctrl+C", () => {
  it("aborts a call at once and propagates; it is not a fallback", async () => {
    const openai = await running(startFakeOpenAI([{ hangMs: 60_000 }]));
    const models = await resolveModels({ provider: "openai", redact: true, env: { OPENAI_API_KEY: "sk-x", OPENAI_BASE_URL: openai.url } });
    const controller = new AbortController();
    const pending = callStructured(models, REASONER, prompt, Verdict, { usage: new Usage(), redactor: new Redactor(), signal: controller.signal });
    await vi.waitFor(() => expect(openai.requests).toHaveLength(1));
    const started = performance.now();
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
