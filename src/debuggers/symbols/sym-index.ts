/**
 * What a Breakpad symbol file says about addresses, kept compact for files of hundreds of
 * megabytes: typed columns sorted by address and searched by bisection. Line and inline ranges are
 * kept as offsets from their FUNC's start (32 bits) and only the fields a lookup reads are kept
 * (no parameter sizes, no `m` flags, no unwind rules).
 */
import type { SymRecord } from "./sym-records.js";

/** One frame at an address, as the symbol file names it. */
export interface SymbolizedFrame {
  /** `function`: the FUNC itself; `inlined`: a call the compiler inlined into it; `public`: only an exported symbol's name. */
  kind: "function" | "inlined" | "public";
  function: string;
  /** The source file's path as the symbol file writes it; null where it has no line for the address. */
  file: string | null;
  line: number | null;
  /** Bytes from the FUNC's or PUBLIC's start; null for an inlined frame, which has no start of its own. */
  offset: number | null;
}

/** What was left out of a symbol file while reading it, so a caller can say the symbols are damaged. */
export interface SymbolFileDamage {
  /** Lines of a known record kind whose fields do not parse, and line or INLINE records outside any FUNC. */
  malformedLines: number;
  /** Lines longer than the reader's limit, skipped whole. */
  overlongLines: number;
  /** FUNCs that start inside an earlier FUNC (their lines go with them). */
  overlappingFunctions: number;
  /** Records dropped because their kind reached its cap. */
  beyondCaps: number;
}

/** Caps on what one file may hold, far above libxul's and far below what would exhaust memory. */
const MAX_FUNCS = 8_000_000;
const MAX_PUBLICS = 8_000_000;
const MAX_LINES = 40_000_000;
const MAX_INLINE_RANGES = 20_000_000;
const MAX_NAMED = 8_000_000;
/** Real inlining nests a few dozen deep at most. */
const MAX_INLINE_DEPTH = 1024;
const MAX_U32 = 0xffffffff;
/** An inline range's sort key is depth * 2^32 + offset: one bisection finds a depth's range at an offset. */
const DEPTH_UNIT = 2 ** 32;

type NumberArray = Float64Array | Uint32Array;

/** A typed array that grows as records arrive, trimmed when reading ends. */
class Column<A extends NumberArray> {
  private data: A;
  length = 0;

  constructor(private readonly make: (size: number) => A) {
    this.data = make(1024);
  }

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = this.make(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }

  finish(): A {
    return this.data.slice(0, this.length) as A;
  }
}

const float64 = (): Column<Float64Array> => new Column((n) => new Float64Array(n));
const uint32 = (): Column<Uint32Array> => new Column((n) => new Uint32Array(n));

