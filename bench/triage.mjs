#!/usr/bin/env node
// bench/triage: crash triage on a typical core (one thread, a null dereference) against one
// `gdb -batch` running the same commands as -ex, and triage on a core of 500 threads. Prints the
// times and ratios measured in this one run (medians of BENCH_RUNS runs).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = join(root, "bench", "out", "triage");
const runs = Number(process.env.BENCH_RUNS ?? 3);
const compiled = join(root, "dist", "analyzers", "triage.js");

if (!existsSync(compiled)) {
  console.error("bench: build first (npm run build)");
  process.exit(2);
}
const { triage } = await import(compiled);
const { GdbSession } = await import(join(root, "dist", "debuggers", "gdb", "gdb-session.js"));

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const programs = join(root, "tests", "fixtures", "programs");

/** Builds a program and dumps its crash with gdb, which works whatever the kernel's core_pattern. */
function crashCore(name, source) {
  const exe = join(out, name);
  const core = join(out, `${name}.core`);
  execFileSync("gcc", ["-g", "-O0", "-pthread", "-o", exe, source]);
  execFileSync("gdb", ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "run", "-ex", `generate-core-file ${core}`, exe], {
    stdio: "ignore",
  });
  return { exe, core };
}

const typical = crashCore("null-deref", join(programs, "null-deref.c"));
// The many-threads fixture with 500 connection threads instead of 200.
const manySource = join(out, "many-threads-500.c");
writeFileSync(manySource, readFileSync(join(programs, "many-threads.c"), "utf8").replace(/#define CONNECTIONS \d+/, "#define CONNECTIONS 500"));
const many = crashCore("many-threads-500", manySource);

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Opens the dump, triages it, closes: what `dumpdbg triage` does. */
async function timeTriage({ exe, core }) {
  const started = performance.now();
  const session = new GdbSession({ dump: core, executable: exe });
  await session.open();
  const opened = performance.now();
  const result = await triage((command) => session.run(command));
  const triaged = performance.now();
  await session.close();
  return { totalMs: performance.now() - started, triageMs: triaged - opened, result };
}

function timeGdbBatch({ exe, core }, commands) {
  const args = ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-iex", "set pagination off", "-iex", "set width 0"];
  const started = performance.now();
  const result = spawnSync("gdb", [...args, ...commands.flatMap((c) => ["-ex", c]), exe, core], {
    stdio: ["ignore", "ignore", "ignore"],
  });
  if (result.status !== 0) throw new Error(`gdb -batch failed on ${core}`);
  return performance.now() - started;
}

async function measure(label, dump) {
  const triages = [];
  const batches = [];
  let last;
  for (let run = 0; run < runs; run++) {
    last = await timeTriage(dump);
    triages.push(last);
    batches.push(timeGdbBatch(dump, last.result.commands));
  }
  const total = median(triages.map((t) => t.totalMs));
  const inSession = median(triages.map((t) => t.triageMs));
  const batch = median(batches);
  console.log(`${label}: ${last.result.crash.kind} in ${last.result.crash.culprit.function}, ${last.result.threads.count} threads, ${last.result.commands.length} commands`);
  console.log(`  dumpdbg triage (open + triage + close)  ${total.toFixed(0)} ms`);
  console.log(`  triage in an open session               ${inSession.toFixed(0)} ms`);
  console.log(`  gdb -batch, same commands as -ex        ${batch.toFixed(0)} ms`);
  console.log(`  ratio triage / gdb -batch               ${(total / batch).toFixed(2)}`);
}

console.log(`bench/triage: medians of ${runs} runs`);
await measure("typical core (null-deref)", typical);
await measure("500-thread core (many-threads, 500 connections)", many);
