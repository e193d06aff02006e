#!/usr/bin/env node
// bench/triage-scale: `dumpdbg triage --json` against the gdb -batch floor (what a person types into
// gdb to see the same: every thread's stack, the registers, the signal, the mappings, the
// instructions at the pc; ../shared/bench/ratios.sh's floor) on three cores: the demo's, a
// 300-thread server's and a 1 GiB cache's. The goal is the same ratio on all three: our cost must
// not grow faster than the debugger's own. Runs alternate sides; medians of BENCH_RUNS (default 5).
// Run from the project's root after `npm run build` (the demo's core is made by `npm run demo`).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crashCore, extraCaCertsNote, freshOut, median, programs, requireBuild, root } from "./lib.mjs";

requireBuild("dumpdbg.cjs");
const runs = Math.max(3, Number(process.env.BENCH_RUNS ?? 5));
const out = freshOut("triage-scale");

const demo = { exe: join(root, "demo/build/crash"), core: join(root, "demo/build/crash.core") };
if (!existsSync(demo.core)) spawnSync("npm", ["run", "demo"], { cwd: root, stdio: "ignore" });
const threadsSource = join(out, "many-threads-300.c");
writeFileSync(threadsSource, readFileSync(join(programs, "many-threads.c"), "utf8").replace(/#define CONNECTIONS \d+/, "#define CONNECTIONS 300"));
const cores = [
  ["demo core", demo],
  ["300-thread core", crashCore(out, "many-threads-300", threadsSource)],
  ["1 GiB core", crashCore(out, "big-cache", join(root, "bench/programs/big-cache.c"))],
];

const FLOOR = ["thread apply all bt", "info registers", "p $_siginfo", "info proc mappings", "x/8i $pc"];

function ms(file, args) {
  const started = performance.now();
  const result = spawnSync(file, args, { stdio: ["ignore", "pipe", "ignore"], maxBuffer: 64 << 20 });
  if (result.status !== 0 && file !== "gdb") throw new Error(`${file} ${args[0]} exited ${result.status}`);
  return { ms: performance.now() - started, stdout: result.stdout.toString() };
}

console.log(`bench/triage-scale: medians of ${runs} runs, sides alternating`);
for (const [label, { exe, core }] of cores) {
  const ours = [];
  const floor = [];
  let verdict = "";
  for (let run = 0; run < runs; run++) {
    const sides = [
      () => floor.push(ms("gdb", ["-nx", "-q", "-batch", ...FLOOR.flatMap((c) => ["-ex", c]), exe, core]).ms),
      () => {
        const triage = ms(process.execPath, [join(root, "bin/dumpdbg.cjs"), "triage", core, "--exe", exe, "--json"]);
        ours.push(triage.ms);
        const crash = JSON.parse(triage.stdout);
        verdict = `${crash.kind} in ${crash.culprit?.function ?? "?"}`;
      },
    ];
    if (run % 2) sides.reverse();
    for (const side of sides) side();
  }
  const [o, f] = [median(ours), median(floor)];
  const size = (statSync(core).size / 2 ** 20).toFixed(0);
  console.log(`${label} (${size} MiB; ${verdict}): triage ${o.toFixed(0)} ms, gdb -batch floor ${f.toFixed(0)} ms, ratio ${(o / f).toFixed(2)}`);
}
const certs = extraCaCertsNote();
if (certs) console.log(certs);
