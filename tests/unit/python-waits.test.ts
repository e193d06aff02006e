/**
 * The Python side's waits, pure: which thread waits for which lock of threading and who holds it,
 * the cycles among them, and what a hung process's verdict becomes. Built from readings made by
 * hand, with evidence taken away: a lock whose state was not read, a holder not shown, native
 * stacks not read or outside the interpreter's lock wait. What is not shown is never a wait, a
 * holder or a cycle. And the objects a lock is read from, laid out in memory and taken away.
 */
import { describe, expect, it } from "vitest";

import type { ThreadSummary } from "../../src/debuggers/model.js";
import type { PlacedFrame } from "../../src/analyzers/culprit.js";
import type { Verdict } from "../../src/analyzers/triage/classify.js";
import { lockWaits, waitCycles, withPythonWaits } from "../../src/analyzers/triage/python-waits.js";
import { PYTHON_3_11, PythonObjects, type NamedLock, type PythonFrame, type PythonReading, type PythonThread, type ValueAddresses } from "../../src/runtimes/cpython/index.js";
import { PagedMemory } from "../helpers/cpython.js";

const lock = (address: string, name: string, locked: boolean | null = true, owner: bigint | null = null): NamedLock => ({ address, type: owner === null ? "threading.Lock" : "threading.RLock", locked, owner, name });
const frame = (fn: string, line: number, holds: NamedLock[] = []): PythonFrame => ({ function: fn, file: "/srv/warehouse.py", line, firstLine: line - 3, entry: false, holds });
const thread = (lwp: number, name: string, frames: PythonFrame[], taking: NamedLock | null, ident = BigInt(lwp) * 0x1000n): PythonThread => ({ lwp, ident: ident.toString(), name, frames, taking, complete: true, why: null });

const INVENTORY = lock("0x1000", "inventory");
const ORDERS = lock("0x2000", "orders");

function deadlocked(overrides: { inventory?: NamedLock; orders?: NamedLock } = {}): PythonReading {
  const inventory = overrides.inventory ?? INVENTORY;
  const orders = overrides.orders ?? ORDERS;
  return {
    version: "3.11.2",
    notes: [],
    threads: [
      thread(101, "MainThread", [frame("<module>", 40)], null),
      thread(102, "restocker", [frame("restock", 14, [inventory])], orders),
      thread(103, "order-desk", [frame("place_order", 22, [orders])], inventory),
    ],
  };
}

const native = (...functions: string[]): PlacedFrame[] => functions.map((fn, level) => ({ level, address: null, function: fn, args: "", file: null, line: null, from: "libc.so.6", module: "libc.so.6" }));
const LOCK_WAIT = native("__futex_abstimed_wait_common", "do_futex_wait", "PyThread_acquire_lock_timed", "acquire_timed", "_PyEval_EvalFrameDefault");

describe("the Python threads' lock waits", () => {
  it("finds each thread's wait, its holder by the with block holding it, and the cycle", () => {
    const reading = deadlocked();
    const waits = lockWaits(reading, () => LOCK_WAIT);
    expect(waits.map((w) => [w.thread.name, w.lock.name, w.holder?.name])).toEqual([
      ["restocker", "orders", "order-desk"],
      ["order-desk", "inventory", "restocker"],
    ]);
    expect(waitCycles(waits).map((cycle) => cycle.map((w) => w.thread.name))).toEqual([["restocker", "order-desk"]]);
  });

  it("takes an RLock's holder from the lock's own record, not from with blocks", () => {
    const a = lock("0x3000", "source.guard", true, 103n * 0x1000n);
    const b = lock("0x4000", "target.guard", true, 102n * 0x1000n);
    const reading: PythonReading = { version: "3.11.2", notes: [], threads: [thread(102, "teller-1", [frame("transfer", 9)], a), thread(103, "teller-2", [frame("transfer", 9)], b)] };
    expect(waitCycles(lockWaits(reading, () => null)).map((cycle) => cycle.map((w) => [w.thread.name, w.holder?.name]))).toEqual([
      [
        ["teller-1", "teller-2"],
        ["teller-2", "teller-1"],
      ],
    ]);
  });

  it("claims no wait for a lock whose state was not read, and so no cycle", () => {
    const reading = deadlocked({ orders: lock("0x2000", "orders", null) });
    const waits = lockWaits(reading, () => LOCK_WAIT);
    expect(waits.map((w) => w.thread.name)).toEqual(["order-desk"]);
    expect(waitCycles(waits)).toEqual([]);
  });

  it("claims no holder where no thread's frames show one", () => {
    const reading = deadlocked();
    reading.threads[2]!.frames[0]!.holds = [];
    const waits = lockWaits(reading, () => LOCK_WAIT);
    expect(waits.find((w) => w.thread.name === "restocker")?.holder).toBeNull();
    expect(waitCycles(waits)).toEqual([]);
  });

  it("takes no wait from a thread whose native stack was read outside the lock wait, and keeps one whose stack was not read", () => {
    const reading = deadlocked();
    const running = native("_PyEval_EvalFrameDefault", "_PyEval_Vector");
    expect(lockWaits(reading, (lwp) => (lwp === 102 ? running : LOCK_WAIT)).map((w) => w.thread.name)).toEqual(["order-desk"]);
    expect(lockWaits(reading, () => null).map((w) => w.thread.name)).toEqual(["restocker", "order-desk"]);
  });
});

