/**
 * Real hung JVMs for the tests: a Java program run on the machine's JDK until its threads are stuck
 * (the JDK's own `jstack <pid>` says so), then dumped alive with gdb's `gcore` and killed. Lines the
 * tests look for are marked in the sources with `// LOCKS-FIRST …` and `// WAITS …`.
 *
 * The cores are kept small: a small VM (heap, code cache, class space, the serial collector), one
 * malloc arena instead of one per thread, no file-backed mappings dumped (jhsdb reads the JDK's
 * files from disk), and the zeros of reserved but unused memory turned into holes in the file.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

import { javaLauncher } from "./jvm.js";
import { untilReady } from "./ready.js";

const run = promisify(execFile);

/** A hung JVM's core, the launcher it ran, and the marked lines of its source by their marks. */
export interface HungJvmCore {
  core: string;
  java: string;
  /** `{ "LOCKS-FIRST": 19, "WAITS": 22 }`: each `// LOCKS-FIRST …` or `// WAITS …` comment's text, with its line. */
  sourceLines: Record<string, number>;
}

/** Two tellers transferring between the same two accounts in opposite directions, each `synchronized` on the account it moves from first. */
export const BANK = `import java.util.concurrent.CountDownLatch;

/** Moves money between accounts, locking both: the one it takes from, then the one it pays into. */
public class Bank {
    static class Account {
        final String id;
        long balance;

        Account(String id, long balance) {
            this.id = id;
            this.balance = balance;
        }
    }

    /** Both tellers have their first account before either goes for its second. */
    static final CountDownLatch bothHoldOne = new CountDownLatch(2);

    static void transfer(Account from, Account to, long amount) throws InterruptedException {
        synchronized (from) { // LOCKS-FIRST
            bothHoldOne.countDown();
            bothHoldOne.await();
            synchronized (to) { // WAITS
                from.balance -= amount;
                to.balance += amount;
            }
        }
    }

    static Thread teller(String name, Account from, Account to) {
        return new Thread(() -> {
            try {
                transfer(from, to, 10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, name);
    }

    public static void main(String[] args) throws Exception {
        Account checking = new Account("checking", 100);
        Account savings = new Account("savings", 100);
        Thread first = teller("teller-1", checking, savings);
        Thread second = teller("teller-2", savings, checking);
        first.start();
        second.start();
        bothHoldOne.await();
        System.out.println("ready");
        first.join();
        second.join();
    }
}
`;

/** A restocker and an order desk taking the warehouse's two ReentrantLocks in opposite orders. */
export const WAREHOUSE = `import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

/** Stock and pending orders, each behind its own lock. */
public class Warehouse {
    final ReentrantLock inventory = new ReentrantLock();
    final ReentrantLock orders = new ReentrantLock();
    int stock = 10;
    int pending = 0;

    /** Both workers hold their first lock before either goes for its second. */
    final CountDownLatch bothHoldOne = new CountDownLatch(2);

    void restock(int amount) throws InterruptedException {
        inventory.lock(); // LOCKS-FIRST restock
        try {
            bothHoldOne.countDown();
            bothHoldOne.await();
            orders.lock(); // WAITS restock
            try {
                stock += amount;
                pending -= Math.min(pending, amount);
            } finally {
                orders.unlock();
            }
        } finally {
            inventory.unlock();
        }
    }

    void placeOrder(int amount) throws InterruptedException {
        orders.lock(); // LOCKS-FIRST placeOrder
        try {
            bothHoldOne.countDown();
            bothHoldOne.await();
            inventory.lock(); // WAITS placeOrder
            try {
                stock -= amount;
                pending += amount;
            } finally {
                inventory.unlock();
            }
        } finally {
            orders.unlock();
        }
    }

    interface Job {
        void run() throws InterruptedException;
    }

    static Thread worker(String name, Job job) {
        return new Thread(() -> {
            try {
                job.run();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, name);
    }

    public static void main(String[] args) throws Exception {
        Warehouse warehouse = new Warehouse();
        Thread restocker = worker("restocker", () -> warehouse.restock(5));
        Thread orderDesk = worker("order-desk", () -> warehouse.placeOrder(3));
        restocker.start();
        orderDesk.start();
        warehouse.bothHoldOne.await();
        System.out.println("ready");
        restocker.join();
        orderDesk.join();
    }
}
`;

/** A hang without a cycle: a sorter waiting for a latch nobody counts down, a courier for a queue nobody feeds, main joining them. */
export const MAILROOM = `import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;

/** A mailroom whose sorter waits for it to open and whose courier waits for letters: nobody opens it or posts one. */
public class Mailroom {
    final BlockingQueue<String> outbox = new LinkedBlockingQueue<>();
    final CountDownLatch opened = new CountDownLatch(1);

    void sort() throws InterruptedException {
        opened.await(); // WAITS sorter
        System.out.println("sorting");
    }

    void deliver() throws InterruptedException {
        for (;;) {
            String letter = outbox.take(); // WAITS courier
            System.out.println("delivered " + letter);
        }
    }

    interface Job {
        void run() throws InterruptedException;
    }

    static Thread worker(String name, Job job) {
        return new Thread(() -> {
            try {
                job.run();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, name);
    }

    public static void main(String[] args) throws Exception {
        Mailroom mailroom = new Mailroom();
        Thread sorter = worker("sorter", mailroom::sort);
        Thread courier = worker("courier", mailroom::deliver);
        sorter.start();
        courier.start();
        System.out.println("ready");
        sorter.join(); // WAITS main
        courier.join();
    }
}
`;

