#!/usr/bin/env node
// bench/lldb: the same 8 commands on a null-dereference core through LldbSession (lldb-vscode's
// DAP, one adapter for all of them) and through `lldb-16 --batch -c CORE EXE -o ...`: once with
// all 8 as -o, and once per command. Prints the times and ratios measured in this one run
// (medians of BENCH_RUNS runs).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { crashCore, freshOut, median, programs, requireBuild, root } from "./lib.mjs";

const runs = Number(process.env.BENCH_RUNS ?? 3);
const lldb = "lldb-16";
requireBuild("internals.cjs");
const { LldbSession } = await import(join(root, "dist", "internals.cjs"));

const { exe, core } = crashCore(freshOut("lldb"), "null-deref", join(programs, "null-deref.c"));
const commands = [
  "bt",
  "thread list",
  "register read",
  "frame variable",
  "frame select 1",
  "frame variable",
  "memory read --size 8 --format x --count 16 $sp",
  "image list",
];

/** Opens the dump, runs the commands, closes; the commands' own time apart. */
async function timeSession() {
  const started = performance.now();
  const session = new LldbSession({ dump: core, executable: exe });
  await session.open();
  const opened = performance.now();
  for (const command of commands) {
    const result = await session.run(command);
    if (!result.ok) throw new Error(`${command} failed through LldbSession: ${result.error}`);
  }
  const ran = performance.now();
  await session.close();
  return { totalMs: performance.now() - started, commandsMs: ran - opened };
}

function timeBatch(commandsToRun) {
  const started = performance.now();
  const result = spawnSync(lldb, ["--batch", "-c", core, exe, ...commandsToRun.flatMap((c) => ["-o", c])], { stdio: ["ignore", "ignore", "pipe"] });
  if (result.status !== 0) throw new Error(`${lldb} --batch failed on ${core}: ${result.stderr}`);
  return performance.now() - started;
}

const sessions = [];
const batches = [];
const loads = [];
const fresh = [];
for (let run = 0; run < runs; run++) {
  sessions.push(await timeSession());
  batches.push(timeBatch(commands));
  loads.push(timeBatch([]));
  // `frame variable` after `frame select 1` means frame 1's variables: one process cannot say it alone.
  fresh.push(commands.reduce((sum, command, i) => sum + timeBatch(command === "frame variable" && commands[i - 1] === "frame select 1" ? ["frame select 1", command] : [command]), 0));
}

const n = commands.length;
const session = median(sessions.map((s) => s.totalMs));
const inSession = median(sessions.map((s) => s.commandsMs)) / n;
const batch = median(batches);
const load = median(loads);
const inBatch = Math.max(batch - load, 1) / n;
const perProcess = median(fresh) / n;
const line = (label, value) => console.log(`  ${label.padEnd(46)} ${value}`);
console.log(`bench/lldb: ${n} commands on a null-dereference core, median of ${runs} runs`);
line(`LldbSession, open + ${n} commands + close`, `${session.toFixed(0)} ms`);
line(`${lldb} --batch, the ${n} commands as -o`, `${batch.toFixed(0)} ms (loading alone ${load.toFixed(0)} ms)`);
line("per command, in an open LldbSession", `${inSession.toFixed(1)} ms`);
line(`per command, in ${lldb} --batch minus loading`, `${inBatch.toFixed(1)} ms`);
line(`per command, one ${lldb} --batch each`, `${perProcess.toFixed(0)} ms`);
line("ratio session / batch, per command", (inSession / inBatch).toFixed(2));
line("ratio session / batch, whole run", (session / batch).toFixed(2));
line("speed-up of the session vs a process each", `${(perProcess / inSession).toFixed(0)}x`);
