/**
 * The Java heap as the SA prints it from a core: `universe`'s spaces (each one's capacity and how
 * full it was) and `jhisto`'s object histogram (which types hold the heap). Pure and bounded; a
 * collector whose output has another shape (G1's regions) gives no spaces, which is unknown, not empty.
 */

export interface HeapSpace {
  /** `eden`, `from`, `to`, `old`: as the collector names its spaces. */
  name: string;
  capacity: number;
  used: number;
}

export interface HistogramRow {
  type: string;
  instances: number;
  bytes: number;
}

export interface JavaHeap {
  spaces: HeapSpace[];
  /** The heap's capacity and use over its spaces; null where no space was read. */
  capacity: number | null;
  used: number | null;
  /** The types that hold most of the heap, largest first (at most `MAX_ROWS`). */
  histogram: HistogramRow[];
}

const MAX_ROWS = 10;
const MAX_LINES = 100_000;

/** `  from [0x…,0x…,0x…) space capacity = 1114112, 94.11908318014706 used` (the serial and parallel collectors' spaces). */
const SPACE = /^(?:Gen \d+:)?\s*([a-z][\w -]{0,40}?)\s+\[0x[0-9a-f]+,0x[0-9a-f]+,0x[0-9a-f]+\) space capacity = (\d{1,20}), ([\d.]{1,30}) used/;
/** `1:		1692	31554384	byte[]` */
const ROW = /^\d{1,9}:\s+(\d{1,20})\s+(\d{1,20})\s+(\S.{0,300})$/;

export function parseHeap(universe: string, histogram: string): JavaHeap {
  const spaces: HeapSpace[] = [];
  for (const line of universe.split("\n", MAX_LINES)) {
    const space = SPACE.exec(line);
    if (!space) continue;
    const capacity = Number(space[2]);
    const percent = Number(space[3]);
    if (!Number.isFinite(capacity) || !Number.isFinite(percent) || percent < 0 || percent > 100) continue;
    spaces.push({ name: space[1] ?? "", capacity, used: Math.round((capacity * percent) / 100) });
  }
  const rows: HistogramRow[] = [];
  for (const line of histogram.split("\n", MAX_LINES)) {
    const row = ROW.exec(line.trimEnd());
    if (row) rows.push({ instances: Number(row[1]), bytes: Number(row[2]), type: (row[3] ?? "").trim() });
  }
  rows.sort((a, b) => b.bytes - a.bytes);
  const sum = (pick: (space: HeapSpace) => number) => (spaces.length === 0 ? null : spaces.reduce((total, space) => total + pick(space), 0));
  return { spaces, capacity: sum((space) => space.capacity), used: sum((space) => space.used), histogram: rows.slice(0, MAX_ROWS) };
}
