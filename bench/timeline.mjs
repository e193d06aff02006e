#!/usr/bin/env node
// bench/timeline: where one command's time goes, phase by phase, beside the same phases of the
// debugger's own batch mode. The command runs with bench/timeline-hooks.cjs, which notes on its own
// clock when the debugger is spawned, answers, loads the dump and is asked each command; gdb's
// phases are timed from outside (gdb -batch with nothing, with the core, with the commands). Each
// phase shows Node's own CPU time beside its wall time: a phase whose CPU is near its wall was spent
// in our code (or Node's), one far below it waiting for the debugger.
// Medians of BENCH_RUNS runs (default 7). Run from the project's root after `npm run build`:
//   node bench/timeline.mjs [triage|exec|analyze] [CORE EXE]      (default: triage of the demo's core)
// With BENCH_EVENTS=1, the last run's events are printed too: each command written to the debugger
// with the time its answer took, and each progress line, on the process's clock.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { extraCaCertsNote, median, requireBuild, root } from "./lib.mjs";

requireBuild("dumpdbg.cjs");
const [command = "triage", core = join(root, "demo/build/crash.core"), exe = join(root, "demo/build/crash")] = process.argv.slice(2);
const runs = Math.max(3, Number(process.env.BENCH_RUNS ?? 7));
const work = mkdtempSync(join(os.tmpdir(), "dumpdbg-timeline-"));
const args = {
  triage: ["triage", core, "--exe", exe, "--json"],
  exec: ["exec", core, "--exe", exe, ...Array.from({ length: 200 }, (_, i) => ["-ex", ["bt", "info registers", "x/32xg $sp", "p $_siginfo", "info threads"][i % 5]]).flat(), "--json"],
  analyze: ["analyze", core, "--exe", exe, "--issue", "it crashed", "--provider", "offline", "--json", "--out", join(work, "r"), "--sessions-dir", join(work, "s")],
}[command];
if (!args) throw new Error(`unknown command ${command}: triage, exec or analyze`);

let lastEvents = [];

/** One run's phases, in ms on the process's clock. */
function phases() {
  const file = join(work, "timeline.json");
  const started = performance.now();
  spawnSync(process.execPath, ["--require", join(root, "bench/timeline-hooks.cjs"), join(root, "bin/dumpdbg.cjs"), ...args], { stdio: "ignore", env: { ...process.env, DUMPDBG_TIMELINE: file } });
  const wall = performance.now() - started;
  const events = JSON.parse(readFileSync(file, "utf8"));
  lastEvents = events;
  const find = (what, match = () => true) => events.find((e) => e.what === what && match(e));
  // The core is loaded when gdb answers the command that loads it (its token is the one written with core-file).
  const coreToken = /^(\d+)/.exec(find("written", (e) => e.detail.includes("core-file"))?.detail ?? "")?.[1];
  const marks = [
    { ms: 0, cpu: 0 },
    find("first line of ours"),
    find("debugger spawned"),
    find("debugger's first output"),
    find("answer", (e) => e.detail === coreToken),
    events.filter((e) => e.what === "answer").at(-1),
    find("result printed"),
    find("exit"),
  ].map((e) => e ?? { ms: NaN, cpu: NaN });
  const phase = (i) => ({ wall: marks[i + 1].ms - marks[i].ms, cpu: marks[i + 1].cpu - marks[i].cpu });
  return {
    "Node's start (to our first line)": phase(0),
    "ours before the debugger is spawned": phase(1),
    "the debugger's start (spawn to first output)": phase(2),
    "the dump's load (first output to loaded)": phase(3),
    "after the load, to the last answer read": phase(4),
    "ours after the last answer, to the result": phase(5),
    "the result to exit": phase(6),
    "process exit and reaping (wall - exit)": { wall: wall - marks[7].ms, cpu: NaN },
    wall: { wall, cpu: marks[7].cpu },
  };
}

function wallOf(file, fileArgs) {
  const started = performance.now();
  spawnSync(file, fileArgs, { stdio: "ignore" });
  return performance.now() - started;
}

const gdb = ["-nx", "-q", "-batch", "-iex", "set debuginfod enabled off"];
const floorCommands = { triage: ["thread apply all bt", "info registers", "p $_siginfo", "info proc mappings", "x/8i $pc"], analyze: ["thread apply all bt", "info registers", "p $_siginfo", "info proc mappings", "x/8i $pc"], exec: args.filter((_, i) => args[i - 1] === "-ex") }[command];
const samples = [];
const floor = { start: [], load: [], all: [] };
for (let i = 0; i < runs; i++) {
  samples.push(phases());
  floor.start.push(wallOf("gdb", gdb));
  floor.load.push(wallOf("gdb", [...gdb, exe, core]));
  floor.all.push(wallOf("gdb", [...gdb, ...floorCommands.flatMap((c) => ["-ex", c]), exe, core]));
}
rmSync(work, { recursive: true, force: true });

if (process.env.BENCH_EVENTS) {
  const written = new Map();
  console.log("the last run's events (ms):");
  for (const event of lastEvents) {
    const token = /^(\d+)-/.exec(event.detail)?.[1];
    if (event.what === "written" && token) written.set(token, event.ms);
    const line =
      event.what === "answer" ? `answered ${event.detail}${written.has(event.detail) ? `, ${(event.ms - written.get(event.detail)).toFixed(1)} ms after it was written` : ""}`
      : event.what === "stdout" || event.what === "log read" ? null
      : `${event.what} ${event.detail}`;
    if (line) console.log(`  ${event.ms.toFixed(1).padStart(7)}  ${line}`);
  }
}

// Node's CPU beside each phase's wall time: where it is near the wall, Node was busy, not waiting for the debugger.
console.log(`${`dumpdbg ${command}, medians of ${runs} runs (ms):`.padEnd(51)}${"wall".padStart(7)}  Node's CPU`);
for (const key of Object.keys(samples[0])) {
  const cpu = median(samples.map((s) => s[key].cpu));
  console.log(`  ${key.padEnd(48)} ${median(samples.map((s) => s[key].wall)).toFixed(1).padStart(7)}  ${Number.isNaN(cpu) ? "" : cpu.toFixed(1).padStart(7)}`);
}
const start = median(floor.start), load = median(floor.load), all = median(floor.all);
console.log("gdb -batch, the same dump (ms):");
console.log(`  ${"start and exit (no file)".padEnd(48)} ${start.toFixed(1).padStart(7)}`);
console.log(`  ${"the dump's load (with the core, minus the above)".padEnd(48)} ${(load - start).toFixed(1).padStart(7)}`);
console.log(`  ${"the commands (minus the above)".padEnd(48)} ${(all - load).toFixed(1).padStart(7)}`);
console.log(`  ${"wall".padEnd(48)} ${all.toFixed(1).padStart(7)}`);
const certs = extraCaCertsNote();
if (certs) console.log(certs);
