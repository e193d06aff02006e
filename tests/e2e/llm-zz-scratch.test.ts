import { it, vi } from "vitest";
import { z } from "zod";
import { callStructured, Redactor, resolveModels, Usage } from "../../src/llm/index.js";
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI } from "../helpers/fake-providers.js";
vi.mock("../../src/llm/prompts.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/llm/prompts.js")>();
  return { ...original, loadPrompt: (name: string) => (name === "llm-test" ? "Explain.\n{backtrace}\n" : original.loadPrompt(name)) };
});
const S = z.object({ kind: z.string(), n: z.number().optional() }).describe("A diagnosis");
it("dumps", async () => {
  for (const [start, env] of [[startFakeOpenAI, (u: string) => ({ OPENAI_API_KEY: "sk-x", OPENAI_BASE_URL: u })], [startFakeAnthropic, (u: string) => ({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: u })], [startFakeOllama, (u: string) => ({ OLLAMA_HOST: u })]] as const) {
    const s = await start([{ json: { kind: "x" } }]);
    const models = await resolveModels({ provider: "auto", redact: true, env: env(s.url) });
    const r = await callStructured(models, "critic", { template: "llm-test", values: { backtrace: "bt" } }, S, { usage: new Usage(), redactor: new Redactor() });
    console.log(JSON.stringify(r), JSON.stringify(s.requests.map(q => ({ p: q.path, h: q.headers, b: q.body })), null, 1));
    await s.close();
  }
});
