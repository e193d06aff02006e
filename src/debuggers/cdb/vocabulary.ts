/**
 * cdb's language for probes: each probe as the command a user at a `0:000>` prompt would type,
 * and its output read back into the model (instructions in AT&T spelling, values in gdb's one-line
 * C form). Counts are written in hex with `0x` (cdb's default radix is 16), line numbers with `0n`.
 * A probe addressed to another thread or frame carries the session's `[thread T, frame F]` prefix
 * (`../place-text.ts`), so the selection and the exception context never move. On a .NET dump with SOS
 * loaded, the managed probes are SOS's commands and what the runtime died with (the probe for an
 * abort's message) is `!pe`; without SOS they ask for the module list, where a CLR would show, and
 * read nothing.
 */
import { probeOfCommand, type CommandPatterns, type Probe, type ProbeOf, type Reading, type Readings, type Vocabulary } from "../probe.js";
import { placedCommand, probePlace } from "../place-text.js";
import { parsePlaced, sourceCommand } from "./place.js";
import { cdbNumber } from "./text/common.js";
import { parseDisassembly } from "./text/disassembly.js";
import { parseLastEvent } from "./text/exception.js";
import { parseClrStacks, parseClrThreads, parseHeapStatistics, parsePrintException, parseSyncBlocks } from "./text/sos.js";
import { parseMemoryString, parseMemoryWords, parseNearestSymbol, parseRegions, parseSourceListing } from "./text/memory.js";
import { parseModuleFiles, parseModuleList } from "./text/modules.js";
import { parseRegisters } from "./text/registers.js";
import { parseBacktrace, parseFrameCfa, parseThreadBacktraces, parseThreads } from "./text/stack.js";
import { parseEvaluation, parseVariables } from "./text/values.js";

/** Enough frames for any stack but a runaway recursion, which triage measures instead of listing. */
const WHOLE_STACK = 0x10000;

const hex = (n: number) => `0x${n.toString(16)}`;

