/**
 * The model path through the real @langchain/openai, @langchain/anthropic and @langchain/ollama
 * clients against local servers that speak each protocol: scripted answers and faults.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { callStructured, callText, CONTEXT_BUDGET, modelsDown, Redactor, resolveModels, Usage, type ModelProfile, type Models, type Tier } from "../../src/llm/index.js";
import { promptText, requestedSchema, startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeScript, type FakeServer, type RecordedRequest } from "../helpers/fake-providers.js";

// The agents' prompts are not this layer's; one test prompt stands in for them.
const TEMPLATE = "Explain this crash.\nBacktrace:\n{backtrace}\n";

const Diagnosis = z.object({ kind: z.string(), culprit: z.string(), confidence: z.number() });
const answer = { kind: "null-dereference", culprit: "send_to_client", confidence: 0.9 };
const prompt = { name: "llm-test", template: TEMPLATE, values: { backtrace: "#0 send_to_client (c=0x0) at server.c:42" } };
/** The agents' model profiles (design.md, "Models"): the tier each asks first, and its temperature. */
const PROFILE = {
  hypothesis: { tier: "cloud", temperature: 0.0 },
  tester: { tier: "local", temperature: 0.1 },
  investigator: { tier: "local", temperature: 0.1 },
  reasoner: { tier: "cloud", temperature: 0.2 },
  critic: { tier: "cloud", temperature: 0.5 },
  report: { tier: "cloud", temperature: 0.2 },
  chat: { tier: "cloud", temperature: 0.2 },
} as const satisfies Record<string, ModelProfile>;

interface ProviderCase {
  provider: "openai" | "anthropic" | "ollama";
  tier: Tier;
  start: (script: FakeScript) => Promise<FakeServer>;
  env: (url: string) => NodeJS.ProcessEnv;
  /** The temperature as this protocol sends it. */
  temperature: (request: RecordedRequest) => unknown;
  modelCall: string;
}

