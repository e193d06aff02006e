/**
 * A hung process: the threads blocked on locks, each lock's owner read from the lock itself (glibc's
 * `__owner`, a CRITICAL_SECTION's `OwningThread`, .NET's monitors), and the cycles of who waits for
 * whom. Threads a debugger cannot unwind are read from their stack memory.
 */
import { hex } from "../../debuggers/dumpfile/file.js";
import type { Inspector } from "../../debuggers/inspector.js";
import { debuggerLevel, toBigInt } from "../../debuggers/model.js";
import type { Probe, TargetFiles } from "../../debuggers/probe.js";
import { listed } from "../../report/numbers.js";
import { holds, NULL_PAGE_LIMIT } from "../address-space.js";
import { culpritIndex, placeFrames, type PlacedFrame } from "../culprit.js";
import { deadlockCycles, globalName, lockExpressionIn, locksHeldBefore, lockWait, type DeadlockEdge, type LockWait } from "../deadlock.js";
import { mutexOwnerExpression } from "../glibc.js";
import type { ManagedFindings } from "../managed.js";
import { criticalSectionOf, criticalSectionOwnerAddress } from "../windows.js";
import { argumentRegisters } from "../x86-64.js";
import { scanStack, type LineReader } from "./scan.js";
import type { Stop } from "./stop.js";
import { unwindLost, type Target } from "./target.js";

/** Every thread's stack, as the deadlock search reads them (the chat asks the same, so the store answers it). */
export const ALL_STACKS = { kind: "thread-backtraces", threads: "all", limit: 64 } as const satisfies Probe;
/** Stack words searched for the critical section a thread waits on, and pointers tried. */
const CRITICAL_SECTION_SCAN_WORDS = 256;
const MAX_CRITICAL_SECTION_CANDIDATES = 48;

export interface Hang {
  /** Cycles of threads each waiting for a lock the next one holds, native and managed. */
  cycles: DeadlockEdge[][];
  /**
   * With no cycle found among two or more threads waiting for locks: those whose lock's holder
   * could be neither read from the lock nor inferred from the waiting code. A cycle through them
   * can be neither seen nor ruled out.
   */
  unreadOwners: number[];
  /**
   * With no cycle found: threads stopped where the debugger cannot unwind whose frames the stack
   * scan could not find either (the program's module not here) and on whose stacks no held lock
   * lies. What they wait for, and so whether they deadlocked, is not shown.
   */
  unreadStacks: number[];
  /** Every thread's frames, as read for the search (none when the process was not stopped from outside). */
  framesOf: Map<number, PlacedFrame[]>;
}

/** Only a dump no fault stopped is searched: a live process dumped, or one killed from outside. */
export async function readHang(q: Inspector, target: Target, stop: Stop, dotnet: ManagedFindings | null): Promise<Hang> {
  const native = stop.externallyStopped ? await findDeadlocks(q, target) : { cycles: [], unreadOwners: [], unreadStacks: [], framesOf: new Map<number, PlacedFrame[]>() };
  const cycles = [...native.cycles, ...(dotnet?.cycles ?? [])];
  return { cycles, unreadOwners: cycles.length > 0 ? [] : native.unreadOwners, unreadStacks: cycles.length > 0 ? [] : native.unreadStacks, framesOf: native.framesOf };
}

