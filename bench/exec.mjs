#!/usr/bin/env node
// bench/exec: 200 read-only commands on one core through `dumpdbg exec`, through one `gdb -batch`
// with the same commands as -ex, and through a fresh `gdb -batch` per command. Prints ratios
// measured in this one run, and the wall time of `dumpdbg --version`.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { crashCore, extraCaCertsNote, freshOut, median, programs, requireBuild, root } from "./lib.mjs";

const bin = join(root, "bin", "dumpdbg.cjs");
const runs = Number(process.env.BENCH_RUNS ?? 3);
requireBuild("dumpdbg.cjs");

const { exe, core } = crashCore(freshOut("exec"), "null-deref", join(programs, "null-deref.c"));

const mix = ["bt", "info registers", "x/32xg $sp", "p $_siginfo", "info threads"];
const commands = Array.from({ length: 200 }, (_, i) => mix[i % mix.length]);
const gdbSettings = ["-iex", "set debuginfod enabled off", "-iex", "set pagination off", "-iex", "set width 0"];

function time(file, args) {
  const started = process.hrtime.bigint();
  const result = spawnSync(file, args, { stdio: ["ignore", "ignore", "pipe"], maxBuffer: 1 << 30 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${file} ${args.slice(0, 3).join(" ")} failed: ${result.stderr}`);
  return ms;
}

const dumpdbgArgs = [bin, "exec", core, "--exe", exe, "--json", ...commands.flatMap((c) => ["-c", c])];
const batchArgs = ["-nx", "-batch", ...gdbSettings, ...commands.flatMap((c) => ["-ex", c]), exe, core];

const dumpdbg = [];
const batch = [];
const perCommand = [];
for (let run = 0; run < runs; run++) {
  dumpdbg.push(time(process.execPath, dumpdbgArgs));
  batch.push(time("gdb", batchArgs));
  if (run === 0) {
    const started = process.hrtime.bigint();
    for (const c of commands) spawnSync("gdb", ["-nx", "-batch", ...gdbSettings, "-ex", c, exe, core], { stdio: "ignore" });
    perCommand.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
}

// Steady state: what each command costs once the dump is loaded, through the MI session against
// gdb -batch's own cost per command (its run with the commands minus its run with none).
const loadOnly = median(Array.from({ length: runs }, () => time("gdb", ["-nx", "-batch", ...gdbSettings, exe, core])));
const { openDump } = await import(join(root, "dist", "internals.cjs"));
const { runGuarded } = await import(join(root, "dist", "internals.cjs"));
const opened = await openDump({ dump: core, exe });
const steady = [];
for (let run = 0; run < runs; run++) {
  const started = process.hrtime.bigint();
  for (const c of commands) await runGuarded(opened.session, c);
  steady.push(Number(process.hrtime.bigint() - started) / 1e6);
}
await opened.session.close();

const version = Array.from({ length: 10 }, () => time(process.execPath, [bin, "--version"]));
const nodeBare = Array.from({ length: 10 }, () => time(process.execPath, ["-e", ""]));

const d = median(dumpdbg);
const b = median(batch);
const p = median(perCommand);
console.log(`bench/exec: ${commands.length} commands (${mix.join(", ")}) on a null-dereference core, median of ${runs}`);
console.log(`  dumpdbg exec (one MI session)   ${d.toFixed(0)} ms`);
console.log(`  gdb -batch, all commands        ${b.toFixed(0)} ms`);
console.log(`  gdb -batch per command          ${p.toFixed(0)} ms`);
console.log(`  ratio dumpdbg / single gdb      ${(d / b).toFixed(2)}x   (target <= 1.3x)`);
console.log(`  speed-up vs gdb per command     ${(p / d).toFixed(1)}x   (target >= 20x)`);
const s = median(steady);
const perBatch = Math.max(b - loadOnly, 1);
console.log(`  steady state: ${commands.length} commands in an open session ${s.toFixed(0)} ms, in gdb -batch ${perBatch.toFixed(0)} ms (its run minus loading only, ${loadOnly.toFixed(0)} ms): ${(s / perBatch).toFixed(2)}x`);
console.log(`  dumpdbg --version               ${median(version).toFixed(0)} ms   (target <= 150 ms; bare node: ${median(nodeBare).toFixed(0)} ms)`);
const certs = extraCaCertsNote();
if (certs) console.log(`  ${certs}`);
