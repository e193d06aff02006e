/**
 * Readers of SOS, the CLR's debugger extension, for .NET dumps: `!threads` (managed threads and the
 * exception each holds), `!clrstack -a` (managed frames with their parameters and locals, per
 * thread under `OS Thread Id: 0x1b3c (0)`), `!pe` (the managed exception: type, message, stack),
 * `!syncblk` (the monitors held and by whom) and `!dumpheap -stat` (objects per type). A managed
 * deadlock is read from the monitors' owners and what each thread's frames wait on.
 */
import type { Variable } from "../../model.js";
import { bounded, cdbAddress, lines } from "./common.js";
import type { ManagedException } from "./exception.js";

/** Rows read from one SOS listing (threads, frames, heap types). */
const MAX_ROWS = 100_000;

export interface ClrThread {
  /** cdb's thread number; null for a thread the OS no longer has (`XXXX`). */
  debuggerId: number | null;
  managedId: number;
  osId: number;
  threadObject: string | null;
  /** Monitors the thread holds. */
  lockCount: number;
  /** What the thread is (`(Finalizer)`, `(Threadpool Worker)`) or the exception it holds: the row's last words. */
  note: string | null;
}

/**
 * `!threads`: ` DBG   ID OSID ThreadOBJ State GC Mode GC Alloc Context Domain Lock Count Apt Exception`
 * rows, `   0    1 1b3c 000001F2A3B4C5D0  2a020 Preemptive  0000…:0000… 000001f2a3b2a0e0 0  MTA System.NullReferenceException 000001f2a5000f10`.
 */
