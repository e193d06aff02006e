/**
 * The built CLI is a CommonJS script, dist/dumpdbg.cjs (dist/dumpdbg-lean.cjs for the commands that
 * run no agents), run with V8's code cache (src/code-cache.ts). From the user's side: an analysis
 * through each provider's real LangChain client, bundled there, against a local server of its
 * protocol; each command's cache written once and then used as it is, written again by a run that
 * used code it did not hold (a provider); a damaged cache replaced, never fatal; the caches of
 * earlier versions removed; `DUMPDBG_CODE_CACHE=off` keeps none.
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
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
  dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-code-cache-"));
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

describe("the providers, bundled in dist/dumpdbg.cjs", () => {
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

const CACHE_NAME = /cli-[0-9a-f]{16}-v\d+\.\d+\.\d+-[a-z0-9]+-(\w+)\.bin$/;
const header = (file: string) => JSON.parse(readFileSync(file, "utf8").split("\n", 1)[0]!) as { uses: string[] };

describe("the code cache", () => {
  it("is written by a command's first run and used, unchanged, by the next", async () => {
    const first = await analyze("cache", ["--provider", "offline"], {});
    expect(first.code, first.stderr).toBe(0);
    const [file] = cacheFiles("cache");
    expect(file).toMatch(CACHE_NAME);
    expect(CACHE_NAME.exec(file!)![1]).toBe("analyze");
    const written = statSync(file!);
    expect(written.size).toBeGreaterThan(1_000_000);
    expect(written.mode & 0o777).toBe(0o600);

    const second = await analyze("cache", ["--provider", "offline"], {});
    expect(second.code, second.stderr).toBe(0);
    // Accepted by V8: not rewritten.
    expect(statSync(file!).mtimeMs).toBe(written.mtimeMs);
    expect(JSON.parse(second.stdout).crash).toEqual(JSON.parse(first.stdout).crash);
  });

  it("keeps one cache per command: triage's holds none of the analysis", async () => {
    const triage = await runCli(["triage", core.core, "--exe", core.exe, "--json"], { env: { XDG_CACHE_HOME: path.join(dir, "cache-commands") } });
    expect(triage.code, triage.stderr).toBe(0);
    const analysed = await analyze("commands", ["--provider", "offline"], {});
    expect(analysed.code, analysed.stderr).toBe(0);
    const byCommand = Object.fromEntries(cacheFiles("commands").map((file) => [CACHE_NAME.exec(file)![1], statSync(file).size]));
    expect(Object.keys(byCommand).sort()).toEqual(["analyze", "triage"]);
    expect(byCommand.triage!).toBeLessThan(byCommand.analyze! * 0.7);
  });

  it("is written again with its code by a run that used a provider it did not hold", async () => {
    const offline = await analyze("grow", ["--provider", "offline"], {});
    expect(offline.code, offline.stderr).toBe(0);
    const [file] = cacheFiles("grow");
    expect(header(file!).uses).toEqual(["analyze"]);
    const small = statSync(file!).size;

    server = await startFakeOpenAI(schemaValid);
    const env = { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: server.url };
    const first = await analyze("grow", ["--provider", "openai", "--model", "gpt-test"], env);
    expect(first.code, first.stderr).toBe(0);
    expect(header(file!).uses).toEqual(["analyze", "openai"]);
    expect(statSync(file!).size).toBeGreaterThan(small);
    const grown = statSync(file!).mtimeMs;
    const second = await analyze("grow", ["--provider", "openai", "--model", "gpt-test"], env);
    expect(second.code, second.stderr).toBe(0);
    expect(statSync(file!).mtimeMs).toBe(grown);
    // An offline run needs nothing the cache lacks.
    const third = await analyze("grow", ["--provider", "offline"], {});
    expect(third.code, third.stderr).toBe(0);
    expect(statSync(file!).mtimeMs).toBe(grown);
  });

  it("is kept only from a run that ended well, and one that never ran the command stands for nothing", async () => {
    const env = { env: { XDG_CACHE_HOME: path.join(dir, "cache-help") } };
    const failed = await runCli(["analyze", path.join(dir, "no-such.core"), "--provider", "offline"], env);
    expect(failed.code).toBe(3);
    expect(cacheFiles("help")).toEqual([]);
    const help = await runCli(["analyze", "--help"], env);
    expect(help.code, help.stderr).toBe(0);
    const [file] = cacheFiles("help");
    expect(CACHE_NAME.exec(file!)![1]).toBe("analyze");
    expect(header(file!).uses).toEqual([]);
    const helpOnly = statSync(file!).size;
    const analysed = await analyze("help", ["--provider", "offline"], {});
    expect(analysed.code, analysed.stderr).toBe(0);
    expect(header(file!).uses).toEqual(["analyze"]);
    expect(statSync(file!).size).toBeGreaterThan(helpOnly * 2);
  });

  it("is replaced when damaged, and the run is not disturbed", async () => {
    const first = await analyze("damaged", ["--provider", "offline"], {});
    expect(first.code, first.stderr).toBe(0);
    const [file] = cacheFiles("damaged");
    // Its own header, then bytes V8 must reject.
    writeFileSync(file!, Buffer.concat([Buffer.from(`${JSON.stringify(header(file!))}\n`), Buffer.alloc(4096, 0x5a)]));
    const second = await analyze("damaged", ["--provider", "offline"], {});
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toMatch(/Error|^\s+at /m);
    expect(statSync(file!).size).toBeGreaterThan(1_000_000);
    expect(cacheFiles("damaged")).toEqual([file]);
  });

  it("removes the caches earlier versions of dumpdbg left", async () => {
    const folder = path.join(dir, "cache-old", "dumpdbg", "v8");
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    chmodSync(path.join(dir, "cache-old", "dumpdbg"), 0o700);
    const old = path.join(folder, "vendor-v20.0.0-x64-0123456789abcdef.bin");
    writeFileSync(old, "{}\n", { mode: 0o600 });
    const result = await analyze("old", ["--provider", "offline"], {});
    expect(result.code, result.stderr).toBe(0);
    expect(cacheFiles("old").map((file) => CACHE_NAME.exec(file)?.[1])).toEqual(["analyze"]);
  });

  it("is code V8 runs: one that others may write, or a link in its place, is not used, and is replaced", async () => {
    const first = await analyze("unsafe", ["--provider", "offline"], {});
    expect(first.code, first.stderr).toBe(0);
    const [file] = cacheFiles("unsafe");
    // A good cache, but writable by anyone: used, V8 would accept it and it would stay as it is.
    chmodSync(file!, 0o666);
    const writable = await analyze("unsafe", ["--provider", "offline"], {});
    expect(writable.code, writable.stderr).toBe(0);
    expect(statSync(file!).mode & 0o777).toBe(0o600);
    expect(statSync(file!).size).toBeGreaterThan(1_000_000);

    // A link to a good cache of the user's: followed, it would be used and stay a link. Not followed,
    // the link itself is replaced; its target is untouched.
    const target = path.join(dir, "not-a-cache.bin");
    writeFileSync(target, readFileSync(file!), { mode: 0o600 });
    const before = readFileSync(target);
    rmSync(file!);
    symlinkSync(target, file!);
    const linked = await analyze("unsafe", ["--provider", "offline"], {});
    expect(linked.code, linked.stderr).toBe(0);
    expect(lstatSync(file!).isFile()).toBe(true);
    expect(readFileSync(target).equals(before)).toBe(true);
  });

  it("is not kept with DUMPDBG_CODE_CACHE=off", async () => {
    const result = await analyze("off", ["--provider", "offline"], { DUMPDBG_CODE_CACHE: "off" });
    expect(result.code, result.stderr).toBe(0);
    expect(cacheFiles("off")).toEqual([]);
  });
});
