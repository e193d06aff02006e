/**
 * Delve's language for probes: each probe as the command a Go programmer types at `dlv core`
 * (threads are goroutines: `goroutines`, `goroutine 5 stack 40`, `goroutine 5 frame 2 locals`,
 * `regs`, `print`, `x`, `disassemble`), read back into the model by `text/read.ts`. What Delve's DAP
 * server cannot answer (the signal record, modules, sections, mappings, source listings) renders
 * as a command the session refuses with the reason, and reads as nothing rather than a guess.
 */
import type { SymbolAt } from "../model.js";
import { probeOfCommand, type CommandPatterns, type TargetSection, type Probe, type ProbeOf, type Reading, type Readings, type Vocabulary } from "../probe.js";
import { parseDelveCommand, placedDelve } from "./commands.js";
import { readDisassembly, readGoroutineStacks, readGoroutines, readMemory, readRegisters, readStack, readStrings, readValue, readVariables } from "./text/read.js";

/** Bytes read for a string: Go's own strings carry their length, C's end at a NUL within this. */
const STRING_BYTES = 256;
/** Instructions around a pc when the whole function is asked for (DAP gives no function bounds). */
export const AROUND_PC = 32;

/** A register's role as Delve names it on x86-64. */
const ROLES: Record<string, string> = { pc: "rip", sp: "rsp", fp: "rbp" };

function render(probe: Probe): string {
  switch (probe.kind) {
    case "threads":
      return "goroutines";
    case "backtrace":
      return placedDelve({ thread: probe.thread ?? null }, probe.outermost || probe.limit <= 0 ? "stack 100000" : `stack ${probe.limit}`);
    case "thread-backtraces":
      return probe.threads === "all" ? `goroutines -t${probe.limit ? ` ${probe.limit}` : ""}` : `goroutine ${probe.threads[0] ?? 1} stack ${probe.limit ?? 50}`;
    case "registers":
    case "register":
      return placedDelve(probe, "regs");
    case "evaluate":
      return placedDelve(probe, `print ${probe.format === "hex" ? "%x " : ""}${probe.expression}`);
    case "frame-info":
      // A frame's CFA is its caller's stack pointer.
      return placedDelve({ thread: probe.thread ?? null, frame: probe.frame + 1 }, "regs");
    case "locals":
      return placedDelve(probe, "locals");
    case "arguments":
      return placedDelve(probe, "args");
    case "disassemble":
      if (probe.address === undefined) return placedDelve(probe, "disassemble");
      return placedDelve(probe, `disassemble -a ${rangeAround(probe.address, probe.before ?? 0)}`);
    case "instructions":
      return placedDelve(probe, probe.address === undefined ? "disassemble" : `disassemble -a ${rangeAround(probe.address, 0, probe.count * 15)}`);
    case "memory":
      return placedDelve(probe, `x -fmt hex -count ${probe.count} -size 8 ${probe.address}`);
    case "string":
      return `x -fmt hex -count ${STRING_BYTES} -size 1 ${probe.address}`;
    case "strings":
      return `x -fmt hex -count ${Math.min(4096, STRING_BYTES * probe.count)} -size 1 ${probe.address}`;
    case "source-line":
      return `disassemble -a ${rangeAround(probe.address, 0, 1)}`;
    case "symbol":
      // Delve's terminal names the function a listing is in on its `TEXT` line; the word stored at
      // the address, for `indirect`, is read by the session's `x` first.
      return probe.indirect ? `x -fmt hex -count 1 -size 8 ${probe.address}` : `disassemble -a ${rangeAround(probe.address, 0, 1)}`;
    case "symbol-address":
      // A package variable's address as an integer: Delve prints `&v` of a struct or slice as the
      // value it points to, never the pointer itself.
      return `print uintptr(unsafe.Pointer(&${probe.name}))`;
    case "source":
      return `list ${probe.file}:${probe.from}`;
    case "shared-libraries":
    case "mappings":
      return "libraries";
    case "sections":
      // Nothing to ask Delve: a session's vocabulary knows the program it launched Delve with.
      return "goroutine";
    case "exit-signal":
    case "signal-info":
    case "abort-message":
    case "managed-threads":
    case "managed-stack":
    case "managed-stacks":
    case "managed-exception":
    case "managed-locks":
    case "managed-heap":
      // Delve knows no signal record (the dump's notes give it), no C library and no .NET: the
      // selected goroutine is asked for, harmlessly, and these read as none.
      return "goroutine";
    case "select":
      return "thread" in probe ? `goroutine ${probe.thread}` : `frame ${probe.frame}`;
    case "command":
      return probe.text;
  }
}