describe("a hung process's verdict from its Python waits", () => {
  const threads: ThreadSummary[] = [101, 102, 103].map((lwp, i) => ({ id: i + 1, lwp, name: "python3.11", current: i === 0, frame: null }));
  const framesOf = new Map([1, 2, 3].map((id) => [id, LOCK_WAIT]));
  const requested: Verdict = { kind: "unknown", thread: threads[0]!, frames: LOCK_WAIT, culprit: null, blocked: null, abortedIn: null, caught: null };

  it("is a deadlock between the two functions, the first waiter's Python frame the culprit", () => {
    const verdict = withPythonWaits(requested, { reading: deadlocked() }, threads, framesOf);
    expect(verdict.kind).toBe("deadlock");
    expect(verdict.thread?.name).toBe("restocker");
    expect(verdict.frames[verdict.culprit!]).toMatchObject({ function: "restock", line: 14, language: "python" });
    expect(verdict.cycles?.[0]?.map((edge) => [edge.thread, edge.function, edge.lockName, edge.heldByThread])).toEqual([
      [2, "restock", "threading.Lock orders", 3],
      [3, "place_order", "threading.Lock inventory", 2],
    ]);
  });

  it("stays as the native side read it where a lock's state was not read and the other threads do not all wait", () => {
    const verdict = withPythonWaits(requested, { reading: deadlocked({ orders: lock("0x2000", "orders", null) }) }, threads, framesOf);
    expect(verdict).toBe(requested);
  });

  it("stays as it is for a crash", () => {
    const crash: Verdict = { ...requested, kind: "null-dereference" };
    expect(withPythonWaits(crash, { reading: deadlocked() }, threads, framesOf)).toBe(crash);
  });
});

describe("a lock read from the process's memory", () => {
  const L = PYTHON_3_11;
  const TYPES: ValueAddresses = { code: 0x9a0000n, str: 0x9a1000n, bytes: 0x9a2000n, tuple: 0x9a3000n, list: 0x9a4000n, dict: 0x9a5000n, long: 0x9a6000n, float: 0x9a7000n, builtinMethod: 0x9a8000n, boundMethod: 0x9a9000n, none: 0x9aa000n, true: 0x9ab000n, false: 0x9ac000n };
  const LOCK_TYPE = 0x50000n;
  const RLOCK_TYPE = 0x51000n;
  const AT = { lock: 0x60000n, rlock: 0x61000n, exit: 0x62000n, definition: 0x63000n };

  function memory(): PagedMemory {
    const m = new PagedMemory();
    const cString = (at: bigint, text: string) => m.write(at, Buffer.from(`${text}\0`, "latin1"));
    const pointer = (at: bigint, value: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(value);
      m.write(at, b);
    };
    for (const [type, name] of [[LOCK_TYPE, "_thread.lock"], [RLOCK_TYPE, "_thread.RLock"]] as const) {
      pointer(type + BigInt(L.type.name), type + 0x800n);
      cString(type + 0x800n, name);
    }
    pointer(AT.lock + BigInt(L.objectType), LOCK_TYPE);
    m.write(AT.lock + BigInt(L.lock.locked), Buffer.from([1]));
    pointer(AT.rlock + BigInt(L.objectType), RLOCK_TYPE);
    pointer(AT.rlock + BigInt(L.rlock.owner), 0x7f00aa00n);
    pointer(AT.rlock + BigInt(L.rlock.count), 2n);
    // lock.__exit__, bound: a builtin method whose self is the lock.
    pointer(AT.exit + BigInt(L.objectType), TYPES.builtinMethod);
    pointer(AT.exit + BigInt(L.builtinMethod.definition), AT.definition);
    pointer(AT.exit + BigInt(L.builtinMethod.self), AT.lock);
    pointer(AT.definition + BigInt(L.methodDefinition.name), AT.definition + 0x100n);
    cString(AT.definition + 0x100n, "__exit__");
    return m;
  }

  it("reads a held Lock, an RLock's holder and count, and the lock a method is bound to", () => {
    const objects = new PythonObjects(memory(), L, TYPES);
    expect(objects.lockAt(AT.lock)).toEqual({ address: "0x60000", type: "threading.Lock", locked: true, owner: null });
    expect(objects.lockAt(AT.rlock)).toEqual({ address: "0x61000", type: "threading.RLock", locked: true, owner: 0x7f00aa00n });
    expect(objects.methodOfLock(AT.exit)).toEqual({ lock: objects.lockAt(AT.lock), method: "__exit__", self: AT.lock });
    expect(objects.repr(AT.lock)).toBe("<locked _thread.lock object at 0x60000>");
  });

  it("reads no lock where the lock, its type's name or the method's self is not in the core", () => {
    const gone = memory();
    gone.takeAway(AT.lock);
    expect(new PythonObjects(gone, L, TYPES).lockAt(AT.lock)).toBeNull();
    expect(new PythonObjects(gone, L, TYPES).methodOfLock(AT.exit)).toBeNull();
    const nameless = memory();
    nameless.takeAway(LOCK_TYPE + 0x800n);
    expect(new PythonObjects(nameless, L, TYPES).lockAt(AT.lock)).toBeNull();
    expect(new PythonObjects(nameless, L, TYPES).repr(AT.lock)).toBeNull();
  });
});
