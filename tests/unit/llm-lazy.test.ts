/**
 * The offline path and `dumpdbg --version` never load a provider package: importing the model
 * layer, resolving an offline run and calling a model there import none of them.
 */
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";

const loaded = vi.hoisted(() => [] as string[]);
vi.mock("@langchain/openai", () => {
  loaded.push("@langchain/openai");
  return { ChatOpenAI: class {} };
});
vi.mock("@langchain/anthropic", () => {
  loaded.push("@langchain/anthropic");
  return { ChatAnthropic: class {} };
});
vi.mock("@langchain/ollama", () => {
  loaded.push("@langchain/ollama");
  return { ChatOllama: class {} };
});

describe("provider packages", () => {
  it("are not loaded by importing the model layer, nor by an offline run", async () => {
    const { callStructured, callText, Redactor, resolveModels, Usage } = await import("../../src/llm/index.js");
    const models = await resolveModels({ provider: "offline", redact: true, env: {} });
    const options = { usage: new Usage(), redactor: new Redactor() };
    const prompt = { name: "lazy", template: "Nothing to fill.", values: {} };
    expect(await callStructured(models, { tier: "cloud", temperature: 0.2 }, prompt, z.object({ a: z.string() }), options)).toEqual({ ok: false, value: null, reason: "offline: no model configured" });
    expect(await callText(models, { tier: "cloud", temperature: 0.2 }, prompt, options)).toEqual({ ok: false, value: null, reason: "offline: no model configured" });
    // Resolving a cloud provider does not load it either: only its first use does.
    const openai = await resolveModels({ provider: "openai", redact: true, env: { OPENAI_API_KEY: "sk-x" } });
    expect(loaded).toEqual([]);

    await openai.cloud!.chat(0);
    expect(loaded).toEqual(["@langchain/openai"]);
  });
});
