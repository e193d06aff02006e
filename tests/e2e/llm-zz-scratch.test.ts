import { it, vi } from "vitest";
import { z } from "zod";
import { callStructured, Redactor, resolveModels, Usage } from "../../src/llm/index.js";
import { startFakeOpenAI, startFakeOllama } from "../helpers/fake-providers.js";
vi.mock("../../src/llm/prompts.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/llm/prompts.js")>();
  return { ...original, loadPrompt: (name: string) => (name === "llm-test" ? "Explain.\n{backtrace}\n" : original.loadPrompt(name)) };
});
const S = z.object({ kind: z.string() });
it("hang", async () => {
  const s = await startFakeOpenAI([{ hangMs: 60000 }, { hangMs: 60000 }]);
  const models = await resolveModels({ provider: "openai", redact: true, timeoutMs: 300, maxRetries: 1, env: { OPENAI_API_KEY: "x", OPENAI_BASE_URL: s.url } });
  const t0 = performance.now();
  const r = await callStructured(models, "critic", { template: "llm-test", values: { backtrace: "bt" } }, S, { usage: new Usage(), redactor: new Redactor() });
  console.log(JSON.stringify(r), performance.now() - t0 | 0);
  for (let i = 0; i < 10; i++) { console.log("conns", await s.openConnections(), performance.now() - t0 | 0); await new Promise((r) => setTimeout(r, 500)); }
  await s.close();
}, 20000);
