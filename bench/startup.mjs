#!/usr/bin/env node
// bench/startup: what dumpdbg adds to the debugger, in one run, as ratios against the floor (the
// debugger's own batch mode with the same commands). Each pair of sides runs BENCH_RUNS times
// (at least 5), alternating which goes first; medians are printed.
//   exec of 200 commands        vs gdb -batch with the 200 as -ex            (goal <= 1.3x)
//   triage                      vs gdb -batch with triage's commands          (goal <= 1.5x)
//   analyze --provider offline  vs gdb -batch with triage's commands          (goal <= 2.5x)
//   --version                   vs node -e 0
//   1,000 commands in an open session through the executor (policy, MI log, parsers, evidence
//   store) vs the same commands through a bare gdb MI pipe, each waited for    (goal <= 1.1x):
//   tiny ones (`p N + 1`), and a mix of bt, x, p, info line and registers (each distinct, so
//   none is answered from the store)
//   exec of 200 commands through lldb vs lldb --batch with the 200 as -o
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { crashCore, freshOut, median, programs, requireBuild, root } from "./lib.mjs";

requireBuild("dumpdbg.cjs");
const runs = Math.max(5, Number(process.env.BENCH_RUNS ?? 5));
const bin = join(root, "bin", "dumpdbg.cjs");
const internals = await import(join(root, "dist", "internals.cjs"));
const out = freshOut("startup");
const { exe, core } = crashCore(out, "null-deref", join(programs, "null-deref.c"));
const gdbSettings = ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-iex", "set pagination off", "-iex", "set width 0"];

function time(file, args) {
  const started = performance.now();
  const result = spawnSync(file, args, { stdio: ["ignore", "ignore", "pipe"], maxBuffer: 1 << 30 });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`${file} ${args.slice(0, 3).join(" ")} exited ${result.status}: ${result.stderr}`);
  return ms;
}

/** Both sides `runs` times, alternating which goes first; their medians and ratio. */
function pair(ours, floor) {
  const a = [];
  const b = [];
  for (let run = 0; run < runs; run++) {
    if (run % 2 === 0) {
      a.push(ours());
      b.push(floor());
    } else {
      b.push(floor());
      a.push(ours());
    }
  }
  return { ours: median(a), floor: median(b), ratio: median(a) / median(b) };
}