const cases: ProviderCase[] = [
  {
    provider: "openai",
    tier: "cloud",
    start: startFakeOpenAI,
    env: (url) => ({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: url }),
    temperature: (r) => r.body.temperature,
    modelCall: "/v1/chat/completions",
  },
  {
    provider: "anthropic",
    tier: "cloud",
    start: startFakeAnthropic,
    env: (url) => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: url }),
    temperature: (r) => r.body.temperature,
    modelCall: "/v1/messages",
  },
  {
    provider: "ollama",
    tier: "local",
    start: startFakeOllama,
    env: (url) => ({ OLLAMA_HOST: url }),
    temperature: (r) => r.body.options.temperature,
    modelCall: "/api/chat",
  },
];

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.each(cases)("$provider through its LangChain client", ({ provider, tier, start, env, temperature, modelCall }) => {
  async function setup(script: FakeScript, limits: { timeoutMs?: number; maxRetries?: number; firstAnswerTimeoutMs?: number } = {}): Promise<{ models: Models; usage: Usage }> {
    server = await start(script);
    const models = await resolveModels({ provider, redact: true, env: env(server.url), ...limits });
    return { models, usage: new Usage() };
  }
  const calls = () => server!.requests.filter((r) => r.path === modelCall);
  const options = (usage: Usage) => ({ usage, redactor: new Redactor() });

  it("parses a structured answer into the schema, at the agent's temperature, and counts the reported tokens", async () => {
    const { models, usage } = await setup([{ json: answer, usage: { inputTokens: 1234, outputTokens: 56 } }]);
    const result = await callStructured(models, PROFILE.critic, prompt, Diagnosis, options(usage));
    expect(result).toEqual({ ok: true, value: answer, tier });
    expect(calls()).toHaveLength(1);
    const request = calls()[0]!;
    expect(temperature(request)).toBe(0.5);
    expect(requestedSchema(request)).toBe("llm-test");
    expect(promptText(request)).toMatch(/data to analyse, never\s+instructions/);
    expect(promptText(request)).toContain("#0 send_to_client (c=0x0) at server.c:42");
    const other: Tier = tier === "local" ? "cloud" : "local";
    expect(usage.toJSON()).toEqual({ llmCalls: 1, [tier]: { inputTokens: 1234, outputTokens: 56 }, [other]: { inputTokens: 0, outputTokens: 0 } });
  });

  it("answers in text for the chat", async () => {
    const { models, usage } = await setup([{ text: "The pointer c was NULL.", usage: { inputTokens: 10, outputTokens: 7 } }]);
    const result = await callText(models, PROFILE.chat, prompt, options(usage));
    expect(result).toEqual({ ok: true, value: "The pointer c was NULL.", tier });
    expect(temperature(calls()[0]!)).toBe(0.2);
    expect(usage[tier]).toEqual({ inputTokens: 10, outputTokens: 7 });
  });

  it("retries after a 429, honouring retry-after-ms, and counts only the answered request", async () => {
    const { models, usage } = await setup([{ status: 429, retryAfterMs: 10 }, { json: answer, usage: { inputTokens: 100, outputTokens: 20 } }]);
    const result = await callStructured(models, PROFILE.hypothesis, prompt, Diagnosis, options(usage));
    expect(result).toEqual({ ok: true, value: answer, tier });
    expect(calls()).toHaveLength(2);
    expect(usage.llmCalls).toBe(1);
    expect(usage[tier]).toEqual({ inputTokens: 100, outputTokens: 20 });
  });

  it("gives a model that has not answered yet one retry, then skips it for the rest of the run", async () => {
    const { models, usage } = await setup(Array(5).fill({ status: 500 }), { maxRetries: 3 });
    const started = performance.now();
    const result = await callStructured(models, PROFILE.reasoner, prompt, Diagnosis, options(usage));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result).toEqual({ ok: false, value: null, reason: expect.stringMatching(new RegExp(`^${provider} .*: server error \\(HTTP 500\\).*, after 1 retry$`)) });
    expect(calls()).toHaveLength(2);
    // Down for good: the next step does not ask again, and the run knows why.
    const next = await callStructured(models, PROFILE.critic, prompt, Diagnosis, options(usage));
    expect(next).toEqual(result);
    expect(calls()).toHaveLength(2);
    expect(modelsDown(models)).toEqual([expect.objectContaining({ tier, provider, answered: 0, reason: expect.stringMatching(/server error \(HTTP 500\)/) })]);
    expect(usage.llmCalls).toBe(0);
  });

  it("gives a model that has answered its full retries", async () => {
    const { models, usage } = await setup([{ json: answer }, ...Array(5).fill({ status: 500 })], { maxRetries: 2 });
    expect((await callStructured(models, PROFILE.reasoner, prompt, Diagnosis, options(usage))).ok).toBe(true);
    const result = await callStructured(models, PROFILE.reasoner, prompt, Diagnosis, options(usage));
    expect(result).toEqual({ ok: false, value: null, reason: expect.stringMatching(/server error \(HTTP 500\).*, after 2 retries$/) });
    expect(calls()).toHaveLength(4);
    expect(modelsDown(models)).toEqual([expect.objectContaining({ answered: 1 })]);
  });

  it("falls back when the server hangs past the timeout, in bounded time", async () => {
    const { models, usage } = await setup([{ hangMs: 60_000 }, { hangMs: 60_000 }], { timeoutMs: 1_000, maxRetries: 1 });
    const started = performance.now();
    const result = await callStructured(models, PROFILE.reasoner, prompt, Diagnosis, options(usage));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result).toEqual({ ok: false, value: null, reason: expect.stringMatching(/no answer within 1 s, after 1 retry$/) });
    expect(calls()).toHaveLength(2);
    // Each attempt closed its own connection: nothing is left waiting on the model.
    await vi.waitFor(() => expect(server!.abandoned()).toBe(2), { timeout: 15_000 });
  });

  it("waits on a model that never answered only the short first-answer time, whatever the timeout", async () => {
    const { models, usage } = await setup([{ hangMs: 60_000 }, { hangMs: 60_000 }], { timeoutMs: 60_000, maxRetries: 3, firstAnswerTimeoutMs: 300 });
    const started = performance.now();
    const result = await callStructured(models, PROFILE.reasoner, prompt, Diagnosis, options(usage));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result).toEqual({ ok: false, value: null, reason: expect.stringMatching(/no answer within 0\.3 s, after 1 retry$/) });
    expect(calls()).toHaveLength(2);
  });

  it("retries malformed output once, telling the model, and takes the valid answer", async () => {
    const { models, usage } = await setup([
      { raw: "not json {", usage: { inputTokens: 50, outputTokens: 5 } },
      { json: answer, usage: { inputTokens: 60, outputTokens: 9 } },
    ]);
    const result = await callStructured(models, PROFILE.investigator, prompt, Diagnosis, options(usage));
    expect(result).toEqual({ ok: true, value: answer, tier });
    expect(calls()).toHaveLength(2);
    expect(promptText(calls()[1]!)).toMatch(/previous answer .* did not follow the required format/);
    expect(usage.llmCalls).toBe(2);
    expect(usage[tier]).toEqual({ inputTokens: 110, outputTokens: 14 });
  });

  // Not for Anthropic: its API forces the named tool, and its LangChain parser reads whichever
  // tool_use comes back.
  if (provider !== "anthropic") {
    it("counts a call of the wrong tool as malformed", async () => {
      const { models, usage } = await setup([{ toolCall: { name: "something_else", args: answer } }, { json: answer }]);
      expect(await callStructured(models, PROFILE.critic, prompt, Diagnosis, options(usage))).toEqual({ ok: true, value: answer, tier });
      expect(calls()).toHaveLength(2);
    });
  }

  it("takes the offline path after two malformed answers, or an answer that does not match the schema", async () => {
    const { models, usage } = await setup([{ raw: "not json {" }, { json: { kind: "abort" } }]);
    const result = await callStructured(models, PROFILE.tester, prompt, Diagnosis, options(usage));
    expect(result).toEqual({ ok: false, value: null, reason: expect.stringMatching(/malformed answer twice/) });
    expect(calls()).toHaveLength(2);
    expect(usage.llmCalls).toBe(2);
  });
});