async function findDeadlocks(q: Inspector, target: Target): Promise<Hang> {
  const { threads, files, os } = target;
  const traces = await q.threadBacktraces(ALL_STACKS.threads, ALL_STACKS.limit);
  const framesOf = new Map(traces.map((trace) => [trace.thread, placeFrames(trace.frames, target.moduleAt, null)]));
  const threadOfLwp = new Map(threads.flatMap((thread) => (thread.lwp === null ? [] : [[thread.lwp, thread.id] as const])));
  const waits: LockWait[] = [];
  const foundOnStack: number[] = [];
  // Threads whose lock call only the stack scan shows (the program's call into a libc not here).
  const scannedLockCalls = new Set<number>();
  const unreadStacks: number[] = [];
  for (const [thread, frames] of framesOf) {
    const wait = lockWait(thread, frames);
    if (wait) {
      waits.push(wait);
      continue;
    }
    // A thread stopped in a module the debugger cannot unwind (a system DLL, a libc missing here or
    // in another build): its frames from its stack memory, and the lock it waits for from its stack too.
    if (!unwindLost(frames, files, target.foreign, target.libraries)) continue;
    const found = await waitOnStack(q, thread, frames, target, threadOfLwp);
    if (!found) {
      // No frame of the program's own on the stack (its module not here): a critical section another
      // thread holds, found on the stack, still shows the wait; without one the stack shows nothing.
      const lock = os === "windows" ? await heldCriticalSectionOfThread(q, thread, target, threadOfLwp) : null;
      if (lock) {
        waits.push({ thread, lock, waiter: null });
        foundOnStack.push(thread);
      } else unreadStacks.push(thread);
      continue;
    }
    framesOf.set(thread, found.frames);
    if (found.wait) {
      waits.push(found.wait);
      if (os === "windows") foundOnStack.push(thread);
      else scannedLockCalls.add(thread);
    }
  }
  if (foundOnStack.length > 0) {
    const many = foundOnStack.length > 1;
    q.problems.push(`without the system modules no frame names the lock a thread waits for: the critical sections thread${many ? "s" : ""} ${foundOnStack.join(", ")} wait${many ? "" : "s"} on were found on ${many ? "their stacks" : "its stack"} (one another thread holds, or the global the waiting line passes)`);
  }
  if (waits.length < 2) return { cycles: [], unreadOwners: [], unreadStacks, framesOf };
  // Without glibc's debug info the lock frames show no arguments; a thread blocked in the futex
  // syscall still has the futex word, which is the mutex's first field, in its first argument register.
  // A lock call only the stack scan shows is read so only when the thread is shown in that syscall.
  const fromFutex: number[] = [];
  for (const wait of waits.filter((w) => w.lock === null)) {
    if (scannedLockCalls.has(wait.thread) && !(await inFutexWait(q, wait.thread))) continue;
    const value = toBigInt(await q.register(argumentRegisters(os)[0] ?? "rdi", { thread: wait.thread }));
    if (value !== null && value >= NULL_PAGE_LIMIT) {
      wait.lock = hex(value);
      if (scannedLockCalls.has(wait.thread)) fromFutex.push(wait.thread);
    }
  }
  if (fromFutex.length > 0) {
    const many = fromFutex.length > 1;
    q.problems.push(
      `the debugger could not unwind thread${many ? "s" : ""} ${listed(fromFutex.sort((a, b) => a - b))} in a library whose file is not here as it ran: ${many ? "their" : "its"} calls to lock a mutex were found by scanning ${many ? "their stacks" : "its stack"}, and the mutex each waits for is the futex word its futex system call was given`,
    );
  }
  const ownerOf = new Map<string, number>();
  for (const lock of new Set(waits.map((wait) => wait.lock).filter((lock): lock is string => lock !== null))) {
    const owner = os === "windows" ? await criticalSectionOwner(q, lock) : await q.evaluate(mutexOwnerExpression(lock));
    const thread = owner !== null && /^\d+$/.test(owner) ? threadOfLwp.get(Number(owner)) : undefined;
    if (thread !== undefined) ownerOf.set(lock, thread);
  }
  // The locks themselves not in the dump (no data segments): who holds each is read from the code.
  if (waits.filter((wait) => wait.lock !== null && !ownerOf.has(wait.lock)).length >= 2) await inferOwners(q, waits, ownerOf, target.readLine);
  const cycles = deadlockCycles(waits, ownerOf);
  for (const edge of cycles.flat()) edge.lockName = await lockName(q, edge, framesOf.get(edge.thread) ?? []);
  const unreadOwners = waits.filter((wait) => wait.lock === null || !ownerOf.has(wait.lock)).map((wait) => wait.thread);
  return { cycles, unreadOwners, unreadStacks, framesOf };
}

/**
 * Owners read from the waiters' code where the locks are not in the dump: a thread holds a lock
 * when its waiting function took it on an earlier line and has not released it. A lock is known by
 * its address (the expression's, evaluated in that frame) or, for a global, by its symbol's name.
 */
