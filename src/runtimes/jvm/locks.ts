/**
 * Which Java locks each thread holds and waits for, read from `jhsdb jstack` output (plain, or with
 * `--locks` for the ownable synchronizers: ReentrantLock and the like), and the cycles among them:
 * Java-level deadlocks. The SA's own "Deadlock Detection:" section is read as well and cross-checked.
 * Pure; the text comes from a core, so it is read bounded, as jstack.ts reads it.
 */
import { jstackLines, type JstackFrame } from "./jstack.js";

/** A Java object used as a lock: its address as the SA prints it, zero-padded, and its class. */
export interface LockRef {
  address: string;
  /** `Bank$Account`, `java.util.concurrent.locks.ReentrantLock$NonfairSync` (the SA's slashes made dots). */
  type: string;
}

/**
 * How a thread waits: to enter a monitor (`synchronized`), for an ownable synchronizer another thread
 * holds (a ReentrantLock), in `Object.wait()` to be notified, or parked on anything else (a latch, a
 * queue's condition).
 */
export type WaitKind = "monitor" | "ownable" | "wait" | "park";

export interface JavaThreadLocks {
  lwp: number | null;
  name: string | null;
  /** `java.lang.Thread.State` as printed: `BLOCKED (on object monitor)`, `WAITING (parking)`. */
  state: string | null;
  holds: LockRef[];
  /** What it waits for; null when it does not wait, or when the output does not name it (`waitKind` says how it waits then). */
  waitsFor: LockRef | null;
  waitKind: WaitKind | null;
  /** Its Java frames, innermost first. */
  frames: JstackFrame[];
  /** Whether its "Locked ownable synchronizers:" were listed (`--locks`): without them, the ReentrantLocks it holds are unknown. */
  ownablesListed: boolean;
}

/** One wait of a deadlock the SA printed: the thread by its name, the lock, and the holder's name. */
export interface ReportedWait {
  thread: string;
  lock: LockRef;
  kind: "monitor" | "ownable";
  heldBy: string;
}

export interface JavaLocks {
  threads: JavaThreadLocks[];
  /** The SA's deadlocks, each a closed cycle of waits; null when the output holds no "Deadlock Detection:" section. */
  reported: ReportedWait[][] | null;
}

export interface ThreadRef {
  lwp: number | null;
  name: string | null;
}

/** One thread of a cycle waiting for a lock another holds. */
export interface LockWait {
  thread: ThreadRef;
  lock: LockRef;
  kind: "monitor" | "ownable";
  heldBy: ThreadRef;
  /** Where it waits: its innermost frame in the program's own code (outside the JDK's packages), else its top Java frame; null when none was printed. */
  frame: JstackFrame | null;
}

export interface JavaLockCycle {
  waits: LockWait[];
  /** "derived" from the threads' own lock lines, "reported" by the SA's deadlock detection alone, or "both". */
  foundBy: "derived" | "reported" | "both";
}

const MAX_THREADS = 10_000;
const MAX_FRAMES = 1_000;
const MAX_LOCKS = 1_000;
const MAX_DEADLOCKS = 1_000;

const ADDRESS = "(0x[0-9a-fA-F]{1,16})";
const TYPE = "([^()]{1,500})";
const STATE = /^\s+java\.lang\.Thread\.State: (\S.{0,100})$/;
/** `\t- locked <0x00000000fe0de048> (a Bank$Account)`, `\t- parking to wait for <0x…> (a java/util/concurrent/locks/ReentrantLock$NonfairSync)` */
const LOCK_LINE = new RegExp(`^\\s+- (locked|waiting to lock|waiting to re-lock in wait\\(\\)|waiting on|parking to wait for|eliminated)\\s+<${ADDRESS}> \\(a ${TYPE}\\)$`);
const OWNABLES = /^\s*Locked ownable synchronizers:$/;
/** `    - <0x00000000fe0b1e90>, (a java/util/concurrent/locks/ReentrantLock$NonfairSync)` */
const OWNABLE = new RegExp(`^\\s+- <${ADDRESS}>,? \\(a ${TYPE}\\)$`);

const DEADLOCK_DETECTION = /^Deadlock Detection:$/;
const FOUND_ONE = /^Found one Java-level deadlock:$/;
const FOUND_TOTAL = /^Found a total of \d+ deadlocks?\.$/;
const DEADLOCKED_THREAD = /^"(.{0,500})":$/;
/** `  waiting to lock Monitor@0x000055c2618a8490 (Object@0x00000000fe0de090, a Bank$Account),` */
const WAITING_MONITOR = new RegExp(`^\\s*waiting to lock (?:Monitor@|monitor )0x[0-9a-fA-F]{1,16} \\((?:Object@|object )${ADDRESS}, a ${TYPE}\\),$`);
/** ` waiting for ownable synchronizer 0x00000000fe0b1e90, (a java/util/concurrent/locks/ReentrantLock$NonfairSync),` */
const WAITING_OWNABLE = new RegExp(`^\\s*waiting for ownable synchronizer ${ADDRESS}, \\(a ${TYPE}\\),$`);
const HELD_BY = /^\s*which is held by "(.{0,500})"$/;