/** `START END` for `disassemble -a`: `before` bytes before `address` up to `after` bytes past it. */
function rangeAround(address: string, before: number, after = 16): string {
  const at = BigInt(address);
  const start = at - BigInt(before) < 0n ? 0n : at - BigInt(before);
  return `0x${start.toString(16)} 0x${(at + BigInt(after)).toString(16)}`;
}

/** The address an integer print holds: `5466912 = 0x536b20` (DAP's uintptr) or a pointer's `(*runtime.m)(0x55a0c0)`; null for anything else. */
function pointerValue(output: string): string | null {
  const text = output.trim();
  const decimal = /^(\d+)(?: = 0x[0-9a-f]+)?$/i.exec(text)?.[1];
  if (decimal) return `0x${BigInt(decimal).toString(16)}`;
  const hex = /\(0x([0-9a-f]+)\)$/i.exec(text)?.[1];
  return hex ? `0x${hex}` : null;
}

type Readers = { [K in keyof Readings]: (output: string, probe: ProbeOf<K>) => Readings[K] };

const READERS: Readers = {
  threads: readGoroutines,
  backtrace: (output, probe) => {
    const read = readStack(output);
    if (probe.outermost && probe.limit > 0) return { frames: read.frames.slice(-probe.limit), truncated: false };
    return probe.limit > 0 ? { frames: read.frames.slice(0, probe.limit), truncated: read.truncated || read.frames.length > probe.limit } : read;
  },
  "thread-backtraces": (output, probe) => {
    if (probe.threads === "all") return readGoroutineStacks(output);
    return [{ thread: probe.threads[0] ?? 1, lwp: null, name: null, frames: readStack(output).frames }];
  },
  registers: (output, probe) => {
    const registers = readRegisters(output);
    return probe.names?.length ? registers.filter((r) => probe.names?.includes(r.name)) : registers;
  },
  register: (output, probe) => {
    const name = ROLES[probe.register] ?? probe.register;
    return readRegisters(output).find((r) => r.name === name)?.value ?? null;
  },
  evaluate: readValue,
  "symbol-address": pointerValue,
  "frame-info": (output) => readRegisters(output).find((r) => r.name === "rsp")?.value ?? null,
  locals: readVariables,
  arguments: readVariables,
  disassemble: (output) => strip(readDisassembly(output)),
  instructions: (output, probe) => {
    const read = strip(readDisassembly(output));
    const from = probe.address === undefined ? Math.max(0, read.instructions.findIndex((i) => i.current)) : 0;
    return { ...read, instructions: read.instructions.slice(from, from + probe.count) };
  },
  memory: readMemory,
  string: (output) => readStrings(output, 1)[0] ?? null,
  strings: (output, probe) => readStrings(output, probe.count),
  symbol: (output, probe) => (probe.indirect ? null : symbolOf(readDisassembly(output))),
  "source-line": (output) => {
    const first = readDisassembly(output).lines[0];
    return first?.file && first.line !== null ? { file: first.file, line: first.line } : null;
  },
  source: () => [],
  "exit-signal": () => null,
  "signal-info": () => null,
  "shared-libraries": () => [],
  sections: () => ({ executable: null, core: null, sections: [] }),
  mappings: () => [],
  "abort-message": () => null,
  "managed-threads": () => null,
  "managed-stack": () => null,
  "managed-stacks": () => [],
  "managed-exception": () => null,
  "managed-locks": () => [],
  "managed-heap": () => [],
  select: (output) => output,
  command: (output) => output,
};

