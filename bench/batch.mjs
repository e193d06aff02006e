#!/usr/bin/env node
// bench/batch: `dumpdbg batch` over many cores of the fixtures (several runs and builds each), with
// --jobs 1 and --jobs 2, against one `dumpdbg triage` process per dump, in this one invocation.
// Prints dumps per second and the ratios. BENCH_DUMPS sets how many (default 200).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { freshOut, programs, requireBuild, root } from "./lib.mjs";

requireBuild("cli/main.js");
const wanted = Number(process.env.BENCH_DUMPS ?? 200);
const out = freshOut("batch");
const bin = join(root, "bin", "dumpdbg.js");
const names = ["null-deref", "null-write", "div-zero", "abort-msg", "wild-pointer", "illegal-instruction", "stack-smash", "double-free"];

// Cores: each program built in two ways, each build run a few times (fresh ASLR each run).
const cores = [];
const builds = names.flatMap((name) => [["-O0", "a"], ["-O1", "b"]].map(([flag, tag]) => ({ name, flag, tag })));
const runsPerBuild = Math.ceil(wanted / builds.length);
for (const { name, flag, tag } of builds) {
  const dir = join(out, `${name}-${tag}`);
  mkdirSync(dir, { recursive: true });
  const exe = join(dir, name);
  execFileSync("gcc", ["-g", flag, "-pthread", "-o", exe, join(programs, `${name}.c`)]);
  for (let run = 0; run < runsPerBuild && cores.length < wanted; run++) {
    const core = join(dir, `core.${run}`);
    spawnSync("gdb", ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "run", "-ex", `generate-core-file ${core}`, exe], { stdio: "ignore" });
    // A build that does not crash (the optimiser removed the bug) leaves no core.
    if (existsSync(core)) cores.push(core);
    else break;
  }
}
const folder = join(out, "dumps");
mkdirSync(folder);
cores.forEach((core, i) => symlinkSync(core, join(folder, `${i}.core`)));

function time(args) {
  const started = performance.now();
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`dumpdbg ${args.join(" ")} failed: ${result.stderr}`);
  return { ms: performance.now() - started, stdout: result.stdout };
}

const one = time(["batch", folder, "--jobs", "1", "--json", "--out", join(out, "r1")]);
const two = time(["batch", folder, "--jobs", "2", "--json", "--out", join(out, "r2")]);
let each = 0;
for (const file of readdirSync(folder)) each += time(["triage", join(folder, file), "--json"]).ms;
const groups = JSON.parse(two.stdout).groups.length;
const rate = (ms) => (cores.length / (ms / 1000)).toFixed(1);
console.log(`bench/batch: ${cores.length} cores of ${names.length} programs (2 builds each), ${groups} groups`);
console.log(`  batch --jobs 1                 ${(one.ms / 1000).toFixed(1)} s  ${rate(one.ms)} dumps/s`);
console.log(`  batch --jobs 2                 ${(two.ms / 1000).toFixed(1)} s  ${rate(two.ms)} dumps/s`);
console.log(`  one dumpdbg triage per dump    ${(each / 1000).toFixed(1)} s  ${rate(each)} dumps/s`);
console.log(`  ratio --jobs 2 / --jobs 1      ${(one.ms / two.ms).toFixed(2)}x faster`);
console.log(`  ratio batch --jobs 2 / per-dump ${(each / two.ms).toFixed(2)}x faster`);
