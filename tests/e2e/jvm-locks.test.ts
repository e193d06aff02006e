/**
 * Java deadlocks and hangs read from cores of live hung JVMs, made now with gcore and read with the
 * JDK's `jhsdb jstack --locks`: what tests/unit/jvm-locks.test.ts checks on the saved output, here on
 * output the tests make themselves.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

import { javaLockCycles, readJavaLocks } from "../../src/runtimes/jvm/index.js";
import { hasJava } from "../helpers/jvm.js";
import { latchHangCore, reentrantDeadlockCore, synchronizedDeadlockCore, type HungJvmCore } from "../helpers/jvm-hang.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const run = promisify(execFile);

async function jstackLocks({ core, java }: HungJvmCore): Promise<string> {
  return (await run("jhsdb", ["jstack", "--locks", "--core", core, "--exe", java], { encoding: "utf8", timeout: 60_000, maxBuffer: 16 * 1024 * 1024 })).stdout;
}

describe.skipIf(!hasJava)("cores of hung JVMs", () => {
  it("a synchronized lock-order deadlock: the two tellers, each waiting in transfer for the account the other holds", async () => {
    const hung = await synchronizedDeadlockCore(tempDir("dumpdbg-jvm-bank-"));
    const cycles = javaLockCycles(readJavaLocks(await jstackLocks(hung)));
    expect(cycles.map((cycle) => [cycle.foundBy, cycle.waits.map((wait) => [wait.thread.name, wait.lock.type, wait.heldBy.name, wait.frame?.function, wait.frame?.line])])).toEqual([
      [
        "both",
        [
          ["teller-1", "Bank$Account", "teller-2", "Bank.transfer", hung.sourceLines.WAITS! + 1],
          ["teller-2", "Bank$Account", "teller-1", "Bank.transfer", hung.sourceLines.WAITS! + 1],
        ],
      ],
    ]);
  });

  it("a ReentrantLock lock-order deadlock: the restocker and the order desk, each parked where it takes its second lock", async () => {
    const hung = await reentrantDeadlockCore(tempDir("dumpdbg-jvm-warehouse-"));
    const cycles = javaLockCycles(readJavaLocks(await jstackLocks(hung)));
    const sync = "java.util.concurrent.locks.ReentrantLock$NonfairSync";
    expect(cycles.map((cycle) => [cycle.foundBy, cycle.waits.map((wait) => [wait.thread.name, wait.lock.type, wait.heldBy.name, wait.frame?.line])])).toEqual([
      [
        "both",
        [
          ["restocker", sync, "order-desk", hung.sourceLines["WAITS restock"]],
          ["order-desk", sync, "restocker", hung.sourceLines["WAITS placeOrder"]],
        ],
      ],
    ]);
  });

  it("a hang without a cycle: threads parked on a latch and a queue, main in join", async () => {
    const hung = await latchHangCore(tempDir("dumpdbg-jvm-mailroom-"));
    const locks = readJavaLocks(await jstackLocks(hung));
    expect(javaLockCycles(locks)).toEqual([]);
    expect(["sorter", "courier", "main"].map((name) => locks.threads.find((thread) => thread.name === name)?.waitKind)).toEqual(["park", "park", "wait"]);
  });
});