export function parseClrThreads(output: string): ClrThread[] {
  const threads: ClrThread[] = [];
  for (const line of lines(output)) {
    if (threads.length >= MAX_ROWS) break;
    const row = /^\s*(\d+|XXXX)\s+(\d+)\s+([0-9a-f]+)\s+([0-9a-f`]{8,17})\s+([0-9a-f]+)\s+(Preemptive|Cooperative|Enabled|Disabled)\s+\S+\s+\S+\s+(-?\d+)\s+(\S+)\s*(.*)$/i.exec(line);
    if (!row) continue;
    threads.push({
      debuggerId: row[1] === "XXXX" ? null : Number(row[1]),
      managedId: Number(row[2]),
      osId: Number.parseInt(row[3] ?? "0", 16),
      threadObject: cdbAddress(row[4]),
      lockCount: Math.max(0, Number(row[7])),
      note: row[9]?.trim() ? bounded(row[9].trim()) : null,
    });
  }
  return threads;
}

export interface ClrFrame {
  function: string | null;
  file: string | null;
  line: number | null;
  /** A runtime frame SOS names in brackets (`[HelperMethodFrame_1OBJ: …]`, `[InlinedCallFrame: …]`). */
  runtime: boolean;
  parameters: Variable[];
  locals: Variable[];
}

export interface ClrStack {
  osId: number;
  debuggerId: number | null;
  frames: ClrFrame[];
}

/** `!clrstack -a` of one thread or, under `~*e`, of each. */
export function parseClrStacks(output: string): ClrStack[] {
  const stacks: ClrStack[] = [];
  let section: "parameters" | "locals" | null = null;
  let rows = 0;
  for (const line of lines(output)) {
    const header = /^OS Thread Id:\s*0x([0-9a-f]+)(?:\s+\((\d+)\))?/i.exec(line.trim());
    if (header) {
      stacks.push({ osId: Number.parseInt(header[1] ?? "0", 16), debuggerId: header[2] === undefined ? null : Number(header[2]), frames: [] });
      section = null;
      continue;
    }
    const stack = stacks.at(-1);
    if (!stack || rows >= MAX_ROWS) continue;
    const frame = /^([0-9a-f`]{8,17})\s+([0-9a-f`]{8,17})?\s+(.+)$/i.exec(line.trim());
    if (frame && !/^(?:Child SP|PARAMETERS|LOCALS)/.test(line.trim())) {
      rows++;
      const site = (frame[3] ?? "").trim();
      // A runtime frame: `[HelperMethodFrame_1OBJ: 000000000034f0c8] System.Threading.Monitor.ReliableEnter(...)`.
      const runtime = /^\[[^\]]*\]\s*/.exec(site);
      const call = runtime ? site.slice(runtime[0].length) : site;
      // A managed frame is named without a module, `App.Program.Parse(System.String) [C:\src\Program.cs @ 12]`.
      const source = /\s*\[([^[\]]+) @ (\d+)\]\s*$/.exec(call);
      const name = (source ? call.slice(0, source.index) : call).trim();
      stack.frames.push({
        function: name ? bounded(name) : null,
        file: source ? bounded(source[1] ?? "") : null,
        line: source ? Number(source[2]) : null,
        runtime: runtime !== null,
        parameters: [],
        locals: [],
      });
      section = null;
      continue;
    }
    if (/^\s*PARAMETERS:/.test(line)) section = "parameters";
    else if (/^\s*LOCALS:/.test(line)) section = "locals";
    else if (section) {
      // `text (0x000000000014F2F0) = 0x0000000000000000`, `<CLR reg> = 0x…`, `0x000000000014F2D8 = 0x…`.
      const variable = /^\s*(.+?)\s*=\s*(\S+)\s*$/.exec(line);
      const target = stack.frames.at(-1);
      if (variable && target) {
        const name = (variable[1] ?? "").replace(/\s*\([^)]*\)$/, "");
        target[section].push({ name: bounded(name), value: cdbAddress(variable[2]) ?? bounded(variable[2] ?? "") });
      }
    }
  }
  return stacks;
}

/** `!pe`: the exception object, its type and message; null when the thread holds none. */
export function parsePrintException(output: string): ManagedException | null {
  const type = /^Exception type:\s+(\S.*)$/m.exec(output)?.[1]?.trim();
  if (!type) return null;
  const message = /^Message:\s+(.*)$/m.exec(output)?.[1]?.trim() ?? null;
  const object = /^Exception object:\s+([0-9a-f`]+)/m.exec(output)?.[1];
  return { type: bounded(type), message: message === null || message === "<none>" ? null : bounded(message), object: object ? cdbAddress(object) : null };
}

export interface SyncBlock {
  /** The locked object and its type. */
  object: string;
  type: string;
  /** 1 for the owner, plus 2 for each waiter. */
  monitorHeld: number;
  recursion: number;
  ownerOsId: number;
  /** cdb's number of the owning thread. */
  ownerDebuggerId: number | null;
}

/**
 * `!syncblk`: `    2 000001F2A3C1D2E8            3         1 000001F2A3B612A0 2d4e   5   000001f2a5001100 System.Object`:
 * index, sync block, MonitorHeld, Recursion, the owner's Thread object, OS id and cdb number, the object.
 */
export function parseSyncBlocks(output: string): SyncBlock[] {
  const blocks: SyncBlock[] = [];
  for (const line of lines(output)) {
    if (blocks.length >= MAX_ROWS) break;
    const row = /^\s*\d+\s+[0-9a-f`]{8,17}\s+(\d+)\s+(\d+)\s+[0-9a-f`]{8,17}\s+([0-9a-f]+)\s+(\d+|XXX+)\s+([0-9a-f`]{8,17})\s+(\S.*)$/i.exec(line);
    const object = cdbAddress(row?.[5]);
    if (!row || object === null) continue;
    blocks.push({
      object,
      type: bounded((row[6] ?? "").trim()),
      monitorHeld: Number(row[1]),
      recursion: Number(row[2]),
      ownerOsId: Number.parseInt(row[3] ?? "0", 16),
      ownerDebuggerId: /^\d+$/.test(row[4] ?? "") ? Number(row[4]) : null,
    });
  }
  return blocks;
}

export interface HeapTypeCount {
  methodTable: string;
  count: number;
  totalSize: number;
  type: string;
}

/** `!dumpheap -stat`: `00007ffa1b2c5b20       12          480 System.String` (newer SOS groups digits with commas). */
export function parseHeapStatistics(output: string): HeapTypeCount[] {
  const counts: HeapTypeCount[] = [];
  let inTable = false;
  for (const line of lines(output)) {
    if (/^\s*MT\s+Count\s+TotalSize\s+Class Name/i.test(line)) inTable = true;
    if (!inTable || counts.length >= MAX_ROWS) continue;
    const row = /^\s*([0-9a-f`]{8,17})\s+([\d,]+)\s+([\d,]+)\s+(\S.*)$/i.exec(line);
    const table = cdbAddress(row?.[1]);
    if (!row || table === null) continue;
    counts.push({ methodTable: table, count: Number((row[2] ?? "0").replace(/,/g, "")), totalSize: Number((row[3] ?? "0").replace(/,/g, "")), type: bounded((row[4] ?? "").trim()) });
  }
  return counts;
}

/** One thread of a managed deadlock: where it waits, for which monitor, and who holds that. */
export interface ManagedWait {
  thread: number;
  function: string | null;
  file: string | null;
  line: number | null;
  /** The awaited object and its type, `0x1f2a5001118 (System.Object)`. */
  lock: string;
  heldByThread: number;
}

const MONITOR_ENTER = /^System\.Threading\.Monitor\.(?:Reliable)?(?:Try)?Enter\b/;

/**
 * The cycles of threads each waiting for a monitor the next one holds. A thread waits in
 * `Monitor.Enter`/`ReliableEnter`; the object is that frame's parameter when SOS shows it, else,
 * in the program's first frame below it, the one held monitor among its parameters and locals
 * that another thread owns (the caller of `lock (to)` while holding `from` has both at hand).
 */
export function managedDeadlocks(stacks: ClrStack[], blocks: SyncBlock[]): ManagedWait[][] {
  const owner = new Map(blocks.filter((b) => b.ownerDebuggerId !== null).map((b) => [b.object, b]));
  const waits = new Map<number, ManagedWait>();
  for (const stack of stacks) {
    if (stack.debuggerId === null) continue;
    const enter = stack.frames.findIndex((frame) => MONITOR_ENTER.test(frame.function ?? ""));
    if (enter < 0) continue;
    const caller = stack.frames.slice(enter + 1).find((frame) => !frame.runtime && !/^System\./.test(frame.function ?? "")) ?? null;
    const held = (values: Variable[]) => values.map((v) => owner.get(v.value)).find((b) => b !== undefined && b.ownerDebuggerId !== stack.debuggerId);
    const block = held(stack.frames[enter]?.parameters ?? []) ?? held([...(caller?.parameters ?? []), ...(caller?.locals ?? [])]);
    if (!block || block.ownerDebuggerId === null) continue;
    waits.set(stack.debuggerId, {
      thread: stack.debuggerId,
      function: caller?.function ?? null,
      file: caller?.file ?? null,
      line: caller?.line ?? null,
      lock: `${block.object} (${block.type})`,
      heldByThread: block.ownerDebuggerId,
    });
  }
  const cycles: ManagedWait[][] = [];
  const seen = new Set<number>();
  for (const start of [...waits.keys()].sort((a, b) => a - b)) {
    if (seen.has(start)) continue;
    const path: number[] = [];
    let at: number | undefined = start;
    while (at !== undefined && !path.includes(at) && !seen.has(at)) {
      path.push(at);
      at = waits.get(at)?.heldByThread;
    }
    for (const thread of path) seen.add(thread);
    if (at === undefined || !path.includes(at)) continue;
    cycles.push(path.slice(path.indexOf(at)).map((thread) => waits.get(thread) as ManagedWait));
  }
  return cycles;
}