/** The JDK's exclusive ownable synchronizers: a thread parked on one waits for the thread that owns it. */
const OWNABLE_TYPES = new Set([
  "java.util.concurrent.locks.ReentrantLock$NonfairSync",
  "java.util.concurrent.locks.ReentrantLock$FairSync",
  "java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync",
  "java.util.concurrent.locks.ReentrantReadWriteLock$FairSync",
]);
const JDK_PACKAGE = /^(?:java|javax|jdk|sun|com\.sun)\./;

/** A thread as its lines are read, before what they say is settled. */
interface ThreadLines {
  lwp: number;
  name: string;
  state: string | null;
  frames: JstackFrame[];
  javaFrames: number;
  locked: LockRef[];
  /** The monitors its top frame lists as locked. */
  topLocked: LockRef[];
  wait: { kind: WaitKind; lock: LockRef | null } | null;
  /** Its "Locked ownable synchronizers:"; null where they were not listed. */
  ownables: LockRef[] | null;
}

/** The "Deadlock Detection:" section as its lines are read: the cycles closed so far and the one being read. */
interface DeadlockLines {
  closed: ReportedWait[][];
  open: ReportedWait[] | null;
  /** Waits read in all, bounded as threads are. */
  waits: number;
  waiter: string | null;
  awaited: { lock: LockRef; kind: "monitor" | "ownable" } | null;
}

export function readJavaLocks(text: string): JavaLocks {
  const read: ThreadLines[] = [];
  let current: ThreadLines | null = null;
  let inOwnables = false;
  let deadlocks: DeadlockLines | null = null;
  let inDeadlocks = false;
  for (const record of jstackLines(text)) {
    if (record.kind === "thread") {
      if (inDeadlocks) closeCycle(deadlocks!);
      inDeadlocks = false;
      inOwnables = false;
      current = read.length < MAX_THREADS ? { lwp: record.lwp, name: record.name, state: null, frames: [], javaFrames: 0, locked: [], topLocked: [], wait: null, ownables: null } : null;
      if (current) read.push(current);
      continue;
    }
    if (record.kind === "frame") {
      if (current && record.frame.language === "java") {
        current.javaFrames++;
        if (current.frames.length < MAX_FRAMES) current.frames.push(record.frame);
      }
      continue;
    }
    if (record.kind !== "text") continue;
    const line = record.line;
    if (DEADLOCK_DETECTION.test(line)) {
      deadlocks ??= { closed: [], open: null, waits: 0, waiter: null, awaited: null };
      inDeadlocks = true;
      continue;
    }
    if (inDeadlocks) {
      inDeadlocks = readDeadlockLine(deadlocks!, line);
      continue;
    }
    if (!current) continue;
    const state = STATE.exec(line);
    if (state) {
      current.state = state[1]!;
      continue;
    }
    if (OWNABLES.test(line)) {
      inOwnables = true;
      current.ownables ??= [];
      continue;
    }
    const ownable = inOwnables ? OWNABLE.exec(line) : null;
    if (ownable) {
      if (current.ownables!.length < MAX_LOCKS) current.ownables!.push(lockRef(ownable[1]!, ownable[2]!));
      continue;
    }
    const lock = LOCK_LINE.exec(line);
    if (lock) readLockLine(current, lock[1]!, lockRef(lock[2]!, lock[3]!));
  }
  if (inDeadlocks) closeCycle(deadlocks!);
  const reported = deadlocks?.closed ?? null;
  const threads = settleAll(read, reported ?? []);
  return { threads, reported };
}