async function inferOwners(q: Inspector, waits: LockWait[], ownerOf: Map<string, number>, readLine: LineReader | null): Promise<void> {
  const keyOf = new Map<string, string>();
  for (const lock of new Set(waits.map((wait) => wait.lock).filter((lock): lock is string => lock !== null))) {
    keyOf.set(lock, globalName(await q.symbolAt(lock)) ?? lock);
  }
  const said: string[] = [];
  for (const wait of waits) {
    const frame = wait.waiter;
    if (!frame?.file || frame.line === null || !frame.address) continue;
    const symbol = await q.symbolAt(hex(BigInt(frame.address) - 1n));
    const start = symbol ? await q.sourceLine(hex(BigInt(frame.address) - 1n - BigInt(symbol.offset))) : null;
    if (!start || start.line > frame.line) continue;
    const listed = await q.source(frame.file, start.line, frame.line);
    const lines = listed.length > 0 ? listed : Array.from({ length: frame.line - start.line + 1 }, (_, i) => ({ line: start.line + i, text: readLine?.(start.file, start.line + i) ?? "" }));
    for (const held of locksHeldBefore(lines, frame.line)) {
      const address = toBigInt(await addressIn(q, held.expression, wait.thread, frame));
      const lock = [...keyOf].find(([at, name]) => (address !== null && toBigInt(at) === address) || name === held.expression)?.[0];
      if (!lock || ownerOf.has(lock)) continue;
      ownerOf.set(lock, wait.thread);
      said.push(`thread ${wait.thread} took \`${held.expression}\` at ${frame.file.split(/[\\/]/).at(-1)}:${held.line} and has not left it`);
    }
  }
  if (said.length > 0) q.problems.push(`the locks are not in the dump (it holds no data segments), so who holds each was inferred from the code, not read from the lock: ${said.join("; ")}`);
}

/**
 * The lock a thread's own frame waits for, from its line (`EnterCriticalSection(&cache_lock);`):
 * where the sections are not in the dump, the expression the program passed, evaluated.
 */
async function lockOnWaitingLine(q: Inspector, thread: number, frame: PlacedFrame, sp: bigint, files: TargetFiles): Promise<string | null> {
  if (!frame.file || frame.line === null) return null;
  const expression = lockExpressionIn((await q.source(frame.file, frame.line)).find((l) => l.line === frame.line)?.text ?? "");
  if (!expression) return null;
  const address = toBigInt(await addressIn(q, expression, thread, frame));
  if (address !== null) return hex(address);
  // A global passed to the lock call is still on the waiting thread's stack (the lock functions keep
  // their argument): the word there whose symbol is the global's name is its address.
  if (!/^[A-Za-z_]\w*$/.test(expression)) return null;
  const data = files.sections.filter((section) => section.source === "exec" && /^\.(bss|data)$/.test(section.name));
  const words = [...new Set(await q.readMemory(hex(sp), CRITICAL_SECTION_SCAN_WORDS))].filter((word) => data.some((section) => holds(section, word)));
  for (const word of words.slice(0, MAX_CRITICAL_SECTION_CANDIDATES)) {
    if (globalName(await q.symbolAt(hex(word))) === expression) return hex(word);
  }
  return null;
}

/**
 * The address an expression's lock is at, in a frame: `&to->lock`, `&config_lock` evaluated there.
 * A frame the debugger's own unwind did not reach has no locals to evaluate: only a global's name is.
 */
async function addressIn(q: Inspector, expression: string, thread: number, frame: PlacedFrame): Promise<string | null> {
  const level = debuggerLevel(frame) ?? (/^[A-Za-z_]\w*$/.test(expression) ? 0 : null);
  if (level === null) return null;
  const printed = (await q.evaluate(`&${expression}`, { thread, frame: level })) ?? "";
  return /0x[0-9a-f]+(?![\s\S]*0x[0-9a-f])/i.exec(printed)?.[0] ?? null;
}

/**
 * A thread the debugger could not unwind: its frames from its stack, and the lock it waits on: on
 * Windows the critical section on its stack, elsewhere the lock call the scan found the program
 * making (`pthread_mutex_lock`, through the PLT), its mutex read later from the futex it waits on.
 */
