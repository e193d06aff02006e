/**
 * Readers of SOS, the CLR's debugger extension, for .NET dumps, into the model's managed side:
 * `!threads` (managed threads and the exception each holds), `!clrstack -a` (managed frames with
 * their parameters and locals, per thread under `OS Thread Id: 0x1b3c (0)`), `!pe` (the managed
 * exception: type, message, stack), `!syncblk` (the monitors held and by whom) and `!dumpheap
 * -stat` (objects per type).
 */
import type { HeapTypeStat, ManagedException, ManagedFrame, ManagedStack, ManagedThread, MonitorLock } from "../../model.js";
import { bounded, cdbAddress, lines } from "./common.js";

/** Rows read from one SOS listing (threads, frames, heap types). */
const MAX_ROWS = 100_000;

/**
 * `!threads`: ` DBG   ID OSID ThreadOBJ State GC Mode GC Alloc Context Domain Lock Count Apt Exception`
 * rows, `   0    1 1b3c 000001F2A3B4C5D0  2a020 Preemptive  0000…:0000… 000001f2a3b2a0e0 0  MTA System.NullReferenceException 000001f2a5000f10`;
 * null when the output is no thread listing (SOS could not read the runtime).
 */
export function parseClrThreads(output: string): ManagedThread[] | null {
  if (!/^\s*ThreadCount:/m.test(output)) return null;
  const threads: ManagedThread[] = [];
  for (const line of lines(output)) {
    if (threads.length >= MAX_ROWS) break;
    const row = /^\s*(\d+|XXXX)\s+(\d+)\s+([0-9a-f]+)\s+([0-9a-f`]{8,17})\s+([0-9a-f]+)\s+(Preemptive|Cooperative|Enabled|Disabled)\s+\S+\s+\S+\s+(-?\d+)\s+(\S+)\s*(.*)$/i.exec(line);
    if (!row) continue;
    // The last column says what the thread is for, `(Finalizer)`, then the exception it holds with its object.
    const rest = row[9] ?? "";
    const role = /\(([^()]+)\)/.exec(rest)?.[1]?.trim() ?? null;
    const exception = /(?:^|\s)([A-Za-z_][\w`+]*(?:\.[A-Za-z_][\w`+]*)+)\s+[0-9a-f`]{8,17}\b/i.exec(rest.replace(/\([^()]*\)/g, " "))?.[1] ?? null;
    threads.push({
      thread: row[1] === "XXXX" ? null : Number(row[1]),
      managedId: Number(row[2]),
      osThreadId: Number.parseInt(row[3] ?? "0", 16),
      lockCount: Math.max(0, Number(row[7])),
      exception: exception ? bounded(exception) : null,
      role: role ? bounded(role) : null,
    });
  }
  return threads;
}

/** `!clrstack -a` of one thread or, under `~*e`, of each. */
export function parseClrStacks(output: string): ManagedStack[] {
  const stacks: ManagedStack[] = [];
  let section: "parameters" | "locals" | null = null;
  let rows = 0;
  for (const line of lines(output)) {
    const header = /^OS Thread Id:\s*0x([0-9a-f]+)(?:\s+\((\d+)\))?/i.exec(line.trim());
    if (header) {
      stacks.push({ osThreadId: Number.parseInt(header[1] ?? "0", 16), thread: header[2] === undefined ? null : Number(header[2]), frames: [] });
      section = null;
      continue;
    }
    const stack = stacks.at(-1);
    if (!stack || rows >= MAX_ROWS) continue;
    const frame = /^([0-9a-f`]{8,17})\s+([0-9a-f`]{8,17})?\s+(.+)$/i.exec(line.trim());
    if (frame && !/^(?:Child SP|PARAMETERS|LOCALS)/.test(line.trim())) {
      rows++;
      const text = (frame[3] ?? "").trim();
      // A runtime frame: `[HelperMethodFrame_1OBJ: 000000000034f0c8] System.Threading.Monitor.ReliableEnter(...)`.
      const runtime = /^\[([^\]:]*)[^\]]*\]\s*/.exec(text);
      const call = runtime ? text.slice(runtime[0].length) : text;
      // `App.Program.Parse(System.String) [C:\src\Program.cs @ 12]`; newer SOS puts the assembly first, `App.dll!App.Program.Parse(…)`.
      const source = /\s*\[([^[\]]+) @ (\d+)\]\s*$/.exec(call);
      const site = /^(?:([^!\s(]+)!)?(.*)$/.exec((source ? call.slice(0, source.index) : call).trim());
      // A transition with no method after it is named by its kind, `[GCFrame]`.
      const name = site?.[2]?.trim() || (runtime?.[1] ? `[${runtime[1].trim()}]` : "");
      stack.frames.push({
        function: name ? bounded(name) : null,
        module: site?.[1] ? bounded(site[1]) : null,
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

/** `!pe`: the exception object, its type, message and stack; null when the thread holds none. */
export function parsePrintException(output: string): ManagedException | null {
  const type = /^Exception type:\s+(\S.*)$/m.exec(output)?.[1]?.trim();
  if (!type) return null;
  const message = /^Message:\s+(.*)$/m.exec(output)?.[1]?.trim() ?? null;
  const object = /^Exception object:\s+([0-9a-f`]+)/m.exec(output)?.[1];
  return {
    type: bounded(type),
    message: message === null || message === "<none>" ? null : bounded(message),
    object: object ? cdbAddress(object) : null,
    stack: thrownThrough(output),
  };
}

/**
 * `StackTrace (generated):` rows, `    000000000014F2B0 00007FFA1B2C3D4E OrderService!OrderService.Pricing.Discount(OrderService.Order)+0x1e`,
 * with ` [file @ line]` after them when SOS printed lines.
 */
function thrownThrough(output: string): ManagedFrame[] {
  const frames: ManagedFrame[] = [];
  let inTrace = false;
  for (const line of lines(output)) {
    if (/^StackTrace \(generated\):/.test(line)) {
      inTrace = true;
      continue;
    }
    if (!inTrace || frames.length >= MAX_ROWS) continue;
    if (line.trim() === "" || /^\S/.test(line)) break;
    const row = /^\s*[0-9a-f`]{8,17}\s+[0-9a-f`]{8,17}\s+(?:([^!\s]+)!)?(.+?)(?:\+0x[0-9a-f]+)?(?:\s+\[([^[\]]+) @ (\d+)\])?\s*$/i.exec(line);
    if (!row) continue;
    frames.push({
      function: bounded(row[2] ?? ""),
      module: row[1] ? bounded(row[1]) : null,
      file: row[3] ? bounded(row[3]) : null,
      line: row[4] ? Number(row[4]) : null,
      runtime: false,
      parameters: [],
      locals: [],
    });
  }
  return frames;
}

/**
 * `!syncblk`: `    2 000001F2A3C1D2E8            3         1 000001F2A3B612A0 2d4e   5   000001f2a5001100 System.Object`:
 * index, sync block, MonitorHeld (1 for the owner, plus 2 for each waiter), Recursion, the owner's
 * Thread object, OS id and cdb number, the object and its type.
 */
export function parseSyncBlocks(output: string): MonitorLock[] {
  const blocks: MonitorLock[] = [];
  for (const line of lines(output)) {
    if (blocks.length >= MAX_ROWS) break;
    const row = /^\s*\d+\s+[0-9a-f`]{8,17}\s+(\d+)\s+\d+\s+[0-9a-f`]{8,17}\s+([0-9a-f]+)\s+(\d+|XXX+)\s+([0-9a-f`]{8,17})\s+(\S.*)$/i.exec(line);
    const object = cdbAddress(row?.[4]);
    if (!row || object === null) continue;
    blocks.push({
      object,
      type: bounded((row[5] ?? "").trim()),
      ownerThread: /^\d+$/.test(row[3] ?? "") ? Number(row[3]) : null,
      ownerOsThreadId: Number.parseInt(row[2] ?? "0", 16),
      waiters: Math.max(0, Math.floor((Number(row[1]) - 1) / 2)),
    });
  }
  return blocks;
}

/** `!dumpheap -stat`: `00007ffa1b2c5b20       12          480 System.String` (newer SOS groups digits with commas). */
export function parseHeapStatistics(output: string): HeapTypeStat[] {
  const counts: HeapTypeStat[] = [];
  let inTable = false;
  for (const line of lines(output)) {
    if (/^\s*MT\s+Count\s+TotalSize\s+Class Name/i.test(line)) inTable = true;
    if (!inTable || counts.length >= MAX_ROWS) continue;
    const row = /^\s*([0-9a-f`]{8,17})\s+([\d,]+)\s+([\d,]+)\s+(\S.*)$/i.exec(line);
    if (!row || cdbAddress(row[1]) === null) continue;
    counts.push({ type: bounded((row[4] ?? "").trim()), count: Number((row[2] ?? "0").replace(/,/g, "")), bytes: Number((row[3] ?? "0").replace(/,/g, "")) });
  }
  return counts;
}