/** Reads one line of the SA's deadlock section; false once the section has ended. */
function readDeadlockLine(section: DeadlockLines, line: string): boolean {
  if (FOUND_ONE.test(line)) {
    closeCycle(section);
    section.open = [];
    return true;
  }
  if (FOUND_TOTAL.test(line)) {
    closeCycle(section);
    return false;
  }
  const waiter = DEADLOCKED_THREAD.exec(line);
  if (waiter) {
    section.waiter = waiter[1]!;
    section.awaited = null;
    return true;
  }
  const monitor = WAITING_MONITOR.exec(line);
  const ownable = monitor ? null : WAITING_OWNABLE.exec(line);
  if (monitor || ownable) {
    section.awaited = { lock: lockRef((monitor ?? ownable)![1]!, (monitor ?? ownable)![2]!), kind: monitor ? "monitor" : "ownable" };
    return true;
  }
  const holder = HELD_BY.exec(line);
  if (holder && section.open && section.waiter !== null && section.awaited && section.waits < MAX_THREADS) {
    section.waits++;
    section.open.push({ thread: section.waiter, ...section.awaited, heldBy: holder[1]! });
    section.waiter = null;
    section.awaited = null;
  }
  return true;
}

/** Keeps the cycle being read if it closes: each wait's holder is the next one's waiter, the last's the first's. */
function closeCycle(section: DeadlockLines): void {
  const waits = section.open;
  section.open = null;
  if (!waits || waits.length === 0 || section.closed.length >= MAX_DEADLOCKS) return;
  if (waits.every((wait, index) => wait.heldBy === waits[(index + 1) % waits.length]!.thread)) section.closed.push(waits);
}

function readLockLine(thread: ThreadLines, verb: string, lock: LockRef): void {
  const top = thread.javaFrames <= 1;
  if (verb === "locked") {
    if (thread.locked.length < MAX_LOCKS) thread.locked.push(lock);
    if (top && thread.topLocked.length < MAX_LOCKS) thread.topLocked.push(lock);
    return;
  }
  // A lock escape analysis removed ("eliminated") is no lock another thread can wait for.
  if (verb === "eliminated" || thread.wait !== null) return;
  thread.wait = { kind: verb === "waiting on" ? "wait" : verb === "parking to wait for" ? "park" : "monitor", lock };
}

function settleAll(read: ThreadLines[], reported: ReportedWait[][]): JavaThreadLocks[] {
  const named = new Map<string, number>();
  for (const thread of read) named.set(thread.name, (named.get(thread.name) ?? 0) + 1);
  const reportedMonitor = new Map<string, LockRef>();
  for (const wait of reported.flat()) if (wait.kind === "monitor" && named.get(wait.thread) === 1) reportedMonitor.set(wait.thread, wait.lock);
  const owned = new Set(read.flatMap((thread) => thread.ownables ?? []).map((lock) => lock.address));
  return read.map((thread) => settle(thread, reportedMonitor.get(thread.name) ?? null, owned));
}

/** What a thread's lines say it holds and waits for; `reported`, the monitor the SA's deadlock report says it waits for. */
function settle(thread: ThreadLines, reported: LockRef | null, owned: Set<string>): JavaThreadLocks {
  let waitKind = thread.wait?.kind ?? waitKindOfState(thread.state);
  let waitsFor = thread.wait?.lock ?? null;
  let unsure = new Set<string>();
  if (waitKind === "monitor" && waitsFor === null) {
    // The interpreter records a monitor in the frame before it enters it, so the SA lists the one a
    // blocked thread waits for among its top frame's "locked": which one, only its deadlock report says.
    if (reported && thread.topLocked.some((lock) => lock.address === reported.address)) waitsFor = reported;
    else unsure = new Set(thread.topLocked.map((lock) => lock.address));
  }
  // Parked on one of the JDK's ownable locks, or on a lock a thread owns: it waits for the lock's owner.
  if (waitKind === "park" && waitsFor && (OWNABLE_TYPES.has(waitsFor.type) || owned.has(waitsFor.address))) waitKind = "ownable";
  const holds: LockRef[] = [];
  const seen = new Set<string>();
  for (const lock of [...thread.locked, ...(thread.ownables ?? [])]) {
    // A thread holds no monitor it waits to enter, nor the one it waits on in Object.wait(): wait() released it.
    if (lock.address === waitsFor?.address || unsure.has(lock.address) || seen.has(lock.address)) continue;
    seen.add(lock.address);
    holds.push(lock);
  }
  return { lwp: thread.lwp, name: thread.name, state: thread.state, holds, waitsFor, waitKind, frames: thread.frames, ownablesListed: thread.ownables !== null };
}

function waitKindOfState(state: string | null): WaitKind | null {
  if (state === null) return null;
  if (/^BLOCKED\b/.test(state)) return "monitor";
  if (/^(?:TIMED_)?WAITING \(on object monitor\)/.test(state)) return "wait";
  if (/^(?:TIMED_)?WAITING \(parking\)/.test(state)) return "park";
  return null;
}

