/**
 * Deadlocks in a dump of a hung process: which threads wait in a mutex lock and for which
 * mutex, and the cycles of the wait-for graph once each mutex's owner is known. Pure; the
 * triage reads the owners from the mutexes themselves.
 */
import type { Crash } from "../report/schema.js";
import { culpritIndex, normalizeFunctionName, type PlacedFrame } from "./culprit.js";
import { normalizeAddress } from "../debuggers/model.js";

export type DeadlockEdge = NonNullable<Crash["deadlock"]>["cycle"][number];

export interface LockWait {
  thread: number;
  /** The mutex's address, when the lock frame's arguments show it (glibc debug info). */
  lock: string | null;
  /** The program's own frame that asked for the lock. */
  waiter: PlacedFrame | null;
}

/** glibc's mutex lock, and Windows' critical section (ntdll's, and kernel32's name for it). */
const LOCK_FRAME = /^_*(pthread_mutex_(timed|clock)?lock|pthread_mutex_lock_full|lll_mutex_lock_optimized|lll_lock_wait|RtlEnterCriticalSection|RtlpWaitForCriticalSection|EnterCriticalSection)$/;

/** Whether the thread is blocked acquiring a mutex, and which one as far as its frames tell. */
export function lockWait(thread: number, frames: PlacedFrame[]): LockWait | null {
  const locking = frames.filter((frame) => frame.function && LOCK_FRAME.test(normalizeFunctionName(frame.function)));
  if (locking.length === 0) return null;
  let lock: string | null = null;
  for (const frame of locking) {
    const argument = /\b(?:mutex|futex|crit|lpCriticalSection|cs)=(?:\w+@entry=)?(0x[0-9a-f]+)/.exec(frame.args);
    if (argument) {
      lock = normalizeAddress(argument[1] ?? "0");
      break;
    }
  }
  const own = culpritIndex(frames);
  return { thread, lock, waiter: own === null ? null : (frames[own] ?? null) };
}

/**
 * Every cycle of the wait-for graph (thread -> owner of the mutex it waits for), each rotated
 * to start at its lowest thread number, in order of that number.
 */
export function deadlockCycles(waits: LockWait[], ownerOf: Map<string, number>): DeadlockEdge[][] {
  const waitOf = new Map(waits.map((wait) => [wait.thread, wait]));
  const next = (thread: number): number | null => {
    const lock = waitOf.get(thread)?.lock;
    return lock ? (ownerOf.get(lock) ?? null) : null;
  };
  const cycles: DeadlockEdge[][] = [];
  const seen = new Set<number>();
  for (const start of [...waitOf.keys()].sort((a, b) => a - b)) {
    const path: number[] = [];
    let current: number | null = start;
    while (current !== null && !seen.has(current) && !path.includes(current)) {
      path.push(current);
      current = next(current);
    }
    if (current !== null && path.includes(current)) {
      const members = path.slice(path.indexOf(current));
      const lowest = members.indexOf(Math.min(...members));
      const rotated = [...members.slice(lowest), ...members.slice(0, lowest)];
      cycles.push(rotated.map((thread) => edge(waitOf.get(thread), thread, next(thread))));
    }
    for (const thread of path) seen.add(thread);
  }
  return cycles.sort((a, b) => (a[0]?.thread ?? 0) - (b[0]?.thread ?? 0));
}

/** A lock as people say it: `to->lock (0x7ffd…)` when it has a name, else its address. */
export function lockText(edge: Pick<DeadlockEdge, "lock" | "lockName">): string {
  if (edge.lock === null) return "an unknown lock";
  return edge.lockName ? `${edge.lockName} (${edge.lock})` : edge.lock;
}

/**
 * The lock a source line passes to a locking call: `pthread_mutex_lock(&to->lock)` → `to->lock`,
 * `std::lock_guard<std::mutex> g(table_mutex)` → `table_mutex`, `EnterCriticalSection(&cs)` → `cs`.
 */
export function lockExpressionIn(line: string): string | null {
  const call = /\b(?:pthread_mutex_(?:timed|clock)?lock|EnterCriticalSection|mtx_lock|lock_guard\s*<[^>]*>\s*\w+|unique_lock\s*<[^>]*>\s*\w+|scoped_lock(?:\s*<[^>]*>)?\s*\w+)\s*[({]\s*&?\s*([A-Za-z_]\w*(?:(?:->|\.)[A-Za-z_]\w*|\[\w+\])*)/.exec(line);
  return call?.[1] ?? null;
}

/** The lock a line releases: `LeaveCriticalSection(&to->lock)`, `pthread_mutex_unlock(&cache_lock)` → `to->lock`, `cache_lock`. */
export function unlockExpressionIn(line: string): string | null {
  const call = /\b(?:pthread_mutex_unlock|LeaveCriticalSection|mtx_unlock)\s*\(\s*&?\s*([A-Za-z_]\w*(?:(?:->|\.)[A-Za-z_]\w*|\[\w+\])*)/.exec(line);
  return call?.[1] ?? null;
}

/**
 * The locks a function still holds at one of its lines, from its code: each lock call before that
 * line whose lock no later call released, with the line that took it. Pure.
 */
export function locksHeldBefore(lines: { line: number; text: string }[], before: number): { expression: string; line: number }[] {
  const held: { expression: string; line: number }[] = [];
  for (const { line, text } of lines) {
    if (line >= before) break;
    const taken = lockExpressionIn(text);
    if (taken) held.push({ expression: taken, line });
    const released = unlockExpressionIn(text);
    if (released) {
      const at = held.findLastIndex((lock) => lock.expression === released);
      if (at >= 0) held.splice(at, 1);
    }
  }
  return held;
}

/** A global's name from the symbol at an address in data: `audit_log`, `accounts+40`. */
export function globalName(symbol: { symbol: string; offset: number; section: string | null } | null): string | null {
  if (!symbol || !/^\.(bss|data|rodata|tbss|tdata)\b|^(\.data\.rel|_DATA|\.data\$)/.test(symbol.section ?? "")) return null;
  // A PE's section symbol (`.bss`) stands at its first variable's address: no variable's name.
  if (symbol.symbol.startsWith(".")) return null;
  return symbol.offset === 0 ? symbol.symbol : `${symbol.symbol}+${symbol.offset}`;
}

function edge(wait: LockWait | undefined, thread: number, heldBy: number | null): DeadlockEdge {
  const waiter = wait?.waiter ?? null;
  return {
    thread,
    function: waiter?.function ? normalizeFunctionName(waiter.function) : null,
    file: waiter?.file ?? null,
    line: waiter?.line ?? null,
    lock: wait?.lock ?? null,
    heldByThread: heldBy,
  };
}
