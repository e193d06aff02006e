#!/usr/bin/env node
// bench/cpython: what reading a CPython 3.11 process's core costs. Two cores of Debian's
// /usr/bin/python3.11 (stripped): a ctypes read of address 8 under three Python frames, dumped by
// gdb where it faults; and a process whose two threads each wait for the lock the other holds,
// dumped alive by gcore. Then, for each core, interleaved, BENCH_RUNS times each:
//   - `gdb -batch -ex "thread apply all bt" PYTHON CORE`: every thread's C stack, no Python frames;
//   - `gdb -batch -ex bt PYTHON CORE`: the crashed (or first) thread's C stack alone;
//   - `dumpdbg triage CORE --exe PYTHON --json`, which reads the Python frames from the core too.
// Prints the medians and the ratios of triage to each. Needs gdb, gcore and /usr/bin/python3.11.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freshOut, median, requireBuild, root } from "./lib.mjs";

const runs = Number(process.env.BENCH_RUNS ?? 5);
const python = process.env.BENCH_PYTHON ?? "/usr/bin/python3.11";
requireBuild("dumpdbg.cjs");
if (!existsSync(python)) {
  console.log(`bench/cpython: ${python} is not installed (Debian: python3.11)`);
  process.exit(2);
}
for (const tool of ["gdb", "gcore"]) {
  if (spawnSync(tool, ["--version"], { stdio: "ignore" }).error) {
    console.log(`bench/cpython: ${tool} is not installed (Debian: gdb)`);
    process.exit(2);
  }
}
const out = freshOut("cpython");
const BIN = join(root, "bin", "dumpdbg.cjs");

// The programs of tests/helpers/cpython.ts: RECORD_READER and WAREHOUSE.
const RECORD_READER = `"""Reads fixed-size record headers out of buffers handed over by address."""
import ctypes

HEADER_SIZE = 16


def parse_record(address):
    header = ctypes.string_at(address, HEADER_SIZE)
    return header.decode("ascii", "replace")


def handle(request):
    return parse_record(request["buffer"])


print(handle({"buffer": 0x8}))
`;

const WAREHOUSE = `"""Stock and pending orders, each behind its own lock."""
import threading

inventory = threading.Lock()
orders = threading.Lock()
both_hold_one = threading.Barrier(3)
stock = {"bolts": 10}
pending = []


def restock(amount):
    with inventory:
        both_hold_one.wait()
        with orders:
            stock["bolts"] += amount
            pending.clear()


def place_order(amount):
    with orders:
        both_hold_one.wait()
        with inventory:
            stock["bolts"] -= amount
            pending.append(amount)


def start(name, job, amount):
    worker = threading.Thread(target=job, args=(amount,), name=name)
    worker.start()
    return worker


workers = [start("restocker", restock, 5), start("order-desk", place_order, 3)]
both_hold_one.wait()
print("ready", flush=True)
for worker in workers:
    worker.join()
`;

/** RECORD_READER run under gdb, dumped where ctypes reads address 8. */
function crashCore() {
  const program = join(out, "app.py");
  writeFileSync(program, RECORD_READER);
  const core = join(out, "crash.core");
  execFileSync("gdb", ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "run", "-ex", `generate-core-file ${core}`, "--args", python, program], { cwd: out, stdio: "ignore" });
  if (!existsSync(core)) throw new Error("gdb wrote no core of the crash");
  return core;
}

/** WAREHOUSE run until both workers wait for each other's lock, dumped by gcore and killed. */
async function deadlockCore() {
  const program = join(out, "warehouse.py");
  writeFileSync(program, WAREHOUSE);
  const child = spawn(python, [program], { cwd: out, stdio: ["ignore", "pipe", "ignore"] });
  try {
    await new Promise((resolve, reject) => {
      let printed = "";
      const timer = setTimeout(() => reject(new Error(`the deadlock never printed "ready":\n${printed}`)), 30_000);
      child.stdout.on("data", (chunk) => {
        printed += chunk;
        if (printed.includes("ready\n")) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`the deadlock exited (${code}):\n${printed}`));
      });
    });
    // Both workers are past the barrier: give each the moment it takes to block on its second lock.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const prefix = join(out, "deadlock");
    execFileSync("gcore", ["-o", prefix, String(child.pid)], { stdio: "ignore" });
    const core = `${prefix}.${child.pid}`;
    if (!existsSync(core)) throw new Error("gcore wrote no core of the deadlock");
    return core;
  } finally {
    child.kill("SIGKILL");
  }
}

function ms(command, args) {
  const started = performance.now();
  const result = spawnSync(command, args, { stdio: ["ignore", "ignore", "ignore"] });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}`);
  return performance.now() - started;
}

const gdb = (core, ...commands) => ms("gdb", ["-nx", "-q", "-batch", "-iex", "set debuginfod enabled off", ...commands.flatMap((c) => ["-ex", c]), python, core]);
const triage = (core) => ms(process.execPath, [BIN, "triage", core, "--exe", python, "--json"]);

function measure(label, core) {
  // One warm-up of each: the page cache holds the core and the interpreter after it.
  gdb(core, "thread apply all bt");
  gdb(core, "bt");
  triage(core);
  const times = { all: [], bt: [], triage: [] };
  for (let run = 0; run < runs; run++) {
    times.all.push(gdb(core, "thread apply all bt"));
    times.bt.push(gdb(core, "bt"));
    times.triage.push(triage(core));
  }
  const [a, b, t] = [median(times.all), median(times.bt), median(times.triage)];
  console.log(`${label}, medians of ${runs} interleaved runs:`);
  console.log(`  gdb -batch -ex "thread apply all bt"   ${a.toFixed(0)} ms`);
  console.log(`  gdb -batch -ex bt                      ${b.toFixed(0)} ms`);
  console.log(`  dumpdbg triage --json                  ${t.toFixed(0)} ms`);
  console.log(`  ratio triage / thread apply all bt     ${(t / a).toFixed(2)}`);
  console.log(`  ratio triage / bt                      ${(t / b).toFixed(2)}`);
}

const crash = crashCore();
const deadlock = await deadlockCore();
console.log(`bench/cpython: ${python}`);
measure("CPython crash core (ctypes reads address 8 under three Python frames)", crash);
measure("CPython deadlock gcore (two threads, two locks taken in opposite orders)", deadlock);
