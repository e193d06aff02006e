/**
 * LLDB's language for probes: each probe as the command a user at an lldb prompt would type, and
 * that command's output read back into the model (values in the one-line C form gdb's readers give,
 * instructions in gdb's AT&T spelling). A probe addressed to another thread or frame carries the
 * session's `[thread T, frame F]` prefix, so the selection never moves.
 */
import type { SourceLine } from "../model.js";
import { probeOfCommand, type CommandPatterns, type Probe, type ProbeOf, type Reading, type Readings, type Vocabulary } from "../probe.js";
import { placedCommand, parsePlaced, probePlace } from "../place-text.js";
import { parseDisassembly } from "./text/disassembly.js";
import { parseBacktrace, parseThreadBacktraces, parseThreads } from "./text/frames.js";
import { parseImageList, parseLookup, parseRegions, parseSections } from "./text/images.js";
import { parseMemoryStrings, parseMemoryWords, parseSourceListing, parseStopSignal, parseStopSignalRecord } from "./text/misc.js";
import { parseRegisters } from "./text/registers.js";
import { parseExpressionValue, parseVariables } from "./text/values.js";

/** glibc's `struct abort_msg_s { unsigned int size; char msg[]; }`: the text is 4 bytes into the block. */
const ABORT_MESSAGE_COMMAND = 'memory read --format s --count 1 -- "*(char **)&__abort_msg + 4"';

/** What `frame variable` reads: a name, members, constant indexes, one dereference or address-of. */
const VARIABLE_PATH = /^[*&]?[A-Za-z_]\w*(?:(?:->|\.)[A-Za-z_]\w*|\[\d+\])*$/;

