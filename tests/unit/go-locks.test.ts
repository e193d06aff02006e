/** sync.Mutex as the code and the runtime's semaphore table show it: pure, over the lock-order fixture's source and a table laid out as go1.19 lays it. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { goFunctionStart, goLocksHeldBefore, goLockTaken, semaphoreWaits, SEMTABLE } from "../../src/analyzers/go-locks.js";

const SOURCE = readFileSync(fileURLToPath(new URL("../fixtures/go/lock-order/main.go", import.meta.url)), "utf8").split("\n");
const lineAt = (n: number) => SOURCE[n - 1] ?? null;
const WAIT = SOURCE.findIndex((line) => line.includes("// CULPRIT")) + 1;

describe("Go's locks in its code", () => {
  it("names the lock a line takes, not one it releases or defers", () => {
    expect(goLockTaken("\tto.mu.Lock() // CULPRIT")).toBe("to.mu");
    expect(goLockTaken("\tc.cache.mu.RLock()")).toBe("c.cache.mu");
    expect(goLockTaken("\tdefer from.mu.Unlock()")).toBeNull();
    expect(goLockTaken('\tlog.Print("x.mu.Lock()")')).toBeNull();
  });

  it("finds the function's first line, and the locks it still holds at the wait", () => {
    const start = goFunctionStart(lineAt, WAIT);
    expect(lineAt(start ?? 0)).toMatch(/^func transfer\(/);
    const body = Array.from({ length: WAIT - (start ?? 0) }, (_, i) => ({ line: (start ?? 0) + i, text: lineAt((start ?? 0) + i) ?? "" }));
    // `defer from.mu.Unlock()` runs at the return: from.mu is held through the wait.
    expect(goLocksHeldBefore(body, WAIT)).toEqual([{ expression: "from.mu", line: SOURCE.findIndex((l) => l.includes("from.mu.Lock()")) + 1 }]);
    expect(goLocksHeldBefore([{ line: 1, text: "m.Lock()" }, { line: 2, text: "m.Unlock()" }], 3)).toEqual([]);
  });
});

describe("the runtime's semaphore table", () => {
  it("walks each treap through its children and each node's waiters on the same address, bounded", async () => {
    // Two addresses in one treap (the second a child), the first with a second waiter on its waitlink, and a loop back to the root.
    const sudogs = new Map<bigint, bigint[]>([
      [0xc000100000n, sudog(0xc000001000n, 0xc000058034n, { next: 0xc000100100n, waitlink: 0xc000100200n })],
      [0xc000100100n, sudog(0xc000002000n, 0xc000058054n, { prev: 0xc000100000n })],
      [0xc000100200n, sudog(0xc000003000n, 0xc000058034n, {})],
    ]);
    const read = async (at: bigint) => sudogs.get(at) ?? [];
    const valid = (p: bigint) => p >= 0x10000n;
    const waits = await semaphoreWaits([0n, 0xc000100000n, 0n], read, 16, valid);
    expect(waits.map((w) => [w.g, w.semaphore]).sort()).toEqual([
      [0xc000001000n, 0xc000058034n],
      [0xc000002000n, 0xc000058054n],
      [0xc000003000n, 0xc000058034n],
    ].sort());
    expect(await semaphoreWaits([0xc000100000n], read, 1, valid)).toHaveLength(1);
    // A Lock sleeps on &m.sema, 4 bytes into the mutex.
    expect(0xc000058034n - SEMTABLE.mutexSemaOffset).toBe(0xc000058030n);
  });
});

function sudog(g: bigint, elem: bigint, links: { prev?: bigint; next?: bigint; waitlink?: bigint }): bigint[] {
  const words = Array<bigint>(SEMTABLE.sudogWords).fill(0n);
  words[SEMTABLE.sudog.g] = g;
  words[SEMTABLE.sudog.elem] = elem;
  words[SEMTABLE.sudog.prev] = links.prev ?? 0n;
  words[SEMTABLE.sudog.next] = links.next ?? 0n;
  words[SEMTABLE.sudog.waitlink] = links.waitlink ?? 0n;
  return words;
}