/** An address for a MASM command: a number as it is, anything else read as C++ (`@@c++(&cfg->port)`). */
function masm(address: string): string {
  const text = address.trim();
  return /^(?:0x)?[0-9a-f`]+$/i.test(text) || /^@?\$\w+$/.test(text) ? text : `@@c++(${text})`;
}

/** The model's register roles in cdb's pseudo-registers, which mean the same on x86 and x64. */
const ROLES: Record<string, string> = { pc: "$ip", sp: "$csp" };

/** How the dump is read: with SOS, the managed exception is the runtime's last word. */
interface CdbReading {
  managed: boolean;
}

function render(probe: Probe, reading: CdbReading): string {
  switch (probe.kind) {
    case "threads":
      return "~*kn 1";
    case "backtrace":
      // One frame more than asked: whether it comes says whether the stack goes on.
      return placedCommand({ thread: probe.thread ?? null }, `kn ${hex(probe.outermost || probe.limit <= 0 ? WHOLE_STACK : probe.limit + 1)}`);
    case "thread-backtraces":
      return `~*kn${probe.limit ? ` ${hex(probe.limit)}` : ""}`;
    case "registers":
      return placedCommand(probe, "r");
    case "register":
      return placedCommand(probe, `r ${ROLES[probe.register] ?? probe.register}`);
    case "evaluate":
      return placedCommand(probe, `?? ${probe.expression}`);
    case "frame-info":
      // A frame's CFA is its caller's Child-SP, on the row below it.
      return placedCommand({ thread: probe.thread ?? null }, `kn ${hex(probe.frame + 2)}`);
    case "locals":
    case "arguments":
      return placedCommand(probe, "dv /i /t /v");
    case "disassemble":
      if (probe.address === undefined) return placedCommand(probe, "uf @$scopeip");
      return placedCommand(probe, probe.before ? `u ${probe.address}-${hex(probe.before)} ${probe.address}+1` : `uf ${probe.address}`);
    case "instructions":
      return placedCommand(probe, `u ${probe.address ?? "@$scopeip"} L${hex(probe.count)}`);
    case "memory":
      return placedCommand(probe, `dq ${masm(probe.address)} L${hex(probe.count)}`);
    case "string":
    case "strings":
      // `da` reads up to the first NUL: one string per command.
      return `da ${masm(probe.address)}`;
    case "symbol":
      return `ln ${probe.indirect ? `poi(${probe.address})` : probe.address}`;
    case "symbol-address":
      return `x ${probe.name}`;
    case "source-line":
      return `ln ${probe.address}`;
    case "source":
      return sourceCommand(probe.file, `ls 0n${probe.from}, 0n${Math.max(1, probe.to - probe.from + 1)}`);
    case "exit-signal":
    case "signal-info":
      // Windows has no signals: the exception record is what cdb knows of the stop.
      return ".exr -1";
    case "shared-libraries":
      return "lm";
    case "sections":
      return "lmf";
    case "mappings":
      return "!address";
    case "abort-message":
      return reading.managed ? "!pe" : ".lastevent";
    case "managed-threads":
    case "managed-stack":
    case "managed-stacks":
    case "managed-exception":
    case "managed-locks":
    case "managed-heap":
      return reading.managed ? sosCommand(probe) : "lm";
    case "select":
      return "thread" in probe ? `~${probe.thread}s` : `.frame ${hex(probe.frame)}`;
    case "command":
      return probe.text;
  }
}

type ManagedProbe = ProbeOf<"managed-threads" | "managed-stack" | "managed-stacks" | "managed-exception" | "managed-locks" | "managed-heap">;

/** SOS's command for a managed probe; `~Ne` runs one on another thread without moving the selection. */
function sosCommand(probe: ManagedProbe): string {
  switch (probe.kind) {
    case "managed-threads":
      return "!threads";
    case "managed-stack":
      return probe.thread === undefined || probe.thread === null ? "!clrstack -a" : `~${probe.thread}e !clrstack -a`;
    case "managed-stacks":
      return "~*e !clrstack -a";
    case "managed-exception":
      return "!pe";
    case "managed-locks":
      return "!syncblk";
    case "managed-heap":
      return "!dumpheap -stat";
  }
}

type Readers = { [K in keyof Readings]: (output: string, probe: ProbeOf<K>) => Readings[K] };

const READERS: Readers = {
  threads: parseThreads,
  backtrace: (output, probe) => {
    const whole = probe.outermost || probe.limit <= 0;
    const read = parseBacktrace(output, whole ? undefined : probe.limit);
    return probe.outermost && probe.limit > 0 ? { frames: read.frames.slice(-probe.limit), truncated: false } : read;
  },
  "thread-backtraces": (output, probe) => parseThreadBacktraces(output, probe.threads),
  registers: (output, probe) => {
    const registers = parseRegisters(output);
    return probe.names?.length ? registers.filter((r) => probe.names?.includes(r.name)) : registers;
  },
  register: (output) => parseRegisters(output)[0]?.value ?? null,
  evaluate: (output, probe) => parseEvaluation(output, probe.format === "hex"),
  "frame-info": (output, probe) => parseFrameCfa(output, probe.frame),
  locals: (output) => parseVariables(output, "locals"),
  arguments: (output) => parseVariables(output, "arguments"),
  disassemble: (output) => parseDisassembly(output),
  instructions: (output, probe) => parseDisassembly(output, probe.address === undefined),
  memory: parseMemoryWords,
  string: parseMemoryString,
  strings: (output) => [parseMemoryString(output)],
  symbol: parseNearestSymbol,
  // `00000000`005364b0 svc!runtime.allgs = <no type information>`
  "symbol-address": (output) => {
    const address = /^([0-9a-f]{8}`?[0-9a-f]{8})\s+\S+!/im.exec(output)?.[1];
    return address ? `0x${BigInt(`0x${address.replace("`", "")}`).toString(16)}` : null;
  },
  // With -lines, `ln` puts the address's `[file @ line]` above the symbol.
  "source-line": (output) => {
    const found = parseNearestSymbol(output);
    return found?.file && found.line ? { file: found.file, line: found.line } : null;
  },
  source: (output, probe) => parseSourceListing(output, probe.from, probe.to),
  "exit-signal": () => null,
  "signal-info": () => null,
  "shared-libraries": parseModuleList,
  sections: parseModuleFiles,
  mappings: parseRegions,
  "abort-message": (output) => {
    const managed = parsePrintException(output);
    if (!managed) return parseLastEvent(output);
    return managed.message ? `${managed.type}: ${managed.message}` : managed.type;
  },
  "managed-threads": parseClrThreads,
  "managed-stack": (output) => parseClrStacks(output)[0] ?? null,
  "managed-stacks": parseClrStacks,
  "managed-exception": parsePrintException,
  "managed-locks": parseSyncBlocks,
  "managed-heap": parseHeapStatistics,
  select: (output) => output,
  command: (output) => output,
};

/** What a managed probe reads without SOS: nothing, whatever the module list says. */
const WITHOUT_SOS: Pick<Readings, ManagedProbe["kind"]> = {
  "managed-threads": null,
  "managed-stack": null,
  "managed-stacks": [],
  "managed-exception": null,
  "managed-locks": [],
  "managed-heap": [],
};

function read<P extends Probe>(probe: P, output: string, reading: CdbReading): Reading<P> {
  if (!reading.managed && Object.hasOwn(WITHOUT_SOS, probe.kind)) return WITHOUT_SOS[probe.kind as ManagedProbe["kind"]] as Reading<P>;
  const reader = READERS[probe.kind] as unknown as (output: string, probe: P) => Reading<P>;
  return reader(output, probe);
}

/** A frame count as cdb reads it: hex unless it says `0n`. */
function count(text: string | undefined): number {
  const value = text === undefined ? null : cdbNumber(text);
  return value === null ? 0 : Number(value);
}

/** cdb commands a model or user may type that are one of the probes, so their output is read the same way. */
const RECOGNISED: CommandPatterns = [
  [/^~\*\s*kn(?:\s+(\S+))?$/i, (m) => ({ kind: "thread-backtraces", threads: "all", ...(m[1] ? { limit: count(m[1]) } : {}) })],
  [/^~(\d+)\s*kn(?:\s+(\S+))?$/i, (m) => ({ kind: "thread-backtraces", threads: [Number(m[1])], ...(m[2] ? { limit: count(m[2]) } : {}) })],
  [/^kn(?:\s+(\S+))?$/i, (m) => ({ kind: "backtrace", limit: count(m[1]) })],
  [/^~$/, () => ({ kind: "threads" })],
  [/^r$/i, () => ({ kind: "registers" })],
  [/^lm$/i, () => ({ kind: "shared-libraries" })],
  [/^lmf$/i, () => ({ kind: "sections" })],
  [/^!address$/i, () => ({ kind: "mappings" })],
  [/^uf\s+@\$scopeip$/i, () => ({ kind: "disassemble" })],
  [/^u\s+@\$scopeip\s+L(\S+)$/i, (m) => ({ kind: "instructions", count: count(m[1]) })],
];

/** SOS's commands, recognised as probes only where SOS is loaded to answer them. */
const RECOGNISED_SOS: CommandPatterns = [
  [/^!(?:sos\.)?(?:threads|clrthreads)$/i, () => ({ kind: "managed-threads" })],
  [/^!(?:sos\.)?clrstack\s+-a$/i, () => ({ kind: "managed-stack" })],
  [/^~(\d+)\s*e\s+!(?:sos\.)?clrstack\s+-a$/i, (m) => ({ kind: "managed-stack", thread: Number(m[1]) })],
  [/^~\*\s*e\s+!(?:sos\.)?clrstack\s+-a$/i, () => ({ kind: "managed-stacks" })],
  [/^!(?:sos\.)?(?:pe|printexception)$/i, () => ({ kind: "managed-exception" })],
  [/^!(?:sos\.)?syncblk$/i, () => ({ kind: "managed-locks" })],
  [/^!(?:sos\.)?dumpheap\s+-stat$/i, () => ({ kind: "managed-heap" })],
];

/** The recognised probes that the prefix places; the others read the whole process. */
const PLACED = new Set<Probe["kind"]>(["backtrace", "registers", "disassemble", "instructions"]);

/** The probe a cdb command is, reading through dumpdbg's `[thread T, frame F]` prefix. */
function recognise(command: string, reading: CdbReading): Probe | null {
  const { place, command: text } = parsePlaced(command.trim());
  if (place.source !== null) return null;
  const sos = reading.managed ? probeOfCommand(RECOGNISED_SOS, text.trim()) : null;
  // SOS's commands read the process or name their thread: a prefix would be lost on them.
  if (sos) return place.thread === null && place.frame === null ? sos : null;
  const found = probeOfCommand(RECOGNISED, text.trim());
  if (!found) return null;
  // A thread's whole stack is addressed by its thread, not by a frame.
  if (found.kind === "backtrace" && place.frame !== null) return null;
  if (found.kind === "thread-backtraces" && (place.thread !== null || place.frame !== null)) return null;
  return (PLACED.has(found.kind) ? { ...found, ...probePlace(place) } : found) as Probe;
}

const SYNTAX = [
  "cdb commands, one per line (numbers are hex unless written 0n12); for another thread or frame without moving: `[thread T, frame F] CMD`.",
  "`kn 0x28`, `~*kn 0x14`, `.exr -1`, `!analyze -v`, `r`, `dv /i /t /v`, `?? EXPR` (C++), `dt TYPE ADDR`, `dx EXPR`, `~`, `lm`,",
  "`dq ADDR L8`, `da ADDR`, `u @$scopeip L6`, `uf ADDR`, `ln ADDR`, `!address ADDR`; .NET (SOS): `!threads`, `!clrstack -a`, `!pe`, `!syncblk`, `!dumpheap -stat`",
].join("\n");

/** cdb's commands that move the selected thread, frame or register context. */
const SELECTION_CHANGE = /^\s*(?:~(?:\d+|[.#]|~\[[^\]]*\])s\s*$|\.frame\s+(?:\/\w+\s+)*\S|\.ecxr\b|\.cxr\b|\.thread\b)/i;

function vocabulary(reading: CdbReading): Vocabulary {
  return {
    debugger: "cdb",
    render: (probe) => render(probe, reading),
    read: (probe, output) => read(probe, output, reading),
    recognise: (command) => recognise(command, reading),
    movesSelection: (command) => SELECTION_CHANGE.test(command),
    syntax: SYNTAX,
  };
}

/** cdb's language on a native dump. */
export const cdbVocabulary: Vocabulary = vocabulary({ managed: false });
/** On a .NET dump with SOS loaded. */
export const cdbManagedVocabulary: Vocabulary = vocabulary({ managed: true });
