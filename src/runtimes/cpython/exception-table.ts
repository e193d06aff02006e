/**
 * CPython 3.11's exception table (`co_exceptiontable`, Objects/exception_handling_notes.txt): the
 * ranges of instructions a handler covers, each with the depth the value stack is cut back to when
 * the handler runs. What is below that depth is live at every instruction of the range (a `with`
 * block keeps its context manager's `__exit__` there, a `for` loop its iterator), which is what a
 * reader of a frame's stack needs to know when the interpreter did not save the stack's top (it saves
 * it only when it calls another Python frame). Pure and bounded by the table.
 */

/** One entry: instructions `start` to `end` (code units, `end` excluded) are handled at `target` with the stack cut to `depth`. */
export interface HandlerRange {
  start: number;
  end: number;
  target: number;
  depth: number;
  /** Whether the handler is handed the offset of the instruction that raised. */
  lasti: boolean;
}

/** More entries than any code object has: a table longer is not believed past them. */
const MAX_ENTRIES = 65_536;

/** The table's entries in order; an entry cut short by the table's end ends them. */
export function handlerRanges(table: Buffer): HandlerRange[] {
  const ranges: HandlerRange[] = [];
  let at = 0;
  while (at < table.length && ranges.length < MAX_ENTRIES) {
    // Each entry starts with the start marker, bit 7; its four numbers follow as varints of 6-bit chunks.
    if (((table[at] as number) & 0x80) === 0) break;
    const numbers: number[] = [];
    for (let field = 0; field < 4; field += 1) {
      const read = varint(table, at, field === 0);
      if (read === null) return ranges;
      numbers.push(read.value);
      at = read.next;
    }
    const [start, size, target, depthAndLasti] = numbers as [number, number, number, number];
    ranges.push({ start, end: start + size, target, depth: depthAndLasti >> 1, lasti: (depthAndLasti & 1) === 1 });
  }
  return ranges;
}

/**
 * A 6-bit-chunked varint at `at`, most significant chunk first, bit 6 of each byte saying another
 * follows; only the first byte of an entry may carry the start marker. Null where the table ends mid-number, a
 * marker interrupts it or it runs past what a code object can hold.
 */
function varint(table: Buffer, at: number, first: boolean): { value: number; next: number } | null {
  let value = 0;
  for (let chunk = 0; at < table.length; chunk += 1) {
    const byte = table[at] as number;
    if ((byte & 0x80) !== 0 && !(first && chunk === 0)) return null;
    value = value * 64 + (byte & 63);
    at += 1;
    if ((byte & 64) === 0) return { value, next: at };
    if (chunk === 4) return null;
  }
  return null;
}

/**
 * How deep the value stack is known to be at the instruction `instruction` code units into the
 * code: the depth of the handler covering it (the entries do not overlap), 0 where none does.
 */
export function liveDepthAt(table: Buffer, instruction: number): number {
  for (const range of handlerRanges(table)) {
    if (instruction >= range.start && instruction < range.end) return range.depth;
  }
  return 0;
}
