/**
 * CPython 3.11's exception table decoded as the interpreter's own `dis` decodes it: for code written
 * like real code (`with` blocks nested and in loops, try/except/finally, comprehensions, a lock
 * taken by hand), every entry's range, handler, depth and lasti must be the ones Python gives, and
 * the depth known at each instruction the covering entry's. A table cut short keeps the entries
 * before the cut and invents none.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

import { handlerRanges, liveDepthAt } from "../../src/runtimes/cpython/index.js";
import { pythonInterpreters } from "../helpers/cpython.js";

const SOURCE = `import threading

ledger_lock = threading.Lock()
audit_lock = threading.RLock()


def post(entries, journal):
    with ledger_lock:
        for entry in entries:
            with audit_lock:
                try:
                    journal.append(entry.amount)
                except (AttributeError, TypeError) as error:
                    journal.append(str(error))
                finally:
                    journal.flush()
    return [entry for entry in entries if entry]


def take_by_hand(lock, work):
    lock.acquire()
    try:
        return work()
    finally:
        lock.release()
`;

const READ_TABLES = `import dis, json, sys, types

def walk(code, found):
    found[code.co_qualname] = {
        "table": code.co_exceptiontable.hex(),
        "entries": [[e.start, e.end, e.target, e.depth, e.lasti] for e in dis._parse_exception_table(code)],
        "size": len(code.co_code),
    }
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            walk(const, found)
    return found

print(json.dumps(walk(compile(sys.stdin.read(), "<tested>", "exec"), {})))
`;

interface Table {
  table: string;
  /** dis's entries: start and end (excluded) and target in bytes, depth, lasti. */
  entries: [number, number, number, number, boolean][];
  size: number;
}

async function tables(python: string): Promise<Record<string, Table>> {
  const child = spawn(python, ["-c", READ_TABLES], { stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  let errors = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
  child.stdin.end(SOURCE);
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  if (code !== 0) throw new Error(`${python} could not read the tables (${code}):\n${errors}`);
  return JSON.parse(output) as Record<string, Table>;
}

const interpreters = pythonInterpreters();

describe.skipIf(interpreters.length === 0)("CPython 3.11's exception table", () => {
  for (const { name, python } of interpreters) {
    it(`gives every entry and every instruction's depth ${name} gives`, async () => {
      const found = await tables(python);
      expect(Object.keys(found)).toEqual(expect.arrayContaining(["post", "take_by_hand", "post.<locals>.<listcomp>"]));
      expect(found.post!.entries.length).toBeGreaterThan(4);
      for (const [qualname, { table, entries, size }] of Object.entries(found)) {
        const bytes = Buffer.from(table, "hex");
        const decoded = handlerRanges(bytes).map((r) => [r.start * 2, r.end * 2, r.target * 2, r.depth, r.lasti]);
        expect(decoded, qualname).toEqual(entries);
        for (let unit = 0; unit < size / 2; unit += 1) {
          const covering = entries.find(([start, end]) => unit * 2 >= start && unit * 2 < end);
          expect(liveDepthAt(bytes, unit), `${qualname} at ${unit * 2}`).toBe(covering ? covering[3] : 0);
        }
      }
    });
  }

  it("keeps the entries before a cut and reads none from the cut one", () => {
    // Two entries: units 3–8 handled at 72 with depth 1 (lasti), then 9–14 handled at 20 with depth 0.
    const whole = Buffer.from("830541080389051400", "hex");
    expect(handlerRanges(whole)).toEqual([
      { start: 3, end: 8, target: 72, depth: 1, lasti: true },
      { start: 9, end: 14, target: 20, depth: 0, lasti: false },
    ]);
    for (let cut = 5; cut < whole.length; cut += 1) expect(handlerRanges(whole.subarray(0, cut))).toEqual([{ start: 3, end: 8, target: 72, depth: 1, lasti: true }]);
    expect(handlerRanges(whole.subarray(0, 4))).toEqual([]);
  });

  it("reads nothing from bytes that are no table", () => {
    expect(handlerRanges(Buffer.from("05410803", "hex"))).toEqual([]);
    // A start marker in the middle of an entry ends the table there.
    expect(handlerRanges(Buffer.from("8305c108", "hex"))).toEqual([]);
    expect(liveDepthAt(Buffer.alloc(0), 0)).toBe(0);
  });
});