const deadlocked = (dump: string) => dump.includes("Found one Java-level deadlock");

/** Bank's tellers deadlocked on each other's account monitor. */
export function synchronizedDeadlockCore(dir: string): Promise<HungJvmCore> {
  return hungJvmCore(dir, "Bank", BANK, deadlocked);
}

/** Warehouse's restocker and order desk deadlocked on each other's ReentrantLock. */
export function reentrantDeadlockCore(dir: string): Promise<HungJvmCore> {
  return hungJvmCore(dir, "Warehouse", WAREHOUSE, deadlocked);
}

/** Mailroom's sorter parked on its latch, its courier on the empty queue, main waiting in join. */
export function latchHangCore(dir: string): Promise<HungJvmCore> {
  return hungJvmCore(dir, "Mailroom", MAILROOM, (dump) => ["sorter", "courier", "main"].every((name) => stateOf(dump, name) === "WAITING"));
}

const VM = ["-Xmx32m", "-Xss512k", "-XX:ReservedCodeCacheSize=16m", "-XX:CompressedClassSpaceSize=16m", "-XX:+UseSerialGC", "-XX:-UsePerfData"];
/** How long the program may take to print "ready", and then its threads to get stuck. */
const SETTLE_TIMEOUT_MS = 60_000;
const GCORE_TIMEOUT_MS = 120_000;
/** Anonymous private and shared memory, ELF headers, huge pages: not the JDK's files the process maps. */
const COREDUMP_FILTER = "0x33";

/** Builds and runs the program, waits until `stuck` holds of its live thread dump, dumps it and kills it, whatever happens. */
async function hungJvmCore(dir: string, className: string, source: string, stuck: (dump: string) => boolean): Promise<HungJvmCore> {
  const file = path.join(dir, `${className}.java`);
  writeFileSync(file, source);
  await run("javac", ["-nowarn", "-d", dir, file]);
  const java = javaLauncher();
  const jstack = path.join(path.dirname(java), "jstack");
  const child = spawn(java, [...VM, "-cp", dir, className], { cwd: dir, env: { ...process.env, MALLOC_ARENA_MAX: "1" }, stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise<void>((resolve) => {
    child.once("close", () => resolve());
    child.once("error", () => resolve());
  });
  try {
    await untilReady(child, className, SETTLE_TIMEOUT_MS);
    const pid = child.pid!;
    await settled(jstack, pid, className, stuck);
    writeFileSync(`/proc/${pid}/coredump_filter`, COREDUMP_FILTER);
    const prefix = path.join(dir, className);
    const core = `${prefix}.${pid}`;
    const dumped = await run("gcore", ["-o", prefix, String(pid)], { timeout: GCORE_TIMEOUT_MS, encoding: "utf8" }).then(
      (result) => result.stdout + result.stderr,
      (error: { stdout?: string; stderr?: string; message: string }) => `${error.message}\n${error.stdout ?? ""}${error.stderr ?? ""}`,
    );
    if (!existsSync(core)) throw new Error(`gcore wrote no core of ${className} (pid ${pid})${ptraceScope()}:\n${dumped}`);
    await run("fallocate", ["--dig-holes", core]).catch(() => undefined);
    return { core, java, sourceLines: markedLines(source) };
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
}

/** Polls the JDK's `jstack <pid>` until the dump shows the threads stuck. */
async function settled(jstack: string, pid: number, className: string, stuck: (dump: string) => boolean): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let dump = "";
  while (Date.now() < deadline) {
    dump = await run(jstack, [String(pid)], { timeout: Math.max(1_000, deadline - Date.now()), encoding: "utf8" }).then(
      (result) => result.stdout,
      () => "",
    );
    if (stuck(dump)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${className}'s threads were not stuck after ${SETTLE_TIMEOUT_MS / 1000} s; its last jstack:\n${dump}`);
}

/** `java.lang.Thread.State` of the named thread in a live `jstack` dump: `WAITING`. */
function stateOf(dump: string, name: string): string | null {
  const lines = dump.split("\n");
  const header = lines.findIndex((line) => line.startsWith(`"${name}" `));
  return header < 0 ? null : (/java\.lang\.Thread\.State: (\w+)/.exec(lines[header + 1] ?? "")?.[1] ?? null);
}

/** The marked lines of a source by their marks: `// WAITS restock` on line 19 is `{ "WAITS restock": 19 }`. */
export function markedLines(source: string): Record<string, number> {
  const lines: Record<string, number> = {};
  source.split("\n").forEach((line, index) => {
    const mark = /\/\/ ((?:LOCKS-FIRST|WAITS)\b.*)$/.exec(line);
    if (mark) lines[mark[1]!] = index + 1;
  });
  return lines;
}

/** gdb attaches with ptrace, which Yama restricts to a process's ancestors unless its scope is 0. */
function ptraceScope(): string {
  const scope = "/proc/sys/kernel/yama/ptrace_scope";
  return existsSync(scope) ? ` (${scope} is ${readFileSync(scope, "utf8").trim()}; gdb attaches with ptrace, which needs 0 here)` : "";
}
