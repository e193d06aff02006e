/**
 * Delve's terminal output, as `print.ts` writes it from Delve's DAP answers, read into the model:
 * goroutines as threads (the goroutine id as the thread's number, the OS thread running it as its
 * lwp, its status as its name, its user frame as its frame), stacks, registers, variables, memory
 * and Go assembler listings (mnemonics lower-cased, operands in Go's order, which is AT&T's).
 */
import { splitOperands } from "../../att-text.js";
import { normalizeAddress, type Backtrace, type Disassembly, type Frame, type Register, type ThreadBacktrace, type ThreadSummary, type Variable } from "../../model.js";

const GOROUTINE = /^([* ]) Goroutine (\d+) - User: (.+?):(\d+) (.+) \((0x[0-9a-f]+|0x\?)\)( \(thread (\d+)\))?( \[(.+)\])?$/;
const FRAME_HEAD = /^\s*(\d+)\s+(0x[0-9a-f]+|0x\?) in (.+)$/;
const FRAME_AT = /^\s*at (.+):(\d+)$/;

function lines(text: string): string[] {
  return text.split("\n").map((line) => line.replace(/\r$/, ""));
}

function address(text: string | undefined): string | null {
  return text && text !== "0x?" ? normalizeAddress(text) : null;
}

function known(text: string | undefined): string | null {
  return text === undefined || text === "?" ? null : text;
}

/** `goroutines`: every goroutine as a thread; the one marked `*` is the one that crashed. */
export function readGoroutines(output: string): ThreadSummary[] {
  return readGoroutineBlocks(output).map(({ summary }) => summary);
}

/** `goroutines -t`: each goroutine's stack under its line. */
export function readGoroutineStacks(output: string): ThreadBacktrace[] {
  return readGoroutineBlocks(output).map(({ summary, stack }) => ({ thread: summary.id, lwp: summary.lwp, name: summary.name, frames: readStack(stack.join("\n")).frames }));
}

function readGoroutineBlocks(output: string): { summary: ThreadSummary; stack: string[] }[] {
  const blocks: { summary: ThreadSummary; stack: string[] }[] = [];
  for (const line of lines(output)) {
    const row = GOROUTINE.exec(line);
    if (row) {
      blocks.push({
        summary: {
          id: Number(row[2]),
          lwp: row[8] ? Number(row[8]) : null,
          name: row[10] ?? null,
          current: row[1] === "*",
          frame: { address: address(row[6]), function: known(row[5]), args: "", file: known(row[3]), line: row[4] && row[4] !== "0" ? Number(row[4]) : null, from: null },
        },
        stack: [],
      });
    } else if (line.startsWith("\t")) {
      blocks.at(-1)?.stack.push(line.slice(1));
    }
  }
  return blocks;
}

/** `stack`: frames innermost first; `(truncated)` says more follow. */
export function readStack(output: string, limit?: number): Backtrace {
  const frames: Frame[] = [];
  for (const line of lines(output)) {
    const head = FRAME_HEAD.exec(line);
    if (head) {
      frames.push({ level: Number(head[1]), address: address(head[2]), function: known(head[3]), args: "", file: null, line: null, from: null });
      continue;
    }
    const at = FRAME_AT.exec(line);
    const frame = frames.at(-1);
    if (at && frame && frame.file === null) {
      frame.file = known(at[1]);
      frame.line = at[2] && at[2] !== "0" ? Number(at[2]) : null;
    }
  }
  const truncated = /^\(truncated\)$/m.test(output) || (limit !== undefined && frames.length > limit);
  return { frames: limit !== undefined ? frames.slice(0, limit) : frames, truncated };
}

/** `regs`: `rip = 0x…`, the flags' names after their value. */
export function readRegisters(output: string): Register[] {
  const registers: Register[] = [];
  for (const line of lines(output)) {
    const row = /^\s*([a-z][a-z0-9_]*) = (0x[0-9a-f]+)(?:\s+(.*))?$/i.exec(line);
    if (!row?.[1] || !row[2]) continue;
    const value = normalizeAddress(row[2]);
    registers.push({ name: row[1].toLowerCase(), value, natural: row[3]?.trim() || BigInt(value).toString() });
  }
  return registers;
}

/** `locals`, `args`: `name = value`. */
export function readVariables(output: string): Variable[] {
  return lines(output).flatMap((line) => {
    const row = /^(\S+) = (.*)$/.exec(line);
    return row?.[1] && row[2] !== undefined ? [{ name: row[1], value: row[2] }] : [];
  });
}

/** `print`: the value, null when nothing was printed (the expression failed). */
export function readValue(output: string): string | null {
  const text = output.trim();
  return text === "" ? null : text;
}

/** `x -fmt hex`: the first row's address and every value. */
export function readMemory(output: string): { start: string | null; words: bigint[] } {
  let start: string | null = null;
  const words: bigint[] = [];
  for (const line of lines(output)) {
    const row = /^(0x[0-9a-f]+):\s+(.*)$/.exec(line);
    if (!row?.[1] || row[2] === undefined) continue;
    start ??= normalizeAddress(row[1]);
    for (const value of row[2].trim().split(/\s+/)) if (/^0x[0-9a-f]+$/.test(value)) words.push(BigInt(value));
  }
  return { start, words };
}

/** Bytes read with `x -size 1` as NUL-terminated strings, `count` of them. */
export function readStrings(output: string, count: number): (string | null)[] {
  const bytes = Buffer.from(readMemory(output).words.map((byte) => Number(byte & 0xffn)));
  if (bytes.length === 0) return Array.from({ length: count }, () => null);
  const strings: (string | null)[] = [];
  let from = 0;
  while (strings.length < count) {
    const end = bytes.indexOf(0, from);
    // A string running past what was read is not whole: it is not given as if it were.
    if (end === -1) {
      strings.push(null);
      break;
    }
    strings.push(bytes.subarray(from, end).toString("utf8"));
    from = end + 1;
  }
  while (strings.length < count) strings.push(null);
  return strings;
}

/** `disassemble`: Go assembler, the function from the `TEXT` line; file and line from each row. */
export function readDisassembly(output: string): Disassembly & { offset: number; lines: { address: string; file: string | null; line: number | null }[] } {
  let fn: string | null = null;
  let offset = 0;
  const instructions: Disassembly["instructions"] = [];
  const places: { address: string; file: string | null; line: number | null }[] = [];
  for (const line of lines(output)) {
    // `TEXT main.f+22(SB)`: a listing that starts 22 bytes into main.f (Go's `sym+off(SB)`).
    const text = /^TEXT (.+?)(?:\+(\d+))?\(SB\)$/.exec(line);
    if (text) {
      fn = text[1] ?? null;
      offset = Number(text[2] ?? 0);
    }
    const row = /^(=>|  )\t([^\t]+)\t(0x[0-9a-f]+)\t([0-9a-f]*)\t(.*)$/.exec(line);
    if (!row?.[3]) continue;
    const [mnemonic = "", ...rest] = (row[5] ?? "").trim().split(/\s+/);
    instructions.push({ address: normalizeAddress(row[3]), location: null, mnemonic: mnemonic.toLowerCase(), operands: splitOperands(rest.join(" ")), reference: null, current: row[1] === "=>" });
    const where = /^(.+):(\d+)$/.exec(row[2] ?? "");
    places.push({ address: normalizeAddress(row[3]), file: where?.[1] ?? null, line: where?.[2] && where[2] !== "0" ? Number(where[2]) : null });
  }
  return { function: fn, offset, instructions, unreadable: instructions.length === 0, lines: places };
}
