/**
 * The built CLI's third-party code (LangGraph, LangChain, the providers, zod, marked) comes from
 * dist/vendor.cjs with V8's code cache (src/vendor-code.ts). From the user's side: an analysis
 * through each provider's real LangChain client, loaded from there, against a local server of its
 * protocol; the cache written once and then used as it is, written again by a run that needed
 * packages it did not hold; a damaged cache replaced, never fatal;
 * `DUMPDBG_CODE_CACHE=off` keeps none.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Report } from "../../src/report/schema.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { runCli } from "../helpers/cli.js";
import { requestedToolSchema, smallestInstance, startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeServer, type RecordedRequest } from "../helpers/fake-providers.js";

let dir: string;
let core: BuiltCore;
let server: FakeServer | null = null;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-vendor-"));
  core = await buildCore("null-deref");
});
afterEach(async () => {
  await server?.close();
  server = null;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Answers every structured request with the smallest instance its schema accepts. */
const schemaValid = (request: RecordedRequest) => ({ json: smallestInstance(requestedToolSchema(request) ?? request.body?.format ?? {}) });

function analyze(name: string, args: string[], env: Record<string, string>) {
  const cache = path.join(dir, `cache-${name}`);
  return runCli(["analyze", core.core, "--exe", core.exe, "--issue", "it crashed", "--json", "--out", path.join(dir, `out-${name}`), "--sessions-dir", path.join(dir, `sessions-${name}`), ...args], {
    env: { XDG_CACHE_HOME: cache, ...env },
  });
}

function cacheFiles(name: string): string[] {
  const folder = path.join(dir, `cache-${name}`, "dumpdbg", "v8");
  try {
    return readdirSync(folder).map((file) => path.join(folder, file));
  } catch {
    return [];
  }
}

const modelCalls = () => server?.requests.filter((r) => /\/chat\/completions$|\/api\/chat$|\/v1\/messages$/.test(r.path)) ?? [];

describe("the providers, loaded from dist/vendor.cjs", () => {
  it("OpenAI: the analysis asks the model through @langchain/openai and reports", async () => {
    server = await startFakeOpenAI(schemaValid);
    const result = await analyze("openai", ["--provider", "openai", "--model", "gpt-test"], { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: server.url });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.crash.kind).toBe("null-dereference");
    expect(modelCalls().length).toBeGreaterThan(0);
    expect(modelCalls()[0]!.body.model).toBe("gpt-test");
    expect(report.usage.llmCalls).toBeGreaterThan(0);
  });

  it("Anthropic: through @langchain/anthropic", async () => {
    server = await startFakeAnthropic(schemaValid);
    const result = await analyze("anthropic", ["--provider", "anthropic", "--model", "claude-test"], { ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: server.url });
    expect(result.code, result.stderr).toBe(0);
    expect(modelCalls().length).toBeGreaterThan(0);
    expect(modelCalls()[0]!.body.model).toBe("claude-test");
  });

  it("Ollama: through @langchain/ollama", async () => {
    server = await startFakeOllama(schemaValid, { models: ["qwen-test"] });
    const result = await analyze("ollama", ["--provider", "ollama", "--model", "qwen-test"], { OLLAMA_HOST: server.url });
    expect(result.code, result.stderr).toBe(0);
    expect(modelCalls().length).toBeGreaterThan(0);
    expect(modelCalls()[0]!.body.model).toBe("qwen-test");
  });
});

describe("the code cache", () => {
  it("is written by the first run and used, unchanged, by the next", async () => {
    const first = await analyze("cache", ["--provider", "offline"], {});
    expect(first.code, first.stderr).toBe(0);
    const [file] = cacheFiles("cache");
    expect(file).toMatch(/vendor-v\d+\.\d+\.\d+-[a-z0-9]+-[0-9a-f]{16}\.bin$/);
    const written = statSync(file!);
    expect(written.size).toBeGreaterThan(100_000);
    expect(written.mode & 0o777).toBe(0o600);

    const second = await analyze("cache", ["--provider", "offline"], {});
    expect(second.code, second.stderr).toBe(0);
    // Accepted by V8: not rewritten.
    expect(statSync(file!).mtimeMs).toBe(written.mtimeMs);
    expect(JSON.parse(second.stdout).crash).toEqual(JSON.parse(first.stdout).crash);
  });

  it("is written again with their code by a run that used packages it did not hold", async () => {
    const listed = await runCli(["sessions", "list", "--sessions-dir", path.join(dir, "sessions-grow")], { env: { XDG_CACHE_HOME: path.join(dir, "cache-grow") } });
    expect(listed.code, listed.stderr).toBe(0);
    const [file] = cacheFiles("grow");
    const header = () => JSON.parse(readFileSync(file!, "utf8").split("\n", 1)[0]!) as { packages: string[] };
    expect(header().packages).toContain("zod");
    expect(header().packages).not.toContain("@langchain/langgraph");
    const small = statSync(file!).size;

    const first = await analyze("grow", ["--provider", "offline"], {});
    expect(first.code, first.stderr).toBe(0);
    expect(header().packages).toEqual(expect.arrayContaining(["@langchain/langgraph", "@langchain/langgraph-checkpoint-sqlite", "zod"]));
    expect(statSync(file!).size).toBeGreaterThan(small);
    const grown = statSync(file!).mtimeMs;
    const second = await analyze("grow", ["--provider", "offline"], {});
    expect(second.code, second.stderr).toBe(0);
    expect(statSync(file!).mtimeMs).toBe(grown);
  });

  it("is replaced when damaged, and the run is not disturbed", async () => {
    const first = await analyze("damaged", ["--provider", "offline"], {});
    expect(first.code, first.stderr).toBe(0);
    const [file] = cacheFiles("damaged");
    // Its own header, then bytes V8 must reject.
    const header = readFileSync(file!, "utf8").split("\n", 1)[0]!;
    writeFileSync(file!, Buffer.concat([Buffer.from(`${header}\n`), Buffer.alloc(4096, 0x5a)]));
    const second = await analyze("damaged", ["--provider", "offline"], {});
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toMatch(/Error|^\s+at /m);
    expect(statSync(file!).size).toBeGreaterThan(100_000);
    expect(cacheFiles("damaged")).toEqual([file]);
  });

  it("is not kept with DUMPDBG_CODE_CACHE=off", async () => {
    const result = await analyze("off", ["--provider", "offline"], { DUMPDBG_CODE_CACHE: "off" });
    expect(result.code, result.stderr).toBe(0);
    expect(cacheFiles("off")).toEqual([]);
  });
});
