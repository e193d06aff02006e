#!/usr/bin/env node
// bench/model-faults: `dumpdbg analyze` on a null-dereference core with the model a local server
// that speaks the OpenAI protocol and fails as models fail: it accepts requests and never answers,
// answers 500 or 429 to everything, or answers every schema with its smallest valid instance (a weak
// model). Prints each run's wall time, the requests the server saw, whether the report's conclusion
// is the offline engine's specific diagnosis, and the ratio to the same analysis offline.
import { spawn } from "node:child_process";
import http from "node:http";
import { join } from "node:path";
import { crashCore, freshOut, programs, requireBuild, root } from "./lib.mjs";

requireBuild("dumpdbg.cjs");
const out = freshOut("model-faults");
const { exe, core } = crashCore(out, "null-deref", join(programs, "null-deref.c"));
const bin = join(root, "bin", "dumpdbg.cjs");

function smallest(schema) {
  const s = schema ?? {};
  if (Array.isArray(s.enum)) return s.enum[0];
  const any = s.anyOf ?? s.oneOf;
  if (Array.isArray(any) && any.length) return smallest(any.find((o) => o.type === "null") ?? any[0]);
  const type = Array.isArray(s.type) ? (s.type.includes("null") ? "null" : s.type[0]) : s.type;
  if (type === "object") return Object.fromEntries((s.required ?? []).map((name) => [name, smallest((s.properties ?? {})[name])]));
  if (type === "array") return Array.from({ length: s.minItems ?? 0 }, () => smallest(s.items));
  if (type === "string") return "x".repeat(s.minLength ?? 0);
  if (type === "number" || type === "integer") return s.minimum ?? 0;
  return type === "boolean" ? false : null;
}

/** A server that fails in `mode`; resolves to its URL and a way to close it that reports its requests. */
function serve(mode) {
  let requests = 0;
  const held = new Set();
  const server = http.createServer((req, res) => {
    requests++;
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (mode === "hang") return held.add(res);
      if (mode === "500" || mode === "429") {
        res.writeHead(Number(mode), { "content-type": "application/json", ...(mode === "429" ? { "retry-after-ms": "200" } : {}) });
        return res.end(JSON.stringify({ error: { message: mode === "500" ? "overloaded" : "rate limited" } }));
      }
      const request = JSON.parse(body);
      const tool = request.tools?.[0]?.function;
      const message = tool
        ? { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: tool.name, arguments: JSON.stringify(smallest(tool.parameters)) } }] }
        : { role: "assistant", content: "x" };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "c", object: "chat.completion", created: 0, model: request.model, choices: [{ index: 0, message, finish_reason: tool ? "tool_calls" : "stop" }], usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/v1`,
        close: () => new Promise((done) => { for (const res of held) res.destroy(); server.close(() => done(requests)); }),
      }),
    ),
  );
}

function analyze(env, provider) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, "analyze", core, "--exe", exe, "--provider", provider, "--json", "--sessions-dir", join(out, "sessions"), "--out", join(out, "reports")], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (code) => resolve({ ms: performance.now() - started, code, report: code === 0 ? JSON.parse(stdout) : null, stderr }));
  });
}

const offline = await analyze({}, "offline");
const expected = offline.report.conclusion.summary.replace(/E\d+/g, "E");
console.log(`bench/model-faults: analyze of a null dereference; offline ${(offline.ms / 1000).toFixed(1)} s`);
for (const mode of ["hang", "500", "429", "weak"]) {
  const server = await serve(mode);
  const run = await analyze({ OPENAI_API_KEY: "sk-bench", OPENAI_BASE_URL: server.url }, "openai");
  const requests = await server.close();
  const same = run.report?.conclusion.summary.replace(/E\d+/g, "E") === expected;
  const down = /rest ran offline/.test(run.stderr) ? "; said the model was down" : "";
  console.log(`  ${mode.padEnd(5)} ${(run.ms / 1000).toFixed(1).padStart(6)} s  ratio ${(run.ms / offline.ms).toFixed(1).padStart(5)}  ${String(requests).padStart(2)} requests  conclusion ${same ? "= offline diagnosis" : "DIFFERS"}${down}`);
}
