/**
 * A hung process without a lock cycle: what each thread is blocked on, read from its stack (the
 * wait call the program made), and whether every thread is blocked, which makes it a hang even
 * when no wait records an owner (semaphores, condition variables, Python's locks). Pure.
 */
import type { Frame } from "../debuggers/model.js";
import { culpritIndex, normalizeFunctionName, type PlacedFrame } from "./culprit.js";

/** The wait calls a thread blocks in, innermost first, and what a person calls what it waits for. */
const WAITS: [RegExp, string][] = [
  [/^_*pthread_cond_(timed|clock)?wait/, "a condition variable"],
  [/^_*(new_)?sem_(timed|clock)?wait|^__new_sem_wait/, "a semaphore"],
  [/^_*pthread_rwlock_(rd|wr|timedrd|timedwr|clockrd|clockwr)lock/, "a read-write lock"],
  [/^_*pthread_mutex_(timed|clock)?lock|^__lll_lock_wait/, "a mutex"],
  [/^_*pthread_(timed|try|clock)?join/, "another thread to finish"],
  [/^_*pthread_barrier_wait/, "a barrier"],
  [/^_*(poll|ppoll|select|pselect6?|epoll_p?wait|read|recv|recvfrom|recvmsg|accept4?|connect)$/, "I/O"],
  [/^_*(nanosleep|clock_nanosleep|sleep|usleep)$/, "a sleep to end"],
  [/^_*(wait4?|waitpid|waitid)$/, "a child process"],
  [/^_*(pause|sigsuspend|sigtimedwait|sigwaitinfo|sigwait)$/, "a signal"],
  [/^(futex_wait|__futex_abstimed_wait_common(64)?|futex_abstimed_wait(_cancelable)?|syscall)$/, "a futex"],
];

/** CPython's one lock primitive, under every threading.Lock, Semaphore, Condition, Event and join. */
const PYTHON_LOCK = "a Python lock (a threading Lock, Semaphore, Condition or Event, or a join)";

/** Waits said "for" (a thread to finish) rather than "on" (a semaphore). */
const WAITED_FOR = new Set(["another thread to finish", "a sleep to end", "a child process", "a signal"]);

/** What only another thread of the process can end. */
const SYNCHRONISATION = new Set(["a condition variable", "a semaphore", "a read-write lock", "a mutex", "another thread to finish", "a barrier", "a futex", PYTHON_LOCK]);

export interface BlockedThread {
  thread: number;
  /** What it waits for ("a condition variable"). */
  waitsFor: string;
  /** The program's own function that made the wait call, when its frames show one. */
  waiter: string | null;
}

/** What a thread is blocked on, from its frames; null when it is running (no wait call on top). */
export function blockedOn(thread: number, frames: PlacedFrame[]): BlockedThread | null {
  const own = culpritIndex(frames);
  const waitsFor = waitCall(frames.slice(0, own === null ? frames.length : own));
  if (waitsFor === null) return null;
  const waiter = own === null ? null : frames[own]?.function ? normalizeFunctionName(frames[own]!.function!) : null;
  // The interpreter's wait names the Python object better than the semaphore under it.
  if (waiter !== null && /^PyThread_acquire_lock(_timed)?$/.test(waiter)) return { thread, waitsFor: PYTHON_LOCK, waiter: null };
  return { thread, waitsFor, waiter };
}

/**
 * What the wait calls among `frames` wait for ("a condition variable"), or null when none is one:
 * the outermost names the wait best (pthread_cond_wait over the futex_wait under it).
 */
export function waitCall(frames: Frame[]): string | null {
  let waitsFor: string | null = null;
  for (const frame of frames) {
    const name = frame.function ? normalizeFunctionName(frame.function) : "";
    const found = WAITS.find(([pattern]) => pattern.test(name));
    if (found) waitsFor = found[1] === "a futex" && waitsFor ? waitsFor : found[1];
  }
  return waitsFor;
}

/**
 * "all 4 threads are blocked waiting: 3 on a condition variable (in worker_main), 1 for another
 * thread to finish (in main)", when every thread is blocked; null when any one is running.
 */
export function blockedThreads(framesOf: Map<number, PlacedFrame[]>): string | null {
  if (framesOf.size === 0) return null;
  const blocked = [...framesOf].map(([thread, frames]) => blockedOn(thread, frames));
  // Only waits another thread must end make a hang: a sleep ends by itself, and a thread waiting
  // for I/O, a child or a signal may just be idle until something arrives.
  if (blocked.some((b) => b === null || !SYNCHRONISATION.has(b.waitsFor))) return null;
  const groups = new Map<string, { count: number; waiters: Set<string> }>();
  for (const b of blocked as BlockedThread[]) {
    const group = groups.get(b.waitsFor) ?? { count: 0, waiters: new Set<string>() };
    group.count += 1;
    if (b.waiter) group.waiters.add(b.waiter);
    groups.set(b.waitsFor, group);
  }
  const parts = [...groups]
    .sort((a, b) => b[1].count - a[1].count)
    .map(([what, g]) => `${g.count} ${WAITED_FOR.has(what) ? "for" : "on"} ${what}${g.waiters.size ? ` (in ${[...g.waiters].slice(0, 3).join(", ")})` : ""}`);
  const n = framesOf.size;
  return `${n === 1 ? "its only thread is" : `all ${n} threads are`} blocked waiting: ${parts.join(", ")}`;
}

/** A hang's message: what the threads are blocked on, and that the dump cannot say who should have woken them. */
export function hangMessage(blocked: string): string {
  return `hung: ${blocked}; no wait records an owner, so who should have woken them is not in the dump`;
}