/** A fresh sessions and reports folder per run: nothing may be reused. */
function scratch(fn) {
  const dir = mkdtempSync(join(os.tmpdir(), "dumpdbg-startup-"));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const mix = ["bt", "info registers", "x/32xg $sp", "p $_siginfo", "info threads"];
const commands = Array.from({ length: 200 }, (_, i) => mix[i % mix.length]);
const exec = pair(
  () => time(process.execPath, [bin, "exec", core, "--exe", exe, "--json", ...commands.flatMap((c) => ["-c", c])]),
  () => time("gdb", [...gdbSettings, ...commands.flatMap((c) => ["-ex", c]), exe, core]),
);

const session = new internals.GdbSession({ dump: core, executable: exe });
await session.open();
const triageCommands = (await internals.triage(internals.askSession(session))).commands;
await session.close();
const triageFloor = () => time("gdb", [...gdbSettings, ...triageCommands.flatMap((c) => ["-ex", c]), exe, core]);
const triage = pair(() => time(process.execPath, [bin, "triage", core, "--exe", exe, "--json"]), triageFloor);
const analyze = pair(
  () => scratch((dir) => time(process.execPath, [bin, "analyze", core, "--exe", exe, "--provider", "offline", "--json", "--out", join(dir, "r"), "--sessions-dir", join(dir, "s")])),
  triageFloor,
);
const version = pair(
  () => time(process.execPath, [bin, "--version"]),
  () => time(process.execPath, ["-e", "0"]),
);

// Per command, once the dump is loaded: 1,000 distinct small commands (none answered from the
// executor's cache) through the executor (policy, MI log, parsers, evidence store), against the
// same commands written straight to a gdb MI pipe, each waited for (the least any tool that keeps
// a session can do).
const small = Array.from({ length: 1000 }, (_, i) => `p ${i} + 1`);
const shapes = [(i) => `bt ${10 + i}`, (i) => `x/32xg $sp + ${8 * i}`, (i) => `p $_siginfo.si_signo + ${i}`, (i) => `info line *($pc + ${i})`, (i) => `info registers rip rsp rbp rax rbx r${8 + (i % 8)}`];
const mixed = Array.from({ length: 1000 }, (_, i) => shapes[i % shapes.length](i));

/** The commands through the executor, on a dump opened for them; the time of the commands alone. */
async function throughExecutor(list) {
  const opened = await internals.openDump({ dump: core, exe });
  const dir = mkdtempSync(join(os.tmpdir(), "dumpdbg-startup-"));
  const store = internals.EvidenceStore.open(join(dir, "evidence.db"));
  const executor = new internals.CommandExecutor({ session: opened.session, store });
  const started = performance.now();
  for (const command of list) await executor.run(command, "exec");
  const elapsed = performance.now() - started;
  store.close();
  await opened.session.close();
  rmSync(dir, { recursive: true, force: true });
  return elapsed;
}

async function steadyPair(list) {
  const ours = [];
  const floor = [];
  for (let run = 0; run < runs; run++) {
    if (run % 2 === 0) {
      ours.push(await throughExecutor(list));
      floor.push(await rawMi(list));
    } else {
      floor.push(await rawMi(list));
      ours.push(await throughExecutor(list));
    }
  }
  return { ours: median(ours), floor: median(floor), ratio: median(ours) / median(floor) };
}
const steadySmall = await steadyPair(small);
const steadyMixed = await steadyPair(mixed);

/** The commands through a bare gdb MI pipe: write one, wait for its result record, write the next. */
async function rawMi(list) {
  const gdb = spawn("gdb", ["--interpreter=mi3", "-nx", "-q", "-iex", "set debuginfod enabled off", "-iex", "set pagination off", "-iex", "set width 0", exe, core], { stdio: ["pipe", "pipe", "ignore"] });
  let buffer = "";
  let waiting = null;
  gdb.stdout.on("data", (chunk) => {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (waiting && line.startsWith(`${waiting.token}^`)) waiting.resolve();
    }
  });
  const send = (token, command) =>
    new Promise((resolve) => {
      waiting = { token: String(token), resolve };
      gdb.stdin.write(`${token}-interpreter-exec console ${JSON.stringify(command)}\n`);
    });
  await send(1, "echo"); // loaded
  const started = performance.now();
  for (const [i, command] of list.entries()) await send(i + 2, command);
  const elapsed = performance.now() - started;
  gdb.stdin.end("-gdb-exit\n");
  await new Promise((resolve) => gdb.on("close", resolve));
  return elapsed;
}

let lldb = null;
if (spawnSync("lldb-16", ["--version"]).status === 0) {
  const lldbMix = ["bt", "register read", "memory read -s8 -fx -c32 $sp", "thread list", "frame variable"];
  const lldbCommands = Array.from({ length: 200 }, (_, i) => lldbMix[i % lldbMix.length]);
  lldb = pair(
    () => time(process.execPath, [bin, "exec", core, "--exe", exe, "--debugger", "lldb", "--json", ...lldbCommands.flatMap((c) => ["-c", c])]),
    () => time("lldb-16", ["--batch", "-c", core, exe, ...lldbCommands.flatMap((c) => ["-o", c])]),
  );
}

const ms = (v) => `${v.toFixed(0)} ms`.padStart(8);
const row = (name, r, floorName, goal) =>
  console.log(`  ${name.padEnd(34)} ${ms(r.ours)}  ${floorName.padEnd(36)} ${ms(r.floor)}  ${r.ratio.toFixed(2)}x${goal ? `  (goal <= ${goal}x)` : ""}`);
console.log(`bench/startup: a null-dereference core, medians of ${runs} runs, sides alternating`);
row("exec, 200 commands", exec, "gdb -batch, the same 200", 1.3);
row("triage", triage, `gdb -batch, triage's ${triageCommands.length} commands`, 1.5);
row("analyze --provider offline", analyze, `gdb -batch, triage's ${triageCommands.length} commands`, 2.5);
row("--version", version, "node -e 0", null);
row("1,000 tiny commands (p N + 1)", steadySmall, "a bare gdb MI pipe, the same 1,000", 1.1);
row("1,000 mixed (bt, x, p, info ...)", steadyMixed, "a bare gdb MI pipe, the same 1,000", 1.1);
if (lldb) row("exec --debugger lldb, 200 commands", lldb, "lldb-16 --batch, the same 200", null);
else console.log("  lldb-16 is not installed: no LLDB figures");