async function waitOnStack(q: Inspector, thread: number, frames: PlacedFrame[], target: Target, threadOfLwp: Map<number, number>): Promise<{ frames: PlacedFrame[]; wait: LockWait | null } | null> {
  const { isOwnCode, os } = target;
  const sp = toBigInt(await q.register("sp", { thread }));
  const scanned = await scanStack(q, frames, sp, target);
  if (!scanned) return null;
  if (os !== "windows") return { frames: scanned, wait: lockWait(thread, scanned) };
  const own = culpritIndex(scanned);
  const lwp = target.threads.find((t) => t.id === thread)?.lwp ?? null;
  const waiter = own === null ? null : (scanned[own] ?? null);
  const lock = os === "windows" && sp !== null && waiter !== null ? ((await heldCriticalSectionOnStack(q, sp, lwp, threadOfLwp, isOwnCode)) ?? (await lockOnWaitingLine(q, thread, waiter, sp, target.files))) : null;
  return { frames: scanned, wait: lock ? { thread, lock, waiter } : null };
}

/** Linux x86-64's number of the futex system call. */
const SYS_FUTEX = 202n;

/** Whether a thread is stopped in the futex system call, as the kernel recorded it (the core's `orig_rax`). */
async function inFutexWait(q: Inspector, thread: number): Promise<boolean> {
  return toBigInt(await q.register("orig_rax", { thread })) === SYS_FUTEX;
}

/** The critical section held by another thread that lies on a thread's stack, for a thread whose frames are not known. */
async function heldCriticalSectionOfThread(q: Inspector, thread: number, target: Target, threadOfLwp: Map<number, number>): Promise<string | null> {
  const sp = toBigInt(await q.register("sp", { thread }));
  const lwp = target.threads.find((t) => t.id === thread)?.lwp ?? null;
  return sp === null ? null : heldCriticalSectionOnStack(q, sp, lwp, threadOfLwp, target.isOwnCode);
}

/**
 * The name of the lock a thread waits for, where the debugger knows one: a global's symbol, else
 * the expression its own locking call passed, kept only when it evaluates, in that frame, to the
 * lock's address.
 */
async function lockName(q: Inspector, edge: DeadlockEdge, frames: PlacedFrame[]): Promise<string | null> {
  if (edge.lock === null) return null;
  const global = globalName(await q.symbolAt(edge.lock));
  if (global) return global;
  const waiter = culpritIndex(frames);
  const frame = waiter === null ? null : frames[waiter];
  if (!frame?.file || frame.line === null) return null;
  const expression = lockExpressionIn((await q.source(frame.file, frame.line)).find((l) => l.line === frame.line)?.text ?? "");
  if (!expression) return null;
  // Printed as a typed pointer: `(pthread_mutex_t *) 0x7ffd2e8b9bd0`.
  const address = toBigInt(await addressIn(q, expression, edge.thread, frame));
  return address !== null && address === BigInt(edge.lock) ? expression : null;
}

/**
 * The critical section a thread waits for, found on its stack where no frame names it: the nearest
 * word above its stack pointer that points at a CRITICAL_SECTION held by another thread of the dump
 * (RecursionCount at least 1, OwningThread one of the dump's thread ids). Windows' wait functions
 * keep the section they wait on in their frames, below the program's own.
 */
async function heldCriticalSectionOnStack(q: Inspector, sp: bigint, self: number | null, threadOfLwp: Map<number, number>, isOwnCode: (address: bigint) => boolean): Promise<string | null> {
  const words = await q.readMemory(hex(sp), CRITICAL_SECTION_SCAN_WORDS);
  const pointers = [...new Set(words.filter((word) => word >= NULL_PAGE_LIMIT && word % 8n === 0n && !isOwnCode(word)))].slice(0, MAX_CRITICAL_SECTION_CANDIDATES);
  for (const pointer of pointers) {
    const section = criticalSectionOf(await q.readMemory(hex(pointer), 3));
    if (section && section.owner !== self && threadOfLwp.has(section.owner)) return hex(pointer);
  }
  return null;
}

/**
 * A critical section's owner, read as a word of memory: LLDB cannot evaluate an expression on a
 * minidump (it has no process to hold the result in), but reads its memory.
 */
async function criticalSectionOwner(q: Inspector, lock: string): Promise<string | null> {
  const owner = criticalSectionOwnerAddress(lock);
  if (owner === null) return null;
  const words = await q.readMemory(owner, 1);
  return words[0] === undefined ? null : words[0].toString();
}
