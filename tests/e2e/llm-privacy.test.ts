/**
 * What leaves the machine: secrets masked in what a cloud provider receives, nothing masked for a
 * local model (it stays here), nothing sent at all offline, and no host contacted but the model's
 * own endpoint (no tokenizer download), even inside a LangGraph run streamed by messages.
 */
import dc from "node:diagnostics_channel";
import type { Socket } from "node:net";
import { networkInterfaces } from "node:os";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph/web";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { callStructured, Redactor, resolveModels, Usage } from "../../src/llm/index.js";
import { promptText, startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeServer } from "../helpers/fake-providers.js";

/** The reasoner's model profile: the cloud first, at its temperature. */
const REASONER = { tier: "cloud", temperature: 0.2 } as const;
const Finding = z.object({ finding: z.string() });
const answer = { json: { finding: "credentials in memory" }, usage: { inputTokens: 321, outputTokens: 12 } };

const secrets = {
  "openai-key": "sk-proj-Abc123Def456Ghi789Jkl012Mno345",
  "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
  "github-token": "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
  email: "alice.smith@example.com",
  jwt: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
  "private-key": "-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA7xQ3mZ9sK2pL\\n-----END RSA PRIVATE KEY-----",
  // A value of the dumped process's environment: no recognisable shape, masked because it is one.
  "env-value": "db-passw0rd-7f3a9c",
};

// As gdb prints them from the dumped process's memory.
const evidence = [
  `(gdb) x/s environ[3]\n0x7ffc8e2a1f3d:\t"OPENAI_API_KEY=${secrets["openai-key"]}"`,
  `$1 = 0x4052a0 "${secrets["aws-access-key"]}"`,
  `$2 = {token = 0x4052c0 "${secrets["github-token"]}", owner = "${secrets.email}", session = "${secrets.jwt}"}`,
  `$3 = 0x405300 "${secrets["private-key"]}"`,
  `$4 = {dsn = 0x405400 "${secrets["env-value"]}", port = 5432}`,
].join("\n");

const redactor = () => new Redactor({ envValues: [secrets["env-value"], "1", "xterm", "/bin/bash"] });
const prompt = { name: "llm-test", template: "What do these values tell?\n{evidence}\n", values: { evidence } };

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const cloudProviders = [
  { provider: "openai", start: startFakeOpenAI, env: (url: string) => ({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: url }) },
  { provider: "anthropic", start: startFakeAnthropic, env: (url: string) => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: url }) },
] as const;

describe.each(cloudProviders)("a cloud call ($provider)", ({ provider, start, env }) => {
  it("masks every planted secret in what the provider receives, and counts them by kind", async () => {
    const server = await start([answer]);
    servers.push(server);
    const models = await resolveModels({ provider, redact: true, env: env(server.url) });
    const masks = redactor();
    expect(await callStructured(models, REASONER, prompt, Finding, { usage: new Usage(), redactor: masks })).toMatchObject({ ok: true, tier: "cloud" });

    const sent = JSON.stringify(server.requests[0]!.body);
    for (const [kind, secret] of Object.entries(secrets)) {
      expect(sent, kind).not.toContain(secret);
      expect(sent).toContain(`[REDACTED:${kind}#1]`);
    }
    expect(sent).not.toContain("MIIEowIBAAKCAQEA7xQ3mZ9sK2pL");
    // What is not a secret still reaches the model: names, pointers, numbers.
    expect(promptText(server.requests[0]!)).toContain('$4 = {dsn = 0x405400 "[REDACTED:env-value#1]", port = 5432}');
    expect(masks.stats()).toEqual({ count: 7, kinds: Object.fromEntries(Object.keys(secrets).map((kind) => [kind, 1])) });
  });

  it("sends them as they are with --no-redact", async () => {
    const server = await start([answer]);
    servers.push(server);
    const models = await resolveModels({ provider, redact: false, env: env(server.url) });
    const masks = redactor();
    await callStructured(models, REASONER, prompt, Finding, { usage: new Usage(), redactor: masks });
    expect(promptText(server.requests[0]!)).toContain(evidence);
    expect(masks.stats().count).toBe(0);
  });
});

