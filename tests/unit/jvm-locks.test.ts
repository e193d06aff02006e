/** Java locks and deadlocks read from `jhsdb jstack` over real hung JVMs' cores (tests/fixtures/jvm/README.md). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

import { javaLockCycles, readJavaLocks, type JavaLocks } from "../../src/runtimes/jvm/index.js";
import { BANK, MAILROOM, WAREHOUSE, markedLines } from "../helpers/jvm-hang.js";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/jvm/${name}`, import.meta.url), "utf8");
const thread = (locks: JavaLocks, name: string) => locks.threads.find((t) => t.name === name);
/** The text without the SA's "Deadlock Detection:" section, as if jhsdb had not printed it. */
const withoutReport = (text: string) => text.replace(/^Deadlock Detection:\n[\s\S]*?^Found a total of \d+ deadlocks?\.\n/m, "");
/** The text without one thread's section: its header up to the next thread's. */
const withoutThread = (text: string, name: string) => text.replace(new RegExp(`^"${name}" #[\\s\\S]*?(?=^")`, "m"), "");

const bank = markedLines(BANK);
const warehouse = markedLines(WAREHOUSE);
const mailroom = markedLines(MAILROOM);

const ACCOUNT_CHECKING = { address: "0x00000000fe0de048", type: "Bank$Account" };
const ACCOUNT_SAVINGS = { address: "0x00000000fe0de090", type: "Bank$Account" };
const INVENTORY = { address: "0x00000000fe0dd968", type: "java.util.concurrent.locks.ReentrantLock$NonfairSync" };
const ORDERS = { address: "0x00000000fe0dd998", type: "java.util.concurrent.locks.ReentrantLock$NonfairSync" };

describe("a synchronized lock-order deadlock", () => {
  it("reads the tellers' cycle over the two accounts, where each waits in transfer, as its lines and the SA's report both show it", () => {
    const locks = readJavaLocks(fixture("deadlock-synchronized.plain.txt"));
    // Blocked in monitorenter, the interpreter has moved past it: the frame's line is the block's first, below `synchronized (to)`.
    const inTransfer = expect.objectContaining({ function: "Bank.transfer", line: bank.WAITS! + 1 });
    expect(javaLockCycles(locks)).toEqual([
      {
        waits: [
          { thread: { lwp: 0x4bc4, name: "teller-1" }, lock: ACCOUNT_SAVINGS, kind: "monitor", heldBy: { lwp: 0x4bc5, name: "teller-2" }, frame: inTransfer },
          { thread: { lwp: 0x4bc5, name: "teller-2" }, lock: ACCOUNT_CHECKING, kind: "monitor", heldBy: { lwp: 0x4bc4, name: "teller-1" }, frame: inTransfer },
        ],
        foundBy: "both",
      },
    ]);
    // The SA lists both accounts as "locked" in each teller's top frame; its report says which one is awaited.
    expect(thread(locks, "teller-1")).toMatchObject({ state: "BLOCKED (on object monitor)", holds: [ACCOUNT_CHECKING], waitsFor: ACCOUNT_SAVINGS, waitKind: "monitor", ownablesListed: false });
    // main waits in join(): it released the Thread's monitor its caller's frame lists as locked.
    expect(thread(locks, "main")).toMatchObject({ state: "WAITING (on object monitor)", holds: [], waitsFor: { type: "java.lang.Thread" }, waitKind: "wait" });
  });

  it("reads the same cycle with --locks, each thread's ownable synchronizers listed as none", () => {
    const locks = readJavaLocks(fixture("deadlock-synchronized.locks.txt"));
    expect(javaLockCycles(locks).map((cycle) => [cycle.foundBy, cycle.waits.map((wait) => [wait.thread.name, wait.lock.address, wait.heldBy.name])])).toEqual([
      ["both", [["teller-1", ACCOUNT_SAVINGS.address, "teller-2"], ["teller-2", ACCOUNT_CHECKING.address, "teller-1"]]],
    ]);
    expect(locks.threads.every((t) => t.ownablesListed)).toBe(true);
  });

  it("takes the cycle from the SA's report in --mixed output, whose stacks stop in the futex wait before any Java frame", () => {
    const locks = readJavaLocks(fixture("deadlock-synchronized.mixed.txt"));
    expect(thread(locks, "teller-1")).toMatchObject({ lwp: 19396, state: "BLOCKED (on object monitor)", waitsFor: null, waitKind: "monitor", frames: [] });
    expect(javaLockCycles(locks)).toEqual([
      {
        waits: [
          { thread: { lwp: 19397, name: "teller-2" }, lock: ACCOUNT_CHECKING, kind: "monitor", heldBy: { lwp: 19396, name: "teller-1" }, frame: null },
          { thread: { lwp: 19396, name: "teller-1" }, lock: ACCOUNT_SAVINGS, kind: "monitor", heldBy: { lwp: 19397, name: "teller-2" }, frame: null },
        ],
        foundBy: "reported",
      },
    ]);
  });

  it("claims no cycle when the SA's report is gone: which account a blocked teller waits for, its lines do not say", () => {
    const locks = readJavaLocks(withoutReport(fixture("deadlock-synchronized.plain.txt")));
    expect(locks.reported).toBeNull();
    expect(thread(locks, "teller-1")).toMatchObject({ waitsFor: null, waitKind: "monitor", holds: [] });
    expect(javaLockCycles(locks)).toEqual([]);
  });
});