/** The index of the last value ≤ `value` in sorted `values[from, to)`, or `from - 1`. */
function lastAtOrBefore(values: NumberArray, value: number, from: number, to: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((values[mid] ?? Infinity) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** Sorts `columns[from, to)` together by the first column, where a file wrote them out of order. */
function sortSegment(columns: NumberArray[], from: number, to: number): void {
  const [keys] = columns;
  if (!keys) return;
  let sorted = true;
  for (let i = from + 1; i < to && sorted; i++) sorted = (keys[i - 1] ?? 0) <= (keys[i] ?? 0);
  if (sorted) return;
  const order = Array.from({ length: to - from }, (_, i) => from + i).sort((a, b) => (keys[a] ?? 0) - (keys[b] ?? 0));
  for (const column of columns) {
    const copy = order.map((i) => column[i] ?? 0);
    column.set(copy, from);
  }
}

/** Collects records in file order; `finish` sorts them into a SymbolIndex. */
export class SymbolIndexBuilder {
  readonly damage: SymbolFileDamage = { malformedLines: 0, overlongLines: 0, overlappingFunctions: 0, beyondCaps: 0 };
  private readonly files = new Map<number, string>();
  private readonly origins = new Map<number, string>();
  private readonly funcStart = float64();
  private readonly funcSize = float64();
  private readonly funcName: string[] = [];
  private readonly funcLinesFrom = uint32();
  private readonly funcInlinesFrom = uint32();
  private readonly lineOffset = uint32();
  private readonly lineSize = uint32();
  private readonly lineNumber = uint32();
  private readonly lineFile = uint32();
  private readonly inlineKey = float64();
  private readonly inlineSize = uint32();
  private readonly inlineCallLine = uint32();
  private readonly inlineCallFile = uint32();
  private readonly inlineOrigin = uint32();
  private readonly publicAddress = float64();
  private readonly publicName: string[] = [];
  /** The start of the FUNC that line and INLINE records belong to: null before the first FUNC or after a malformed one. */
  private currentStart: number | null = null;
  /** The current FUNC was dropped at its cap: its records are dropped with it, not malformed. */
  private currentDropped = false;

  add(record: SymRecord): void {
    switch (record.kind) {
      case "file":
        return this.name(this.files, record.id, record.path);
      case "inline-origin":
        return this.name(this.origins, record.id, record.name);
      case "func":
        return this.addFunc(record);
      case "line":
        return this.addLine(record);
      case "inline":
        return this.addInline(record);
      case "public":
        return this.addPublic(record);
      case "malformed":
        this.damage.malformedLines++;
        if (record.func) [this.currentStart, this.currentDropped] = [null, false];
        return;
      default:
        return;
    }
  }

  private name(names: Map<number, string>, id: number, name: string): void {
    if (names.size >= MAX_NAMED) this.damage.beyondCaps++;
    else if (!names.has(id)) names.set(id, name);
  }

  private addFunc(record: Extract<SymRecord, { kind: "func" }>): void {
    [this.currentStart, this.currentDropped] = [null, false];
    if (this.funcName.length >= MAX_FUNCS) {
      this.damage.beyondCaps++;
      this.currentDropped = true;
      return;
    }
    this.currentStart = record.address;
    this.funcStart.push(record.address);
    this.funcSize.push(record.size);
    this.funcName.push(record.name);
    this.funcLinesFrom.push(this.lineOffset.length);
    this.funcInlinesFrom.push(this.inlineKey.length);
  }

  /** A record's address as an offset from its FUNC's start, or null outside what 32 bits reach. */
  private offsetInFunc(address: number): number | null {
    const start = this.currentStart;
    if (start === null || address < start || address - start > MAX_U32) return null;
    return address - start;
  }

  private addLine(record: Extract<SymRecord, { kind: "line" }>): void {
    if (this.currentDropped) {
      this.damage.beyondCaps++;
      return;
    }
    const offset = this.offsetInFunc(record.address);
    if (offset === null || record.size > MAX_U32) {
      this.damage.malformedLines++;
      return;
    }
    if (this.lineOffset.length >= MAX_LINES) {
      this.damage.beyondCaps++;
      return;
    }
    this.lineOffset.push(offset);
    this.lineSize.push(record.size);
    this.lineNumber.push(record.line);
    this.lineFile.push(record.file);
  }

  private addInline(record: Extract<SymRecord, { kind: "inline" }>): void {
    if (this.currentDropped) {
      this.damage.beyondCaps++;
      return;
    }
    if (record.depth > MAX_INLINE_DEPTH) {
      this.damage.malformedLines++;
      return;
    }
    let damaged = false;
    for (let i = 0; i + 1 < record.ranges.length; i += 2) {
      const offset = this.offsetInFunc(record.ranges[i] ?? 0);
      const size = record.ranges[i + 1] ?? 0;
      if (offset === null || size > MAX_U32) {
        damaged = true;
        continue;
      }
      if (this.inlineKey.length >= MAX_INLINE_RANGES) {
        this.damage.beyondCaps++;
        return;
      }
      this.inlineKey.push(record.depth * DEPTH_UNIT + offset);
      this.inlineSize.push(size);
      this.inlineCallLine.push(record.callLine);
      this.inlineCallFile.push(record.callFile);
      this.inlineOrigin.push(record.origin);
    }
    if (damaged) this.damage.malformedLines++;
  }

  private addPublic(record: Extract<SymRecord, { kind: "public" }>): void {
    // Some PDBs give symbols that make no sense an address of 0 (ntdll's, several at once): a
    // PUBLIC there would name every address up to the first FUNC.
    if (record.address === 0) return;
    if (this.publicName.length >= MAX_PUBLICS) {
      this.damage.beyondCaps++;
      return;
    }
    this.publicAddress.push(record.address);
    this.publicName.push(record.name);
  }

  finish(): SymbolIndex {
    const lines = { offset: this.lineOffset.finish(), size: this.lineSize.finish(), number: this.lineNumber.finish(), file: this.lineFile.finish() };
    const inlines = {
      key: this.inlineKey.finish(),
      size: this.inlineSize.finish(),
      callLine: this.inlineCallLine.finish(),
      callFile: this.inlineCallFile.finish(),
      origin: this.inlineOrigin.finish(),
    };
    const start = this.funcStart.finish();
    const size = this.funcSize.finish();
    const linesFrom = this.funcLinesFrom.finish();
    const inlinesFrom = this.funcInlinesFrom.finish();
    const count = this.funcName.length;
    const linesTo = new Uint32Array(count);
    const inlinesTo = new Uint32Array(count);
    for (let f = 0; f < count; f++) {
      linesTo[f] = f + 1 < count ? (linesFrom[f + 1] ?? 0) : lines.offset.length;
      inlinesTo[f] = f + 1 < count ? (inlinesFrom[f + 1] ?? 0) : inlines.key.length;
      sortSegment([lines.offset, lines.size, lines.number, lines.file], linesFrom[f] ?? 0, linesTo[f] ?? 0);
      sortSegment([inlines.key, inlines.size, inlines.callLine, inlines.callFile, inlines.origin], inlinesFrom[f] ?? 0, inlinesTo[f] ?? 0);
    }

    // A FUNC starting inside the one before it is dropped, as Breakpad's range map drops it: with
    // no overlaps, the last FUNC starting at or before an address is the only one that may hold it.
    const byStart = Uint32Array.from({ length: count }, (_, i) => i).sort((a, b) => (start[a] ?? 0) - (start[b] ?? 0) || a - b);
    const kept: number[] = [];
    let end = -1;
    for (const f of byStart) {
      const from = start[f] ?? 0;
      const length = size[f] ?? 0;
      if (length === 0) continue;
      if (from < end) {
        this.damage.overlappingFunctions++;
        continue;
      }
      kept.push(f);
      end = from + length;
    }
    const pick = (column: NumberArray): Float64Array => Float64Array.from(kept, (f) => column[f] ?? 0);
    const functions: FunctionTable = {
      start: pick(start),
      size: pick(size),
      name: kept.map((f) => this.funcName[f] ?? ""),
      linesFrom: Uint32Array.from(kept, (f) => linesFrom[f] ?? 0),
      linesTo: Uint32Array.from(kept, (f) => linesTo[f] ?? 0),
      inlinesFrom: Uint32Array.from(kept, (f) => inlinesFrom[f] ?? 0),
      inlinesTo: Uint32Array.from(kept, (f) => inlinesTo[f] ?? 0),
    };

    // PUBLICs by address, the first of several at one address kept.
    const address = this.publicAddress.finish();
    const byAddress = Uint32Array.from({ length: address.length }, (_, i) => i).sort((a, b) => (address[a] ?? 0) - (address[b] ?? 0) || a - b);
    const publicsKept = [...byAddress].filter((p, i) => i === 0 || address[p] !== address[byAddress[i - 1] ?? 0]);
    const publics: PublicTable = { address: Float64Array.from(publicsKept, (p) => address[p] ?? 0), name: publicsKept.map((p) => this.publicName[p] ?? "") };

    return new SymbolIndex(functions, lines, inlines, publics, this.files, this.origins);
  }
}

interface FunctionTable {
  start: Float64Array;
  size: Float64Array;
  name: string[];
  /** Each FUNC's line records: [linesFrom, linesTo) of the line columns, sorted by offset. */
  linesFrom: Uint32Array;
  linesTo: Uint32Array;
  /** Each FUNC's inline ranges: [inlinesFrom, inlinesTo) of the inline columns, sorted by depth, then offset. */
  inlinesFrom: Uint32Array;
  inlinesTo: Uint32Array;
}

interface LineTable {
  offset: Uint32Array;
  size: Uint32Array;
  number: Uint32Array;
  file: Uint32Array;
}

/** One entry per range of an INLINE record. */
interface InlineTable {
  key: Float64Array;
  size: Uint32Array;
  callLine: Uint32Array;
  callFile: Uint32Array;
  origin: Uint32Array;
}

interface PublicTable {
  address: Float64Array;
  name: string[];
}

/** The frames at an address of the module, innermost first. */
export class SymbolIndex {
  constructor(
    private readonly functions: FunctionTable,
    private readonly lines: LineTable,
    private readonly inlines: InlineTable,
    private readonly publics: PublicTable,
    private readonly files: Map<number, string>,
    private readonly origins: Map<number, string>,
  ) {}

  lookup(address: number): SymbolizedFrame[] | null {
    const { functions, publics } = this;
    const f = lastAtOrBefore(functions.start, address, 0, functions.start.length);
    const funcStart = functions.start[f];
    if (funcStart !== undefined && address < funcStart + (functions.size[f] ?? 0)) return this.inFunction(f, address - funcStart);
    // A PUBLIC runs to the next FUNC or PUBLIC: it names the address only if no FUNC starts between them.
    const p = lastAtOrBefore(publics.address, address, 0, publics.address.length);
    const publicStart = publics.address[p];
    if (publicStart === undefined || (funcStart !== undefined && funcStart >= publicStart)) return null;
    return [{ kind: "public", function: publics.name[p] ?? "", file: null, line: null, offset: address - publicStart }];
  }

  /** The inline ranges of FUNC `f` that hold `offset`, one per depth, outermost first. */
  private inlinedCalls(f: number, offset: number): number[] {
    const { key, size } = this.inlines;
    const from = this.functions.inlinesFrom[f] ?? 0;
    const to = this.functions.inlinesTo[f] ?? 0;
    const calls: number[] = [];
    for (let depth = 0; depth <= MAX_INLINE_DEPTH; depth++) {
      const wanted = depth * DEPTH_UNIT + offset;
      const i = lastAtOrBefore(key, wanted, from, to);
      const start = key[i];
      if (i < from || start === undefined || start < depth * DEPTH_UNIT || wanted >= start + (size[i] ?? 0)) break;
      calls.push(i);
    }
    return calls;
  }

  /**
   * The FUNC's frame and those of the calls inlined into it at `offset`: the innermost takes the
   * line record's file and line; each frame outside it, the call site of the inlined call it made.
   */
  private inFunction(f: number, offset: number): SymbolizedFrame[] {
    const { lines, inlines } = this;
    const from = this.functions.linesFrom[f] ?? 0;
    const l = lastAtOrBefore(lines.offset, offset, from, this.functions.linesTo[f] ?? 0);
    const covered = l >= from && offset < (lines.offset[l] ?? 0) + (lines.size[l] ?? 0);
    let file = covered ? this.fileName(lines.file[l]) : null;
    let line = covered ? lineNumber(lines.number[l]) : null;

    const frames: SymbolizedFrame[] = [];
    for (const i of this.inlinedCalls(f, offset).reverse()) {
      const origin = inlines.origin[i] ?? 0;
      frames.push({ kind: "inlined", function: this.origins.get(origin) ?? `<inline origin ${origin}>`, file, line, offset: null });
      file = this.fileName(inlines.callFile[i]);
      line = lineNumber(inlines.callLine[i]);
    }
    frames.push({ kind: "function", function: this.functions.name[f] ?? "", file, line, offset });
    return frames;
  }

  private fileName(id: number | undefined): string | null {
    return id === undefined ? null : (this.files.get(id) ?? null);
  }
}

/** Line 0 is Breakpad's "no line" (code the compiler made, with no source line of its own). */
function lineNumber(line: number | undefined): number | null {
  return line === undefined || line === 0 ? null : line;
}