describe("a local call", () => {
  it("is not redacted: it stays on the machine", async () => {
    const server = await startFakeOllama([answer]);
    servers.push(server);
    const models = await resolveModels({ provider: "ollama", redact: true, env: { OLLAMA_HOST: server.url } });
    expect(models.describe()).toBe("ollama llama3.2:latest (local)");
    const masks = redactor();
    expect(await callStructured(models, REASONER, prompt, Finding, { usage: new Usage(), redactor: masks })).toMatchObject({ ok: true, tier: "local" });
    expect(promptText(server.requests.find((r) => r.path === "/api/chat")!)).toContain(evidence);
    expect(masks.stats().count).toBe(0);
  });

  // This machine's own address, reached as any other host would be.
  const external = Object.values(networkInterfaces())
    .flat()
    .find((address) => address?.family === "IPv4" && !address.internal)?.address;

  it.skipIf(external === undefined)("is redacted when OLLAMA_HOST is another machine", async () => {
    const server = await startFakeOllama([answer], { listen: "0.0.0.0" });
    servers.push(server);
    const host = server.url.replace("127.0.0.1", external!);
    const models = await resolveModels({ provider: "ollama", redact: true, env: { OLLAMA_HOST: host } });
    expect(models.describe()).toBe("ollama llama3.2:latest (local, secrets masked)");
    const masks = redactor();
    expect(await callStructured(models, REASONER, prompt, Finding, { usage: new Usage(), redactor: masks })).toMatchObject({ ok: true, tier: "local" });
    const sent = promptText(server.requests.find((r) => r.path === "/api/chat")!);
    for (const secret of Object.values(secrets)) expect(sent).not.toContain(secret);
    expect(masks.stats().count).toBe(7);
  });
});

/** Every HTTP request (Node's fetch) and every TCP connection the process makes while `run` runs. */
async function contacted(run: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const onRequest = (message: unknown) => {
    const { request } = message as { request: { origin: string } };
    seen.push(`fetch ${request.origin}`);
  };
  const onSocket = (message: unknown) => {
    const { socket } = message as { socket: Socket };
    seen.push("socket");
    socket.once("connect", () => (seen[seen.indexOf("socket")] = `socket ${socket.remoteAddress}:${socket.remotePort}`));
  };
  dc.subscribe("undici:request:create", onRequest);
  dc.subscribe("net.client.socket", onSocket);
  try {
    await run();
  } finally {
    dc.unsubscribe("undici:request:create", onRequest);
    dc.unsubscribe("net.client.socket", onSocket);
  }
  return seen;
}

describe("nothing is fetched but the model endpoint", () => {
  it("offline sends nothing at all", async () => {
    const seen = await contacted(async () => {
      const models = await resolveModels({ provider: "offline", redact: true, env: { OPENAI_API_KEY: "sk-x" } });
      expect(await callStructured(models, REASONER, prompt, Finding, { usage: new Usage(), redactor: redactor() })).toEqual({ ok: false, value: null, reason: "offline: no model configured" });
    });
    expect(seen).toEqual([]);
  });

  const all = [
    ...cloudProviders,
    { provider: "ollama", start: startFakeOllama, env: (url: string) => ({ OLLAMA_HOST: url }) },
  ] as const;

  it.each(all)("$provider, inside a LangGraph run streamed by messages, reaches only its server and counts the reported tokens", async ({ provider, start, env }) => {
    const server = await start([answer]);
    servers.push(server);
    const usage = new Usage();
    let finding: string | null = null;
    const seen = await contacted(async () => {
      const models = await resolveModels({ provider, redact: true, env: env(server.url) });
      const State = Annotation.Root({ finding: Annotation<string | null>() });
      const graph = new StateGraph(State)
        .addNode("reasoner", async () => {
          const result = await callStructured(models, REASONER, prompt, Finding, { usage, redactor: redactor() });
          finding = result.value?.finding ?? null;
          return { finding };
        })
        .addEdge(START, "reasoner")
        .addEdge("reasoner", END)
        .compile();
      // streamMode "messages" makes chat models stream, the path where LangChain estimates tokens
      // with a tokenizer it downloads.
      for await (const _ of await graph.stream({ finding: null }, { streamMode: "messages" }));
    });
    expect(finding).toBe("credentials in memory");
    const port = new URL(server.url).port;
    expect(seen.length).toBeGreaterThan(0);
    for (const contact of seen) expect(contact).toMatch(new RegExp(`^(fetch http://127\\.0\\.0\\.1:${port}|socket 127\\.0\\.0\\.1:${port})$`));
    expect(usage.toJSON()[provider === "ollama" ? "local" : "cloud"]).toEqual({ inputTokens: 321, outputTokens: 12 });
  });
});