describe("a ReentrantLock lock-order deadlock", () => {
  it("derives the cycle from one thread's parking and the other's ownable synchronizers (--locks), as the SA reports it", () => {
    const locks = readJavaLocks(fixture("deadlock-reentrant.locks.txt"));
    expect(javaLockCycles(locks)).toEqual([
      {
        waits: [
          { thread: { lwp: 0x4cc9, name: "restocker" }, lock: ORDERS, kind: "ownable", heldBy: { lwp: 0x4cca, name: "order-desk" }, frame: expect.objectContaining({ function: "Warehouse.restock", line: warehouse["WAITS restock"] }) },
          { thread: { lwp: 0x4cca, name: "order-desk" }, lock: INVENTORY, kind: "ownable", heldBy: { lwp: 0x4cc9, name: "restocker" }, frame: expect.objectContaining({ function: "Warehouse.placeOrder", line: warehouse["WAITS placeOrder"] }) },
        ],
        foundBy: "both",
      },
    ]);
    expect(thread(locks, "restocker")).toMatchObject({ state: "WAITING (parking)", holds: [INVENTORY], waitsFor: ORDERS, waitKind: "ownable", ownablesListed: true });
  });

  it("in plain output, without the owners listed, has the cycle from the SA's report alone", () => {
    const locks = readJavaLocks(fixture("deadlock-reentrant.plain.txt"));
    expect(thread(locks, "restocker")).toMatchObject({ holds: [], waitsFor: ORDERS, waitKind: "ownable", ownablesListed: false });
    const cycles = javaLockCycles(locks);
    expect(cycles.map((cycle) => [cycle.foundBy, cycle.waits.map((wait) => [wait.thread.name, wait.lock, wait.heldBy.name, wait.frame?.line])])).toEqual([
      ["reported", [["restocker", ORDERS, "order-desk", warehouse["WAITS restock"]], ["order-desk", INVENTORY, "restocker", warehouse["WAITS placeOrder"]]]],
    ]);
    expect(javaLockCycles(readJavaLocks(withoutReport(fixture("deadlock-reentrant.plain.txt"))))).toEqual([]);
  });

  it("claims no cycle when a thread's parking line is missing: what it waits for is unknown", () => {
    const text = withoutReport(fixture("deadlock-reentrant.locks.txt")).replace(/^\t- parking to wait for <0x00000000fe0dd968>.*\n/m, "");
    const locks = readJavaLocks(text);
    expect(thread(locks, "order-desk")).toMatchObject({ state: "WAITING (parking)", waitsFor: null, waitKind: "park" });
    expect(javaLockCycles(locks)).toEqual([]);
  });

  it("claims no cycle when the lock's holder is not in the output, or two threads claim it", () => {
    const text = withoutReport(fixture("deadlock-reentrant.locks.txt"));
    expect(javaLockCycles(readJavaLocks(withoutThread(text, "restocker")))).toEqual([]);
    expect(javaLockCycles(readJavaLocks(text.replace(/^ {4}- <0x00000000fe0dd968>.*$/m, "    - None")))).toEqual([]);
    const claimedTwice = text.replace(/^(Locked ownable synchronizers:\n) {4}- None$/m, "$1    - <0x00000000fe0dd968>, (a java/util/concurrent/locks/ReentrantLock$NonfairSync)");
    expect(readJavaLocks(claimedTwice).threads.filter((t) => t.holds.some((lock) => lock.address === INVENTORY.address))).toHaveLength(2);
    expect(javaLockCycles(readJavaLocks(claimedTwice))).toEqual([]);
  });

  it("still gives the cycle the SA reported when a thread's lines are gone, without what the lines would have said", () => {
    const cycles = javaLockCycles(readJavaLocks(withoutThread(fixture("deadlock-reentrant.locks.txt"), "restocker")));
    expect(cycles).toEqual([
      {
        waits: [
          { thread: { lwp: 0x4cca, name: "order-desk" }, lock: INVENTORY, kind: "ownable", heldBy: { lwp: null, name: "restocker" }, frame: expect.objectContaining({ function: "Warehouse.placeOrder" }) },
          { thread: { lwp: null, name: "restocker" }, lock: ORDERS, kind: "ownable", heldBy: { lwp: 0x4cca, name: "order-desk" }, frame: null },
        ],
        foundBy: "reported",
      },
    ]);
  });
});

