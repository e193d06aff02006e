/**
 * Readers of cdb's stacks and threads: `kn` (one row per frame under ` # Child-SP RetAddr Call
 * Site`), `~*kn` (each thread's header line, then its rows), `.frame` (one row) and `~`.
 *
 * `kn` prints no frame's pc: frame N's is the return address printed on frame N-1's row (the
 * innermost frame's is the context's pc, which the model leaves to the registers). An inlined
 * frame's row says `(Inline Function)` and has no pc of its own.
 */
import type { Address, Backtrace, Frame, ThreadBacktrace, ThreadSummary } from "../../model.js";
import { bounded, cdbAddress, lines, parseLocation } from "./common.js";

/** Frames read from one stack: a runaway recursion prints hundreds of thousands. */
const MAX_FRAMES = 100_000;

/** A frame's row: `01 00000000`0014fa20 00007ff6`1a2b1080     prog!main+0x2a [C:\src\prog.c @ 30]`. */
const FRAME_ROW = /^([0-9a-f]{2,})\s+(\(Inline Function\)|[0-9a-f`]{8,17})\s+(-{8}`?-{0,8}|[0-9a-f`]{8,17})\s+(.*)$/i;

/** A thread's header: `.  0  Id: 1a2c.1b3c Suspend: 0 Teb: 00000000`00356000 Unfrozen "main"`. */
const THREAD_HEADER = /^([.#])?\s*(\d+)\s+Id:\s*([0-9a-f]+)\.([0-9a-f]+)\s+Suspend:\s*-?\d+\s+Teb:\s*[0-9a-f`]+\s+\w+(?:\s+"(.*)")?\s*$/i;

interface FrameRow {
  level: number;
  /** The frame's stack pointer; null for an inlined frame. */
  childSp: Address | null;
  /** Where the frame returns to: its caller's pc. Null for an inlined frame. */
  returnAddress: Address | null;
  callSite: string;
}

function parseFrameRow(line: string): FrameRow | null {
  const row = FRAME_ROW.exec(line.trim());
  if (!row) return null;
  const inline = row[2] === "(Inline Function)";
  // `kb` puts the arguments between the return address and the call site, after " : ".
  const site = row[4] ?? "";
  const callSite = site.includes(" : ") ? site.slice(site.lastIndexOf(" : ") + 3) : site;
  return {
    level: Number.parseInt(row[1] ?? "0", 16),
    childSp: inline ? null : cdbAddress(row[2]),
    returnAddress: inline ? null : cdbAddress(row[3]),
    callSite: bounded(callSite.trim()),
  };
}

/** The frames of rows in order, each given its pc from the row before it. */
function framesOf(rows: FrameRow[]): Frame[] {
  let pc: Address | null = null;
  return rows.map((row) => {
    const location = parseLocation(row.callSite);
    const frame: Frame = {
      level: row.level,
      address: row.childSp === null ? null : pc,
      function: location.function,
      args: "",
      file: location.file,
      line: location.line,
      // Left to the address: cdb names modules without their extension, which the model's readers of paths need.
      from: null,
    };
    if (row.returnAddress !== null) pc = row.returnAddress;
    return frame;
  });
}

function rowsIn(text: string[]): FrameRow[] {
  const rows: FrameRow[] = [];
  for (const line of text) {
    if (rows.length >= MAX_FRAMES) break;
    const row = parseFrameRow(line);
    if (row) rows.push(row);
  }
  return rows;
}

/**
 * `kn N`: with `limit`, the command asked one frame more than wanted, and whether it came says
 * whether the stack goes on.
 */
export function parseBacktrace(output: string, limit?: number): Backtrace {
  const frames = framesOf(rowsIn(lines(output)));
  if (limit === undefined || frames.length <= limit) return { frames, truncated: false };
  return { frames: frames.slice(0, limit), truncated: true };
}

interface ThreadBlock {
  header: ThreadSummary;
  rows: FrameRow[];
}

function threadBlocks(output: string): ThreadBlock[] {
  const blocks: ThreadBlock[] = [];
  for (const line of lines(output)) {
    const header = THREAD_HEADER.exec(line.trim());
    if (header) {
      blocks.push({
        header: {
          id: Number(header[2]),
          lwp: Number.parseInt(header[4] ?? "0", 16),
          name: header[5] ? bounded(header[5]) : null,
          current: header[1] === ".",
          frame: null,
        },
        rows: [],
      });
      continue;
    }
    const block = blocks.at(-1);
    const row = block && block.rows.length < MAX_FRAMES ? parseFrameRow(line) : null;
    if (block && row) block.rows.push(row);
  }
  return blocks;
}

/** `~*kn 1` (or `~`): every thread, the selected one marked `.`, each with its innermost frame. */
export function parseThreads(output: string): ThreadSummary[] {
  return threadBlocks(output).map(({ header, rows }) => {
    const top = framesOf(rows)[0];
    if (!top) return header;
    const { level: _level, ...frame } = top;
    return { ...header, frame };
  });
}

/** `~*kn`: each thread's stack; with `threads`, only those. */
export function parseThreadBacktraces(output: string, threads: number[] | "all" = "all"): ThreadBacktrace[] {
  return threadBlocks(output)
    .filter(({ header }) => threads === "all" || threads.includes(header.id))
    .map(({ header, rows }) => ({ thread: header.id, lwp: header.lwp, name: header.name, frames: framesOf(rows) }));
}

/**
 * A frame's canonical frame address from `kn` rows: on x64 it is the caller's stack pointer at
 * the call, which `kn` prints as the caller's Child-SP.
 */
export function parseFrameCfa(output: string, frame: number): Address | null {
  const rows = rowsIn(lines(output)).filter((row) => row.childSp !== null);
  const index = rows.findIndex((row) => row.level === frame);
  return index < 0 ? null : (rows[index + 1]?.childSp ?? null);
}

/** `.frame`: the selected frame's row. */
export function parseSelectedFrame(output: string): { level: number; function: string | null; file: string | null; line: number | null } | null {
  const row = rowsIn(lines(output))[0];
  if (!row) return null;
  const location = parseLocation(row.callSite);
  return { level: row.level, function: location.function, file: location.file, line: location.line };
}