/** `TEXT main.f+22(SB)`: the function and how far into it the listing starts. */
function symbolOf(read: ReturnType<typeof readDisassembly>): SymbolAt | null {
  if (read.function === null) return null;
  const first = read.lines[0];
  return { symbol: read.function, offset: read.offset, section: null, module: null, file: first?.file ?? null, line: first?.line ?? null };
}

function strip(read: ReturnType<typeof readDisassembly>): Readings["disassemble"] {
  // The listing's start within its function is the symbol probe's; a disassembly names only the function.
  return { function: read.function, instructions: read.instructions, unreadable: read.unreadable };
}

function read<P extends Probe>(probe: P, output: string): Reading<P> {
  const reader = READERS[probe.kind] as unknown as (output: string, probe: P) => Reading<P>;
  return reader(output, probe);
}

const RECOGNISED: CommandPatterns = [
  [/^(?:goroutines|grs)$/, () => ({ kind: "threads" })],
  [/^(?:goroutines|grs) -t(?: (\d+))?$/, (m) => ({ kind: "thread-backtraces", threads: "all", ...(m[1] ? { limit: Number(m[1]) } : {}) })],
  [/^(?:stack|bt)(?: (\d+))?$/, (m) => ({ kind: "backtrace", limit: Number(m[1] ?? 50) })],
  [/^regs(?: -a)?$/, () => ({ kind: "registers" })],
  [/^locals$/, () => ({ kind: "locals" })],
  [/^args$/, () => ({ kind: "arguments" })],
  [/^(?:disassemble|disass)$/, () => ({ kind: "disassemble" })],
  [/^(?:x|examinemem) -fmt hex -count (\d+) -size 8 (\S+)$/, (m) => ({ kind: "memory", address: m[2] ?? "0", count: Number(m[1]) })],
];

/** The probe a Delve command is, its goroutine and frame taken from Delve's own prefix. */
function recognise(command: string): Probe | null {
  const parsed = parseDelveCommand(command);
  if ("error" in parsed) return null;
  const inner = command.trim().replace(/^(?:(?:goroutine|gr|frame)\s+\d+\s+)+/, "").replace(/\s+/g, " ");
  const found = probeOfCommand(RECOGNISED, inner);
  if (!found) return null;
  // A goroutine's whole stack is addressed by the goroutine, not by a frame.
  if (found.kind === "backtrace" && parsed.frame !== null) return null;
  if (found.kind === "threads" || found.kind === "thread-backtraces") return parsed.goroutine === null && parsed.frame === null ? found : null;
  return { ...found, ...(parsed.goroutine !== null ? { thread: parsed.goroutine } : {}), ...(parsed.frame ? { frame: parsed.frame } : {}) } as Probe;
}

const SYNTAX = [
  "Delve commands (a Go program's threads are its goroutines), one per line; for another goroutine or frame without moving the selection, prefix it: `goroutine G frame F CMD`.",
  "`goroutines`, `goroutines -t 20`, `stack 40`, `goroutine 7 stack 40`, `locals` (arguments included), `print EXPR`, `print %x EXPR`, `regs`,",
  "`x -fmt hex -count 8 -size 8 ADDR`, `disassemble`, `disassemble -a START END`, `sources REGEXP`, `goroutine G` / `frame F` to select",
].join("\n");

const movesSelection = (command: string): boolean => /^\s*(?:goroutine|gr|frame)\s+\d+\s*$/.test(command);

export const dlvVocabulary: Vocabulary = { debugger: "dlv", render, read, recognise, movesSelection, syntax: SYNTAX };

/**
 * Delve's language in a session on `executable`: Delve lists no sections over DAP, but the program
 * it was launched with is the target's executable (a Go program is usually its only module), and
 * its sections are read from its file (`program.ts`).
 */
export function dlvVocabularyFor(executable: string | null, sections: () => TargetSection[] = () => []): Vocabulary {
  return {
    ...dlvVocabulary,
    read: <P extends Probe>(probe: P, output: string): Reading<P> =>
      probe.kind === "sections" ? ({ executable, core: null, sections: sections() } as unknown as Reading<P>) : read(probe, output),
  };
}
