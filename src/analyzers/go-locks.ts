/**
 * Go's sync.Mutex as a dump shows it, pure. A goroutine blocked in `Lock` sleeps on the mutex's
 * semaphore: the runtime keeps it in `runtime.semtable`, a table of treaps of `sudog`s keyed by the
 * semaphore's address (`elem`), one sudog per waiting goroutine (`g`). Who holds a sync.Mutex is
 * recorded nowhere; the code says it: a function that called `x.mu.Lock()` on an earlier line and
 * has not called `x.mu.Unlock()` holds it (a deferred Unlock runs only when the function returns).
 */

/** A source line of Go as the reader gets it. */
export interface GoSourceLine {
  line: number;
  text: string;
}

/** The code of a line without its comment and string contents. */
function code(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*"|`[^`]*`/g, '""').replace(/\/\/.*$/, "");
}

const LOCK_CALL = /(?<!defer\s+)\b([A-Za-z_][\w.]*)\.(Lock|RLock|Unlock|RUnlock)\(\)/g;

/** The lock a line takes: `to.mu.Lock()` → `to.mu`; null for a line that takes none. */
export function goLockTaken(text: string): string | null {
  for (const [, lock = "", verb = ""] of code(text).matchAll(LOCK_CALL)) if (/^R?Lock$/.test(verb)) return lock;
  return null;
}

/** The locks a function still holds at line `before`: each taken on an earlier line of `lines` (its body, in order) and not released since, with the line that took it. */
export function goLocksHeldBefore(lines: GoSourceLine[], before: number): { expression: string; line: number }[] {
  const held: { expression: string; line: number }[] = [];
  for (const { line, text } of lines) {
    if (line >= before) break;
    for (const [, lock = "", verb = ""] of code(text).matchAll(LOCK_CALL)) {
      if (/^R?Lock$/.test(verb)) held.push({ expression: lock, line });
      else {
        const at = held.findLastIndex((h) => h.expression === lock);
        if (at >= 0) held.splice(at, 1);
      }
    }
  }
  return held;
}

/** The first line of the Go function holding `line`: gofmt starts every top-level func at the start of its line. */
export function goFunctionStart(lineAt: (n: number) => string | null, line: number, maxLines = 400): number | null {
  for (let n = line; n >= 1 && line - n <= maxLines; n--) {
    const text = lineAt(n);
    if (text === null) return null;
    if (/^func\b/.test(text)) return n;
  }
  return null;
}

/** Where the runtime keeps the goroutines that sleep on a semaphore (go1.17–go1.20, amd64). */
export const SEMTABLE = {
  /** `semTabSize` roots, each a semaRoot padded to a cache line. */
  roots: 251,
  rootWords: 8,
  /** `semaRoot.treap`, the root sudog of the treap, in words. */
  treapWord: 1,
  /** sudog's fields, in words: g, next, prev, elem … parent, waitlink. */
  sudog: { g: 0, next: 1, prev: 2, elem: 3, parent: 7, waitlink: 8 },
  sudogWords: 9,
  /** `sync.Mutex{state int32; sema uint32}`: a Lock sleeps on `&m.sema`, 4 bytes into the mutex. */
  mutexSemaOffset: 4n,
} as const;

/** A goroutine (by its g's address) asleep on a semaphore (by its address). */
export interface SemaphoreWait {
  g: bigint;
  semaphore: bigint;
}

/**
 * The sudogs reachable from the treap roots (`treaps`, the semaRoots' treap words), each treap
 * walked through its children (prev, next) and each node's list of waiters on the same address
 * (waitlink), at most `limit` sudogs; `read` gives a sudog's words.
 */
export async function semaphoreWaits(treaps: bigint[], read: (sudog: bigint) => Promise<bigint[]>, limit: number, valid: (pointer: bigint) => boolean): Promise<SemaphoreWait[]> {
  const waits: SemaphoreWait[] = [];
  const seen = new Set<bigint>();
  const pending = treaps.filter(valid);
  const { sudog } = SEMTABLE;
  while (pending.length > 0 && seen.size < limit) {
    const at = pending.pop() ?? 0n;
    if (seen.has(at)) continue;
    seen.add(at);
    const words = await read(at);
    if (words.length < SEMTABLE.sudogWords) continue;
    const [g = 0n, elem = 0n] = [words[sudog.g], words[sudog.elem]];
    if (valid(g) && valid(elem)) waits.push({ g, semaphore: elem });
    for (const next of [words[sudog.prev], words[sudog.next], words[sudog.waitlink]]) if (next !== undefined && valid(next) && !seen.has(next)) pending.push(next);
  }
  return waits;
}