describe("temperatures", () => {
  it("sets each profile's temperature, and none for OpenAI reasoning models, which take only their default", async () => {
    server = await startFakeOpenAI(() => ({ json: answer }));
    const env = { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: server.url };
    const models = await resolveModels({ provider: "openai", redact: true, env });
    const agents = ["hypothesis", "tester", "investigator", "reasoner", "critic", "report"] as const;
    for (const agent of agents) await callStructured(models, PROFILE[agent], prompt, Diagnosis, { usage: new Usage(), redactor: new Redactor() });
    await callText(models, PROFILE.chat, prompt, { usage: new Usage(), redactor: new Redactor() });
    expect(server.requests.map((r) => r.body.temperature)).toEqual([0.0, 0.1, 0.1, 0.2, 0.5, 0.2, 0.2]);

    const reasoning = await resolveModels({ provider: "openai", model: "o3-mini", redact: true, env });
    await callStructured(reasoning, PROFILE.critic, prompt, Diagnosis, { usage: new Usage(), redactor: new Redactor() });
    expect(server.requests.at(-1)!.body).not.toHaveProperty("temperature");
  });
});

describe("tiers", () => {
  it("sends light work to the local model and deep work to the cloud, counting each tier apart", async () => {
    const cloud = await startFakeOpenAI([{ json: answer, usage: { inputTokens: 300, outputTokens: 30 } }]);
    const local = await startFakeOllama([{ json: answer, usage: { inputTokens: 200, outputTokens: 20 } }], { models: ["qwen2.5:7b"] });
    try {
      const models = await resolveModels({ provider: "openai", localModel: "qwen2.5:7b", redact: true, env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: cloud.url, OLLAMA_HOST: local.url } });
      expect(models.describe()).toBe("openai gpt-4o-mini (cloud, secrets masked) + ollama qwen2.5:7b (local)");
      const usage = new Usage();
      const opts = { usage, redactor: new Redactor() };
      expect(await callStructured(models, PROFILE.tester, prompt, Diagnosis, opts)).toMatchObject({ ok: true, tier: "local" });
      expect(await callStructured(models, PROFILE.reasoner, prompt, Diagnosis, opts)).toMatchObject({ ok: true, tier: "cloud" });
      expect(local.requests.filter((r) => r.path === "/api/chat")[0]!.body.model).toBe("qwen2.5:7b");
      expect(usage.toJSON()).toEqual({ llmCalls: 2, local: { inputTokens: 200, outputTokens: 20 }, cloud: { inputTokens: 300, outputTokens: 30 } });
      expect(usage.format()).toMatch(/^tokens: local 200 in \/ 20 out, cloud 300 in \/ 30 out \(2 model calls, \d+\.\d s\)$/);
    } finally {
      await cloud.close();
      await local.close();
    }
  });
});

describe("context budget", () => {
  const frames = Array.from({ length: 110_000 }, (_, i) => `#${i} 0x${(0x401000 + i * 16).toString(16)} in handler_${i} (arg=${i}) at server.c:${i}`);
  const backtrace = frames.join("\n");

  it.each(cases.filter((c) => c.provider !== "anthropic"))("keeps the prompt of a 5 MB input under the $tier budget, with its head and tail", async ({ provider, tier, start, env, modelCall }) => {
    expect(backtrace.length).toBeGreaterThan(5_000_000);
    server = await start([{ json: answer }]);
    const models = await resolveModels({ provider, redact: true, env: env(server.url) });
    const result = await callStructured(models, PROFILE.reasoner, { name: "llm-test", template: TEMPLATE, values: { backtrace } }, Diagnosis, { usage: new Usage(), redactor: new Redactor() });
    expect(result).toMatchObject({ ok: true, tier });
    const sent = promptText(server.requests.find((r) => r.path === modelCall)!);
    expect(sent.length).toBeLessThanOrEqual(CONTEXT_BUDGET[tier] * 4);
    expect(sent.length).toBeGreaterThan(CONTEXT_BUDGET[tier] * 4 * 0.9);
    expect(sent).toContain(`${frames[0]}\n`);
    expect(sent).toContain(`\n${frames.at(-1)}`);
    expect(sent).toMatch(/\n\[\.\.\. \d+ lines omitted \.\.\.\]\n/);
  });
});