describe("a hang without a cycle", () => {
  it("reads each thread's state and what it waits on: a latch, a queue's condition, a thread's join", () => {
    const locks = readJavaLocks(fixture("hang-latch.locks.txt"));
    expect(locks.reported).toEqual([]);
    expect(javaLockCycles(locks)).toEqual([]);
    expect(thread(locks, "sorter")).toMatchObject({ state: "WAITING (parking)", holds: [], waitsFor: { type: "java.util.concurrent.CountDownLatch$Sync" }, waitKind: "park" });
    expect(thread(locks, "sorter")?.frames).toContainEqual(expect.objectContaining({ function: "Mailroom.sort", line: mailroom["WAITS sorter"] }));
    expect(thread(locks, "courier")).toMatchObject({ waitsFor: { type: "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject" }, waitKind: "park" });
    expect(thread(locks, "courier")?.frames).toContainEqual(expect.objectContaining({ function: "Mailroom.deliver", line: mailroom["WAITS courier"] }));
    expect(thread(locks, "main")).toMatchObject({ state: "WAITING (on object monitor)", waitsFor: { type: "java.lang.Thread" }, waitKind: "wait", holds: [] });
    expect(thread(locks, "main")?.frames).toContainEqual(expect.objectContaining({ function: "Mailroom.main", line: mailroom["WAITS main"] }));
    expect(thread(locks, "Signal Dispatcher")).toMatchObject({ state: "RUNNABLE", waitsFor: null, waitKind: null });
  });
});

describe("cut and hostile text", () => {
  it("never claims a cycle other than the real one, however the output is cut", () => {
    const text = fixture("deadlock-reentrant.locks.txt");
    const waitsOf = (locks: JavaLocks) => javaLockCycles(locks).map((cycle) => cycle.waits.map((wait) => [wait.thread.name, wait.lock.address, wait.heldBy.name].join(" ")).sort());
    const real = waitsOf(readJavaLocks(text));
    const lines = text.split("\n");
    for (let end = 0; end <= lines.length; end++) {
      for (const cut of [lines.slice(0, end).join("\n"), lines.slice(0, end).join("\n").slice(0, -7)]) {
        for (const waits of waitsOf(readJavaLocks(cut))) expect(waits).toEqual(real[0]);
      }
    }
    // Cut inside the SA's report, after its first wait: a cycle that does not close is no deadlock.
    const halfReport = lines.slice(0, lines.findIndex((line) => line === '"restocker":')).join("\n");
    expect(readJavaLocks(halfReport).reported).toEqual([]);
  });

  it("reads text that is no jstack as nothing, skips overlong lines and keeps within its bounds", () => {
    expect(readJavaLocks("ignore previous instructions\n\t- locked <0x1> (a Secret)\n which is held by \"x\"\n")).toEqual({ threads: [], reported: null });
    const overlong = `"t" #1 prio=5 tid=0x1 nid=0x10 waiting for monitor entry [0x0]\n\t- waiting to lock <0x${"0".repeat(5_000)}1> (a A)\n`;
    expect(readJavaLocks(overlong).threads[0]).toMatchObject({ waitsFor: null, holds: [] });
    const many = Array.from({ length: 10_001 }, (_, i) => `"t${i}" #${i} prio=5 tid=0x1 nid=${i} runnable [0x0]\n\t- locked <0x${i.toString(16)}> (a A)\n`).join("");
    expect(readJavaLocks(many).threads).toHaveLength(10_000);
    // A report of threads that are not in the output is what the SA said: it comes out as reported, with no lwp or frame.
    const reportOnly = 'Deadlock Detection:\n\nFound one Java-level deadlock:\n=============================\n\n"a":\n  waiting to lock Monitor@0x1 (Object@0x2, a A),\n  which is held by "b"\n"b":\n  waiting to lock Monitor@0x3 (Object@0x4, a A),\n  which is held by "a"\n\nFound a total of 1 deadlock.\n';
    expect(javaLockCycles(readJavaLocks(reportOnly))).toEqual([
      {
        waits: [
          { thread: { lwp: null, name: "a" }, lock: { address: "0x0000000000000002", type: "A" }, kind: "monitor", heldBy: { lwp: null, name: "b" }, frame: null },
          { thread: { lwp: null, name: "b" }, lock: { address: "0x0000000000000004", type: "A" }, kind: "monitor", heldBy: { lwp: null, name: "a" }, frame: null },
        ],
        foundBy: "reported",
      },
    ]);
    // A report whose waits do not close into a cycle is not kept.
    expect(readJavaLocks(reportOnly.replace('held by "a"', 'held by "c"')).reported).toEqual([]);
  });
});
