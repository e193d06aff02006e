#!/usr/bin/env node
// bench/analyze: `dumpdbg analyze --provider offline` on a typical core (one thread, a null
// dereference) against `gdb -batch` running triage's commands as -ex (the floor: gdb alone, no
// analysis), and the prompt size of every model call on that core and on a core of 1,000 threads,
// with a local server in the OpenAI protocol standing in for the model. Prints what this one run
// measured (medians of BENCH_RUNS runs); prompt tokens are estimated at 4 characters a token, as
// the model layer budgets them.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import os from "node:os";
import { join } from "node:path";
import { crashCore as crashCoreIn, freshOut, median, programs, requireBuild, root } from "./lib.mjs";

const runs = Number(process.env.BENCH_RUNS ?? 3);
const bin = join(root, "bin", "dumpdbg.cjs");
requireBuild("internals.cjs");
const { triage } = await import(join(root, "dist", "internals.cjs"));
const { GdbSession } = await import(join(root, "dist", "internals.cjs"));
const { askSession } = await import(join(root, "dist", "internals.cjs"));
const out = freshOut("analyze");
const crashCore = (name, source) => crashCoreIn(out, name, source);

const typical = crashCore("null-deref", join(programs, "null-deref.c"));
const manySource = join(out, "many-threads-1000.c");
writeFileSync(manySource, readFileSync(join(programs, "many-threads.c"), "utf8").replace(/#define CONNECTIONS \d+/, "#define CONNECTIONS 1000"));
const many = crashCore("many-threads-1000", manySource);


function cli(args, env = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve({ stdout, ms: performance.now() - started }) : reject(new Error(`dumpdbg ${args[0]} exited ${code}:\n${stderr}`))));
  });
}

async function analyzeOnce({ exe, core }, provider, env) {
  const scratch = mkdtempSync(join(os.tmpdir(), "dumpdbg-bench-"));
  try {
    const { stdout, ms } = await cli(["analyze", core, "--exe", exe, "--provider", provider, "--json", "--out", join(scratch, "reports"), "--sessions-dir", join(scratch, "sessions")], env);
    return { report: JSON.parse(stdout), ms };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function triageCommands({ exe, core }) {
  const session = new GdbSession({ dump: core, executable: exe });
  await session.open();
  try {
    return (await triage(askSession(session))).commands;
  } finally {
    await session.close();
  }
}

function gdbBatch({ exe, core }, commands) {
  const args = ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-iex", "set pagination off", "-iex", "set width 0"];
  const started = performance.now();
  const result = spawnSync("gdb", [...args, ...commands.flatMap((c) => ["-ex", c]), exe, core], { stdio: "ignore" });
  if (result.status !== 0) throw new Error(`gdb -batch failed on ${core}`);
  return performance.now() - started;
}

/** A server in the OpenAI protocol that answers each agent's structured request and records the prompts' sizes. */
async function fakeModel() {
  const prompts = [];
  const answers = {
    hypothesis: { hypotheses: [{ statement: "the pointer read at the pc was NULL", commands: ["info locals", "info args"] }] },
    tester: { commands: ["info locals", "info args"] },
    evaluator: { status: "confirmed", finding: "It printed 0x0 (E1).", evidenceIds: ["E1"] },
    investigator: { commands: ["frame apply level 1 -q info locals"] },
    reasoner: { summary: "A NULL pointer was read (E1).", rootCause: "It was never set (E1).", confidence: 0.8, recommendations: ["Check it."], evidenceIds: ["E1"] },
    critic: { issues: [{ issue: "The other threads were not examined.", commands: ["info threads"], question: "Is the data shared?" }] },
    responder: { commands: ["info threads"] },
    report: { questions: ["Is the data shared?", "Does it reproduce?", "Since when?"] },
  };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const request = JSON.parse(body);
      const name = request.tool_choice?.function?.name;
      const chars = request.messages.reduce((n, m) => n + (typeof m.content === "string" ? m.content.length : 0), 0);
      prompts.push({ name, tokens: Math.ceil(chars / 4) });
      const call = { id: "call_bench", type: "function", function: { name, arguments: JSON.stringify(answers[name]) } };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "b", object: "chat.completion", created: 0, model: request.model, choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: "tool_calls" }], usage: { prompt_tokens: Math.ceil(chars / 4), completion_tokens: 20, total_tokens: Math.ceil(chars / 4) + 20 } }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/v1`, prompts, close: () => new Promise((resolve) => server.close(resolve)) };
}

console.log(`bench/analyze: medians of ${runs} runs`);

const analyses = [];
const batches = [];
const commands = await triageCommands(typical);
for (let run = 0; run < runs; run++) {
  analyses.push(await analyzeOnce(typical, "offline"));
  batches.push(gdbBatch(typical, commands));
}
const last = analyses.at(-1).report;
const total = median(analyses.map((a) => a.ms));
const floor = median(batches);
console.log(`typical core (null-deref): ${last.crash.kind} in ${last.crash.culprit.function}; ${last.evidence.length} evidence, ${last.hypotheses.length} hypotheses, ${last.critique.rounds.length} critic rounds`);
console.log(`  dumpdbg analyze --provider offline (process wall time)   ${total.toFixed(0)} ms`);
console.log(`    of which: the report's totalMs ${median(analyses.map((a) => a.report.timings.totalMs)).toFixed(0)} ms, debugger ${median(analyses.map((a) => a.report.timings.debuggerMs)).toFixed(0)} ms`);
const loads = [];
for (let run = 0; run < runs; run++) {
  const started = performance.now();
  spawnSync(process.execPath, ["-e", `await (await import(${JSON.stringify(join(root, "dist", "internals.cjs"))})).loadAnalysis()`, "--input-type=module"]);
  loads.push(performance.now() - started);
}
console.log(`    Node start and module load (LangGraph, LangChain core) ${median(loads).toFixed(0)} ms of it`);
console.log(`  gdb -batch, triage's ${commands.length} commands as -ex (the floor)  ${floor.toFixed(0)} ms`);
console.log(`  ratio analyze / gdb -batch                                ${(total / floor).toFixed(2)}`);

for (const [label, dump] of [["typical core (1 thread)", typical], ["1,000-thread core (many-threads, 1000 connections)", many]]) {
  const model = await fakeModel();
  try {
    const { report, ms } = await analyzeOnce(dump, "openai", { OPENAI_API_KEY: "sk-bench", OPENAI_BASE_URL: model.url });
    const tokens = model.prompts.map((p) => p.tokens);
    const largest = new Map();
    for (const p of model.prompts) largest.set(p.name, Math.max(largest.get(p.name) ?? 0, p.tokens));
    const byAgent = [...largest].map(([name, n]) => `${name} ${n}`);
    console.log(`${label}: ${report.crash.kind}, ${report.evidence.length} evidence, ${model.prompts.length} model calls, ${ms.toFixed(0)} ms`);
    console.log(`  prompt tokens per call: median ${median(tokens)}, max ${Math.max(...tokens)} (largest per agent: ${byAgent.join(", ")})`);
  } finally {
    await model.close();
  }
}
