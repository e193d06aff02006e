/**
 * Hung CPython 3.11 processes for the tests, dumped alive by `gcore` once their threads are stuck:
 * a ledger whose two accounts' RLocks, kept as attributes, are taken in opposite orders; a consumer
 * waiting on a Condition nobody notifies while the main thread joins it; a worker that holds the
 * GIL while it blocks in C (a `ctypes.PyDLL` call, which keeps the GIL) and a thread that waits for
 * it. Lines the tests look for are marked `# WAITS …` and `# BLOCKS`.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

import { markedLines, type PythonCore } from "./cpython.js";
import { untilReady } from "./ready.js";

const run = promisify(execFile);

/** Two tellers moving money between the same two accounts in opposite directions, each account behind its own RLock. */
export const LEDGER = `"""Transfers between accounts, each account guarded by its own reentrant lock."""
import threading

both_hold_one = threading.Barrier(3)


class Account:
    def __init__(self, name, balance):
        self.name = name
        self.balance = balance
        self.guard = threading.RLock()


class Ledger:
    def __init__(self):
        self.checking = Account("checking", 100)
        self.savings = Account("savings", 500)

    def transfer(self, source, target, amount):
        with source.guard:
            both_hold_one.wait()
            with target.guard:  # WAITS transfer
                source.balance -= amount
                target.balance += amount


ledger = Ledger()
tellers = [
    threading.Thread(target=ledger.transfer, args=(ledger.checking, ledger.savings, 10), name="teller-1"),
    threading.Thread(target=ledger.transfer, args=(ledger.savings, ledger.checking, 20), name="teller-2"),
]
for teller in tellers:
    teller.start()
both_hold_one.wait()
print("ready", flush=True)
for teller in tellers:
    teller.join()
`;

/** A consumer that waits for an order on a Condition no producer ever notifies, and the main thread joining it. */
export const ORDER_QUEUE = `"""Orders handed from a producer to a consumer through a condition variable."""
import threading

orders = []
arrived = threading.Condition()


def take_order():
    with arrived:
        while not orders:
            arrived.wait()  # WAITS consumer
        return orders.pop(0)


def consume():
    while True:
        print("took", take_order(), flush=True)


consumer = threading.Thread(target=consume, name="consumer")
consumer.start()
print("ready", flush=True)
consumer.join()  # WAITS main
`;

/** A worker that blocks in C without letting go of the GIL, and the main thread that needs it back. */
export const GIL_HOLDER = `"""A worker calls into C through a ctypes.PyDLL, which keeps the GIL, and blocks there."""
import ctypes
import threading
import time

libc = ctypes.PyDLL(None)


def wait_for_signal():
    libc.pause()  # BLOCKS


def count_ticks():
    ticks = 0
    while True:
        ticks += 1
        time.sleep(0.01)


threading.Thread(target=count_ticks, name="ticker", daemon=True).start()
print("ready", flush=True)
time.sleep(0.2)
wait_for_signal()
`;

/** The marked lines of a source, with the `# BLOCKS` mark too. */
export function marks(source: string): Record<string, number> {
  const lines = markedLines(source);
  source.split("\n").forEach((line, index) => {
    if (line.includes("# BLOCKS")) lines.BLOCKS = index + 1;
  });
  return lines;
}

/** How long the program may take to print "ready", the moment its threads take to block after, and gcore's time. */
const READY_TIMEOUT_MS = 30_000;
const SETTLE_MS = 600;
const GCORE_TIMEOUT_MS = 60_000;

/** `source` run by `python` until it prints "ready" and its threads block, dumped by gcore and killed, whatever happens. */
export async function hungCore(dir: string, python: string, name: string, source: string): Promise<PythonCore> {
  const program = path.join(dir, `${name}.py`);
  writeFileSync(program, source);
  const child = spawn(python, [program], { cwd: dir, stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise<void>((resolve) => {
    child.once("close", () => resolve());
    child.once("error", () => resolve());
  });
  try {
    await untilReady(child, program, READY_TIMEOUT_MS);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const prefix = path.join(dir, name);
    const pid = child.pid!;
    const dumped = await run("gcore", ["-o", prefix, String(pid)], { timeout: GCORE_TIMEOUT_MS, encoding: "utf8" }).then(
      (result) => result.stdout + result.stderr,
      (error: { stdout?: string; stderr?: string; message: string }) => `${error.message}\n${error.stdout ?? ""}${error.stderr ?? ""}`,
    );
    const core = `${prefix}.${pid}`;
    if (!existsSync(core)) throw new Error(`gcore wrote no core of ${program} (pid ${pid}):\n${dumped}`);
    return { core, python, program, sourceLines: marks(source) };
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
}