/** An address expression as one argument of an lldb command. */
function argument(expression: string): string {
  return /[\s"'\\]/.test(expression) ? `"${expression.replace(/["\\]/g, "\\$&")}"` : expression;
}

function threadArgument(thread: number | null | undefined): string {
  return thread === undefined || thread === null ? "" : ` ${thread}`;
}

/**
 * How the dump's values are read: on a core, `expression` (it sees every module's globals); on a
 * minidump, where `expression` has no process to keep its result in, a variable path goes through
 * `frame variable`, which runs nothing.
 */
export interface LldbReading {
  variablesWithoutExpressions: boolean;
}

function render(probe: Probe, reading: LldbReading): string {
  switch (probe.kind) {
    case "threads":
    case "exit-signal":
    case "signal-info":
      // lldb has no `$_siginfo`: the stop reason in the thread list is what it knows of the signal.
      return "thread list";
    case "backtrace":
      if (probe.outermost || probe.limit <= 0) return `thread backtrace${threadArgument(probe.thread)}`;
      // One frame more than asked: whether it comes says whether the stack goes on.
      return `thread backtrace --count ${probe.limit + 1}${threadArgument(probe.thread)}`;
    case "thread-backtraces":
      return `thread backtrace${probe.limit ? ` --count ${probe.limit}` : ""} ${probe.threads === "all" ? "all" : probe.threads.join(" ")}`;
    case "registers":
      return placedCommand(probe, `register read${probe.names?.length ? ` ${probe.names.join(" ")}` : ""}`);
    case "register":
      return placedCommand(probe, `register read ${probe.register}`);
    case "evaluate":
      // A variable path (`session->client`, `*port`, `&a[2].b`) is read by `frame variable`.
      if (reading.variablesWithoutExpressions && VARIABLE_PATH.test(probe.expression.trim())) {
        return placedCommand(probe, `frame variable ${probe.format === "hex" ? "--format x " : ""}${argument(probe.expression.trim())}`);
      }
      return placedCommand(probe, `expression ${probe.format === "hex" ? "--format x " : ""}-- ${probe.expression}`);
    case "frame-info":
      // A frame's CFA is its caller's stack pointer: the value rsp had before the call.
      return placedCommand({ thread: probe.thread ?? null, frame: probe.frame + 1 }, "register read sp");
    case "locals":
      return placedCommand(probe, "frame variable --no-args");
    case "arguments":
      return placedCommand(probe, "frame variable --no-locals");
    case "disassemble":
      if (probe.address === undefined) return placedCommand(probe, "disassemble --bytes --frame");
      // The code before a return address: lldb lists a range only up to the end of the symbol it
      // starts in, but names even a stripped function (from its unwind information), so the whole
      // function around the call's last byte is listed instead.
      return placedCommand(probe, `disassemble --bytes --address ${probe.before ? `${probe.address}-1` : probe.address}`);
    case "instructions":
      return placedCommand(probe, probe.address === undefined ? `disassemble --bytes --pc --count ${probe.count}` : `disassemble --bytes --start-address ${probe.address} --count ${probe.count}`);
    case "memory":
      // lldb refuses to read more than target.max-memory-read-size (1 KiB) without --force.
      return placedCommand(probe, `memory read ${probe.count * 8 > 1024 ? "--force " : ""}--size 8 --format x --count ${probe.count} ${argument(probe.address)}`);
    case "string":
      return `memory read --format s --count 1 ${argument(probe.address)}`;
    case "strings":
      return `memory read --format s --count ${probe.count} ${argument(probe.address)}`;
    case "symbol":
      // Verbose: a PE's first variable in a section is summarised as the section (`.bss`); its Variable line names it.
      return `image lookup --address ${probe.indirect ? argument(`*(void **)${probe.address}`) : probe.address} --verbose`;
    case "symbol-address":
      // Verbose: its Symbol line gives the loaded range; the summary's Address is the file address.
      return `image lookup --symbol ${argument(probe.name)} --verbose`;
    case "source-line":
      // Verbose: its LineEntry names the whole path, where the summary gives the file's name alone.
      return `image lookup --address ${probe.address} --verbose`;
    case "source":
      return `source list --file ${argument(probe.file)} --line ${probe.from} --count ${Math.max(1, probe.to - probe.from + 1)}`;
    case "shared-libraries":
      return "image list";
    case "sections":
      return "image dump sections";
    case "mappings":
      return "memory region --all";
    case "abort-message":
      return ABORT_MESSAGE_COMMAND;
    case "managed-threads":
    case "managed-stack":
    case "managed-stacks":
    case "managed-exception":
    case "managed-locks":
    case "managed-heap":
      // dumpdbg's LLDB session loads no SOS plugin (libsosplugin.so): the images show whether the
      // process ran .NET, and the managed side reads as none.
      return "image list";
    case "select":
      return "thread" in probe ? `thread select ${probe.thread}` : `frame select ${probe.frame}`;
    case "command":
      return probe.text;
  }
}

type Readers = { [K in keyof Readings]: (output: string, probe: ProbeOf<K>) => Readings[K] };

/** The verbose lookup's line entry: the whole path of the source file and the line. */
function lineEntryOf(output: string): { file: string; line: number } | null {
  const entry = /^\s*LineEntry: \[[^\]]*\): (.+?):(\d+)(?::\d+)?\s*$/m.exec(output);
  return entry?.[1] && entry[2] ? { file: entry[1], line: Number(entry[2]) } : null;
}

const READERS: Readers = {
  threads: parseThreads,
  backtrace: (output, probe) => {
    const read = parseBacktrace(output, probe.outermost || probe.limit <= 0 ? undefined : probe.limit);
    return probe.outermost && probe.limit > 0 ? { frames: read.frames.slice(-probe.limit), truncated: false } : read;
  },
  "thread-backtraces": parseThreadBacktraces,
  registers: parseRegisters,
  register: (output) => parseRegisters(output)[0]?.value ?? null,
  evaluate: parseExpressionValue,
  "frame-info": (output) => parseRegisters(output)[0]?.value ?? null,
  locals: parseVariables,
  arguments: parseVariables,
  disassemble: parseDisassembly,
  instructions: parseDisassembly,
  memory: parseMemoryWords,
  string: (output) => parseMemoryStrings(output)[0] ?? null,
  strings: parseMemoryStrings,
  symbol: (output) => {
    // The summary names the file alone (`at format-check.c:35:5`); the LineEntry, the whole path.
    const found = parseLookup(output);
    const entry = lineEntryOf(output);
    const sameFile = (file: string | null | undefined) => !!file && !!entry && entry.file.split(/[\\/]/).at(-1) === file.split(/[\\/]/).at(-1);
    if (!found || !entry) return found;
    return {
      ...found,
      ...(sameFile(found.file) ? { file: entry.file } : {}),
      ...(found.inlined ? { inlined: found.inlined.map((frame) => (sameFile(frame.file) ? { ...frame, file: entry.file } : frame)) } : {}),
    };
  },
  // `Symbol: id = {0x00005c08}, range = [0x00007ffff7d63840-0x00007ffff7d63c40), name="VMError::_detail_msg"`: where
  // it is loaded (a shared library's is relocated); else `Address: svc[0x00000000005364b0] (…)`, the file
  // address, which is the load address of a program not relocated.
  "symbol-address": (output) => {
    const address = /Symbol: .*?range = \[(0x[0-9a-fA-F]+)-/.exec(output)?.[1] ?? /Address: \S*\[(0x[0-9a-fA-F]+)\]/.exec(output)?.[1];
    return address ? `0x${BigInt(address).toString(16)}` : null;
  },
  "source-line": (output) => {
    const entry = lineEntryOf(output);
    if (entry) return entry;
    const found = parseLookup(output);
    return found?.file && found.line ? { file: found.file, line: found.line } : null;
  },
  source: (output, probe): SourceLine[] => parseSourceListing(output, probe.from, probe.to),
  "exit-signal": parseStopSignal,
  "signal-info": parseStopSignalRecord,
  "shared-libraries": parseImageList,
  sections: parseSections,
  mappings: parseRegions,
  "abort-message": (output) => {
    const text = parseMemoryStrings(output)[0];
    return text ? text.trim() : null;
  },
  "managed-threads": () => null,
  "managed-stack": () => null,
  "managed-stacks": () => [],
  "managed-exception": () => null,
  "managed-locks": () => [],
  "managed-heap": () => [],
  select: (output) => output,
  command: (output) => output,
};

function read<P extends Probe>(probe: P, output: string): Reading<P> {
  const reader = READERS[probe.kind] as unknown as (output: string, probe: P) => Reading<P>;
  return reader(output, probe);
}

/** lldb commands a model or user may type that are one of the probes, so their output is read the same way. */
const RECOGNISED: CommandPatterns = [
  [/^(?:bt|thread backtrace)\s+(?:(?:-c|--count)\s+(\d+)\s+)?all\s*$/, (m) => ({ kind: "thread-backtraces", threads: "all", ...(m[1] ? { limit: Number(m[1]) } : {}) })],
  [/^thread backtrace\s+all\s+(?:-c|--count)\s+(\d+)\s*$/, (m) => ({ kind: "thread-backtraces", threads: "all", limit: Number(m[1]) })],
  [/^bt(?:\s+(\d+))?\s*$/, (m) => ({ kind: "backtrace", limit: Number(m[1] ?? 0) })],
  [/^thread backtrace(?:\s+(?:-c|--count)\s+(\d+))?\s*$/, (m) => ({ kind: "backtrace", limit: Number(m[1] ?? 0) })],
  [/^thread list\s*$/, () => ({ kind: "threads" })],
  [/^(?:register|reg|re) read(?:\s+((?:[a-z][a-z0-9]*\s*)+))?$/, (m) => ({ kind: "registers", ...(m[1]?.trim() ? { names: m[1].trim().split(/\s+/) } : {}) })],
  [/^(?:image|target modules) list\s*$/, () => ({ kind: "shared-libraries" })],
  [/^(?:image|target modules) dump sections\s*$/, () => ({ kind: "sections" })],
  [/^memory region (?:--all|-a)\s*$/, () => ({ kind: "mappings" })],
  [/^frame variable (?:--no-args|-a)\s*$/, () => ({ kind: "locals" })],
  [/^frame variable (?:--no-locals|-l)\s*$/, () => ({ kind: "arguments" })],
  [/^(?:disassemble|di|dis)(?:\s+(?:--bytes|-b))?(?:\s+(?:--frame|-f))?\s*$/, () => ({ kind: "disassemble" })],
  [/^(?:disassemble|di|dis)(?:\s+(?:--bytes|-b))?\s+(?:--pc|-p)\s+(?:--count|-c)\s+(\d+)\s*$/, (m) => ({ kind: "instructions", count: Number(m[1]) })],
];

/** The probe an lldb command is, reading through dumpdbg's `[thread T, frame F]` prefix. */
function recognise(command: string): Probe | null {
  const { place, command: text } = parsePlaced(command.trim());
  const found = probeOfCommand(RECOGNISED, text.trim());
  // A thread's whole stack is addressed by its argument, not by the prefix's frame.
  if (!found || (found.kind === "backtrace" && place.frame !== null)) return null;
  return { ...found, ...probePlace(place) } as Probe;
}

const SYNTAX = [
  "lldb commands, one per line; for another thread or frame without moving the selection, prefix it: `[thread T, frame F] CMD`.",
  "`bt 40`, `thread backtrace all --count 20`, `expression -- EXPR`, `expression --format x -- EXPR`, `frame variable`, `register read`, `thread list`,",
  "`memory read --size 8 --format x --count 8 ADDR`, `memory read --format s ADDR`, `disassemble --frame`, `disassemble --pc --count 6`, `image lookup --address ADDR`, `memory region --all`, `source list --file F --line A --count N`",
].join("\n");

/** lldb's commands that move the selected thread or frame (not through the prefix, which puts it back). */
const SELECTION_CHANGE = /^\s*(?:thread select|frame select|f|t|up|down|_regexp-up|_regexp-down)(?:\s|$)/;

function vocabulary(reading: LldbReading): Vocabulary {
  return {
    debugger: "lldb",
    render: (probe) => render(probe, reading),
    read,
    recognise,
    movesSelection: (command) => SELECTION_CHANGE.test(command),
    syntax: SYNTAX,
  };
}

/** LLDB's language on an ELF core. */
export const lldbVocabulary: Vocabulary = vocabulary({ variablesWithoutExpressions: false });
/** On a minidump. */
export const lldbMinidumpVocabulary: Vocabulary = vocabulary({ variablesWithoutExpressions: true });
