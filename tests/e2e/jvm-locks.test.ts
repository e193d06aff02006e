/**
 * Java deadlocks and hangs read from cores of live hung JVMs, made now with gcore: the lock reader on
 * the JDK's `jhsdb jstack --locks` (what tests/unit/jvm-locks.test.ts checks on saved output, here on
 * output the tests make themselves), and dumpdbg's verdict and offline analysis of the same cores.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

import type { Crash, Report } from "../../src/report/schema.js";
import { javaLockCycles, readJavaLocks } from "../../src/runtimes/jvm/index.js";
import { pipeChat, runCli } from "../helpers/cli.js";
import { hasJava } from "../helpers/jvm.js";
import { latchHangCore, reentrantDeadlockCore, synchronizedDeadlockCore, type HungJvmCore } from "../helpers/jvm-hang.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const run = promisify(execFile);

async function triage({ core, java }: HungJvmCore): Promise<Crash> {
  const result = await runCli(["triage", core, "--exe", java, "--json"]);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Crash;
}

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

    // dumpdbg's verdict: a deadlock between the two tellers' threads, where each waits, not "a dump taken on request".
    const crash = await triage(hung);
    expect([crash.kind, crash.signature, crash.runtime?.name]).toEqual(["deadlock", "deadlock | Bank.transfer | Bank.transfer", "jvm"]);
    expect(crash.culprit).toMatchObject({ function: "Bank.transfer", file: "Bank.java", line: hung.sourceLines.WAITS! + 1, language: "java" });
    const cycle = crash.deadlock?.cycle ?? [];
    expect(cycle.map((edge) => [edge.function, edge.file, edge.line, edge.lockName])).toEqual([
      ["Bank.transfer", "Bank.java", hung.sourceLines.WAITS! + 1, "a Bank$Account"],
      ["Bank.transfer", "Bank.java", hung.sourceLines.WAITS! + 1, "a Bank$Account"],
    ]);
    // Each holds the lock the other waits for: the debugger's thread numbers of the two tellers.
    expect([cycle[0]?.heldByThread, cycle[1]?.heldByThread]).toEqual([cycle[1]?.thread, cycle[0]?.thread]);

    const dir = tempDir("dumpdbg-jvm-bank-report-");
    const analysed = await runCli(["analyze", hung.core, "--exe", hung.java, "--offline", "--sessions-dir", "sessions", "--out", "reports", "--json"], { cwd: dir });
    expect(analysed.code, analysed.stderr).toBe(0);
    const report = JSON.parse(analysed.stdout) as Report;
    expect(report.hypotheses.map((h) => h.status)).toEqual(["confirmed", "rejected"]);
    expect(report.conclusion.summary).toMatch(/^A Java deadlock: 2 threads each wait for a lock another holds, in `Bank\.transfer` \(Bank\.java:\d+\) \(E\d+\)/);
    expect(report.conclusion.rootCause).toMatch(/thread \d+ "teller-1" waits in `Bank\.transfer` .* held by thread \d+ "teller-2"/);
    // The cited evidence is jhsdb's reading of the threads, kept in the session's store.
    const jstack = report.evidence.find((e) => /^jhsdb jstack --core \S+ --exe \S+$/.test(e.command));
    expect(jstack).toBeDefined();

    // The chat answers in Java: who holds what, and a teller's Java frames, citing jhsdb's reading.
    const chat = await pipeChat(["chat", report.session.id, "--sessions-dir", "sessions", "--out", "reports", "--provider", "offline"], dir, "who holds the locks?\nwhat is teller-2 doing?\n");
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(new RegExp(`Java deadlock \\[${jstack?.id}\\]: thread \\d+ "teller-1" waits in Bank\\.transfer \\(Bank\\.java:\\d+\\) for a Bank\\$Account \\(0x[0-9a-f]+\\), held by thread \\d+ "teller-2"`));
    expect(chat.stdout).toMatch(/Thread \d+ "teller-2", BLOCKED \(on object monitor\), its Java frames as jhsdb read them \[E\d+\]:\n  Bank\.transfer \(Bank\.java:\d+\)/);
    expect(chat.stdout).toMatch(/It waits to lock a Bank\$Account \(0x[0-9a-f]+\), held by thread \d+ "teller-1"\./);
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

    const crash = await triage(hung);
    expect([crash.kind, crash.signature]).toEqual(["deadlock", "deadlock | Warehouse.placeOrder | Warehouse.restock"]);
    expect(crash.deadlock?.cycle.map((edge) => [edge.function, edge.line, edge.lockName])).toEqual([
      ["Warehouse.restock", hung.sourceLines["WAITS restock"], `a ${sync}`],
      ["Warehouse.placeOrder", hung.sourceLines["WAITS placeOrder"], `a ${sync}`],
    ]);
  });

  it("a hang without a cycle: threads parked on a latch and a queue, main in join", async () => {
    const hung = await latchHangCore(tempDir("dumpdbg-jvm-mailroom-"));
    const locks = readJavaLocks(await jstackLocks(hung));
    expect(javaLockCycles(locks)).toEqual([]);
    expect(["sorter", "courier", "main"].map((name) => locks.threads.find((thread) => thread.name === name)?.waitKind)).toEqual(["park", "park", "wait"]);

    // A hang, said thread by thread in Java, not "a dump taken on request".
    const crash = await triage(hung);
    expect([crash.kind, crash.culprit.function, crash.culprit.line]).toEqual(["hang", "Mailroom.main", hung.sourceLines["WAITS main"]]);
    expect(crash.message).toMatch(/^hung: all 3 Java threads of the program's own wait and no lock cycle joins them: /);
    expect(crash.message).toMatch(new RegExp(`sorter WAITING \\(parking\\) on a java\\.util\\.concurrent\\.CountDownLatch\\$Sync in Mailroom\\.sort \\(Mailroom\\.java:${hung.sourceLines["WAITS sorter"]}\\)`));
  });
});
