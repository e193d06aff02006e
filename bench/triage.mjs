#!/usr/bin/env node
// bench/triage: crash triage on a typical core (one thread, a null dereference) against one
// `gdb -batch` running the same commands as -ex, and triage on a core of 500 threads. Prints the
// times and ratios measured in this one run (medians of BENCH_RUNS runs).
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crashCore as crashCoreIn, extraCaCertsNote, freshOut, median, programs, requireBuild, root } from "./lib.mjs";

const runs = Number(process.env.BENCH_RUNS ?? 3);
requireBuild("internals.cjs");
const { triage } = await import(join(root, "dist", "internals.cjs"));
const { GdbSession } = await import(join(root, "dist", "internals.cjs"));
const { askSession } = await import(join(root, "dist", "internals.cjs"));
const out = freshOut("triage");
const crashCore = (name, source) => crashCoreIn(out, name, source);

const typical = crashCore("null-deref", join(programs, "null-deref.c"));
// The many-threads fixture with 500 connection threads instead of 200.
const manySource = join(out, "many-threads-500.c");
writeFileSync(manySource, readFileSync(join(programs, "many-threads.c"), "utf8").replace(/#define CONNECTIONS \d+/, "#define CONNECTIONS 500"));
const many = crashCore("many-threads-500", manySource);

/** Opens the dump, triages it, closes: what `dumpdbg triage` does. */
async function timeTriage({ exe, core }) {
  const started = performance.now();
  const session = new GdbSession({ dump: core, executable: exe });
  await session.open();
  const opened = performance.now();
  const result = await triage(askSession(session));
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
const certs = extraCaCertsNote();
if (certs) console.log(certs);
