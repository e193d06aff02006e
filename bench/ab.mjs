#!/usr/bin/env node
// bench/ab: is build B faster than build A at one command? Two checkouts (each built with
// `npm run build`) run the same command on the demo's core, in pairs whose order alternates
// (A B, B A, …), so that the machine's drift falls on both alike. Prints each one's median wall
// time and Node's CPU time (its main thread's time on a CPU at exit, from the timeline hook; the
// debugger's is not in it), then the median of the pairs' differences (B − A) with a 95% interval
// from resampling the pairs. A difference whose interval holds 0 is not one this machine can tell;
// the main thread's CPU time is steadier than wall time and shows smaller changes.
//   node bench/ab.mjs DIR_A DIR_B [triage|exec|analyze] [PAIRS]      (default: analyze, 21 pairs)
// BENCH_ENV_A / BENCH_ENV_B: variables for one side only (`NAME=value NAME2=value`), to compare a
// setting on one build: `BENCH_ENV_B=DUMPDBG_CODE_CACHE=off node bench/ab.mjs . . triage`.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { median, root } from "./lib.mjs";

const [dirA, dirB, command = "analyze", pairsArg = "21"] = process.argv.slice(2);
const pairs = Number(pairsArg);
if (!dirA || !dirB || !["triage", "exec", "analyze"].includes(command) || !(pairs >= 3)) {
  console.error("usage: node bench/ab.mjs DIR_A DIR_B [triage|exec|analyze] [PAIRS]");
  process.exit(2);
}
const core = join(root, "demo/build/crash.core");
const exe = join(root, "demo/build/crash");
const work = mkdtempSync(join(os.tmpdir(), "dumpdbg-ab-"));
const argsOf = (out) =>
  ({
    triage: ["triage", core, "--exe", exe, "--json"],
    exec: ["exec", core, "--exe", exe, ...Array.from({ length: 200 }, (_, i) => ["-ex", ["bt", "info registers", "x/32xg $sp", "p $_siginfo", "info threads"][i % 5]]).flat(), "--json"],
    analyze: ["analyze", core, "--exe", exe, "--issue", "it crashed", "--provider", "offline", "--json", "--out", join(out, "r"), "--sessions-dir", join(out, "s")],
  })[command];
const envOf = (text = "") => Object.fromEntries(text.split(/\s+/).filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]));
const sides = {
  A: { dir: resolve(dirA), env: envOf(process.env.BENCH_ENV_A), wall: [], cpu: [] },
  B: { dir: resolve(dirB), env: envOf(process.env.BENCH_ENV_B), wall: [], cpu: [] },
};
/** Node's CPU time: its main thread's, where the hook can read it (Linux), else the whole process's (V8's helper threads too, which vary more). */
let cpuIs = "the main thread's";

/** One run: its wall time, and Node's CPU time at exit as the timeline hook noted it. */
function run(side) {
  const out = mkdtempSync(join(work, "run-"));
  const timeline = join(out, "timeline.json");
  const started = performance.now();
  const result = spawnSync(process.execPath, ["--require", join(root, "bench/timeline-hooks.cjs"), join(side.dir, "bin/dumpdbg.cjs"), ...argsOf(out)], {
    env: { ...process.env, ...side.env, DUMPDBG_TIMELINE: timeline },
    stdio: "ignore",
  });
  const wall = performance.now() - started;
  if (result.status !== 0) throw new Error(`${side.dir}: dumpdbg ${command} exited with ${result.status}`);
  const exit = JSON.parse(readFileSync(timeline, "utf8")).find((event) => event.what === "exit");
  rmSync(out, { recursive: true, force: true });
  side.wall.push(wall);
  if (exit.mainCpu === null || exit.mainCpu === undefined) cpuIs = "the process's";
  side.cpu.push(exit.mainCpu ?? exit.cpu);
}

// A first run of each fills its caches (code, index, debug files), which the pairs then share.
run(sides.A);
run(sides.B);
sides.A.wall.length = sides.A.cpu.length = sides.B.wall.length = sides.B.cpu.length = 0;
for (let i = 0; i < pairs; i++) {
  for (const side of i % 2 === 0 ? [sides.A, sides.B] : [sides.B, sides.A]) run(side);
}
rmSync(work, { recursive: true, force: true });

/** The median of B − A over the pairs, and a 95% interval of it from 2,000 resamplings of the pairs (a fixed seed: the same runs give the same interval). */
function difference(a, b) {
  const d = a.map((value, i) => b[i] - value);
  let seed = 2026;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const resampled = Array.from({ length: 2000 }, () => median(d.map(() => d[Math.floor(random() * d.length)]))).sort((x, y) => x - y);
  return { median: median(d), low: resampled[50], high: resampled[1949] };
}
const ms = (value) => `${value >= 0 ? "+" : ""}${value.toFixed(1)}`;
console.log(`bench/ab: ${command} of the demo core, ${pairs} pairs`);
for (const [name, side] of Object.entries(sides)) console.log(`  ${name} ${side.dir}: wall ${median(side.wall).toFixed(1)} ms, CPU ${median(side.cpu).toFixed(1)} ms (${cpuIs})`);
for (const what of ["wall", "cpu"]) {
  const { median: m, low, high } = difference(sides.A[what], sides.B[what]);
  const verdict = low > 0 ? "B is slower" : high < 0 ? "B is faster" : "no difference this machine can tell";
  console.log(`  B − A ${what === "wall" ? "wall" : "CPU "}: ${ms(m)} ms, 95% [${ms(low)}, ${ms(high)}]: ${verdict}`);
}