function lockRef(address: string, type: string): LockRef {
  return { address: `0x${BigInt(address).toString(16).padStart(16, "0")}`, type: type.replace(/\//g, ".") };
}

/**
 * The cycles of threads each waiting for a lock the next one holds: monitors and ownable
 * synchronizers, the holder of each known from the threads' own lines (one thread, not the waiter).
 * The SA's reported deadlocks are checked against them; one the lines do not show comes out too.
 */
export function javaLockCycles(locks: JavaLocks): JavaLockCycle[] {
  const { threads } = locks;
  const holders = new Map<string, JavaThreadLocks[]>();
  for (const thread of threads) {
    for (const lock of thread.holds) {
      const held = holders.get(lock.address);
      if (held) held.push(thread);
      else holders.set(lock.address, [thread]);
    }
  }
  const next = new Map<JavaThreadLocks, JavaThreadLocks>();
  for (const thread of threads) {
    if (!thread.waitsFor || (thread.waitKind !== "monitor" && thread.waitKind !== "ownable")) continue;
    const held = holders.get(thread.waitsFor.address) ?? [];
    // Two threads claiming one lock is evidence that disagrees with itself: no holder is known then.
    if (held.length === 1 && held[0] !== thread) next.set(thread, held[0]!);
  }
  const order = new Map(threads.map((thread, index) => [thread, index]));
  const cycles: JavaLockCycle[] = [];
  const done = new Set<JavaThreadLocks>();
  for (const start of threads) {
    const path: JavaThreadLocks[] = [];
    const onPath = new Set<JavaThreadLocks>();
    let thread = next.has(start) ? start : undefined;
    while (thread && !done.has(thread) && !onPath.has(thread)) {
      path.push(thread);
      onPath.add(thread);
      thread = next.get(thread);
    }
    if (thread && onPath.has(thread)) {
      const ring = path.slice(path.indexOf(thread)).map((waiter) => ({ wait: waitOf(waiter, waiter.frames, waiter.waitsFor!, waiter.waitKind as "monitor" | "ownable", next.get(waiter)!), order: order.get(waiter)! }));
      cycles.push({ waits: fromFirstPrinted(ring), foundBy: "derived" });
    }
    for (const seen of path) done.add(seen);
  }
  for (const reported of locks.reported ?? []) {
    const same = cycles.find((cycle) => sameWaits(cycle.waits, reported));
    if (same) same.foundBy = "both";
    else cycles.push({ waits: reportedWaits(reported, threads, order), foundBy: "reported" });
  }
  return cycles;
}

function waitOf(thread: ThreadRef, frames: JstackFrame[], lock: LockRef, kind: "monitor" | "ownable", holder: ThreadRef): LockWait {
  return { thread: { lwp: thread.lwp, name: thread.name }, lock, kind, heldBy: { lwp: holder.lwp, name: holder.name }, frame: waitingFrame(frames) };
}

/** The SA's cycle in the threads' terms; a name the output holds twice, or not at all, has no lwp or frames. */
function reportedWaits(reported: ReportedWait[], threads: JavaThreadLocks[], order: Map<JavaThreadLocks, number>): LockWait[] {
  const named = new Map<string, JavaThreadLocks | null>();
  for (const thread of threads) if (thread.name !== null) named.set(thread.name, named.has(thread.name) ? null : thread);
  const ref = (name: string): ThreadRef => ({ lwp: named.get(name)?.lwp ?? null, name });
  return fromFirstPrinted(
    reported.map((wait) => {
      const thread = named.get(wait.thread) ?? null;
      return { wait: waitOf(ref(wait.thread), thread?.frames ?? [], wait.lock, wait.kind, ref(wait.heldBy)), order: thread ? order.get(thread)! : Number.MAX_SAFE_INTEGER };
    }),
  );
}

/** A cycle's waits starting at the thread the output printed first, so that one cycle reads the same however it was found. */
function fromFirstPrinted(ring: { wait: LockWait; order: number }[]): LockWait[] {
  const first = ring.reduce((best, entry, index) => (entry.order < ring[best]!.order ? index : best), 0);
  return [...ring.slice(first), ...ring.slice(0, first)].map((entry) => entry.wait);
}

function sameWaits(waits: LockWait[], reported: ReportedWait[]): boolean {
  const key = (name: string | null, address: string) => `${name}\u0000${address}`;
  const derived = new Set(waits.map((wait) => key(wait.thread.name, wait.lock.address)));
  return derived.size === reported.length && reported.every((wait) => derived.has(key(wait.thread, wait.lock.address)));
}

/** Where a thread waits in the program: its innermost frame outside the JDK's packages, else its top Java frame. */
function waitingFrame(frames: JstackFrame[]): JstackFrame | null {
  return frames.find((frame) => frame.function !== null && !JDK_PACKAGE.test(frame.function)) ?? frames[0] ?? null;
}
