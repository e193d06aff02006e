/**
 * gdb's language for probes: each probe as the console command a user at a gdb prompt would type,
 * and that command's output read back into the model. Commands addressed to another thread or
 * frame use `thread apply`/`frame apply` so the session's selection never moves (the evidence
 * store's cache stays valid, and a resumed run renders the same command again).
 */
import { ABORT_MESSAGE_COMMAND, parseAbortMessage } from "./text/abort-message.js";
import { parseBacktrace, parseThreadBacktraces } from "./text/backtrace.js";
import { normalizeAddress, printedValue } from "./text/common.js";
import { parseDisassembly } from "./text/disassembly.js";
import { parseMappings, parseTargetFiles } from "./text/mappings.js";
import { parseMemoryString, parseMemoryWords } from "./text/memory.js";
import { parseRegisters } from "./text/registers.js";
import { parseSharedLibraries } from "./text/shared-libraries.js";
import { parseExitSignal, parseSiginfo } from "./text/signals.js";
import { parseThreads } from "./text/threads.js";
import { parseLocals } from "./text/variables.js";
import type { SourceLine, SymbolAt } from "../model.js";
import { probeOfCommand, type CommandPatterns, type Place, type Probe, type Reading, type Readings, type Vocabulary } from "../probe.js";

function at(place: Place, command: string): string {
  const inFrame = place.frame ? `frame apply level ${place.frame} -q ${command}` : command;
  return place.thread !== undefined && place.thread !== null ? `thread apply ${place.thread} -q ${inFrame}` : inFrame;
}

function render(probe: Probe): string {
  switch (probe.kind) {
    case "threads":
      return "info threads";
    case "backtrace":
      return at({ thread: probe.thread ?? null }, `bt ${probe.outermost ? "-" : ""}${probe.limit}`);
    case "thread-backtraces":
      return `thread apply ${probe.threads === "all" ? "all" : probe.threads.join(" ")} bt${probe.limit ? ` ${probe.limit}` : ""}`;
    case "registers":
      return at(probe, `info registers${probe.names?.length ? ` ${probe.names.join(" ")}` : ""}`);
    case "register":
      return at(probe, `p/x $${probe.register}`);
    case "evaluate":
      return at(probe, `p${probe.format === "hex" ? "/x" : ""} ${probe.expression}`);
    case "frame-info":
      return at({ thread: probe.thread ?? null }, `info frame level ${probe.frame}`);
    case "locals":
      return at(probe, "info locals");
    case "arguments":
      return at(probe, "info args");
    case "disassemble":
      if (probe.address === undefined) return at(probe, "disassemble");
      return at(probe, probe.before ? `disassemble ${probe.address}-${probe.before},${probe.address}+1` : `disassemble ${probe.address}`);
    case "instructions":
      return at(probe, `x/${probe.count === 1 ? "" : probe.count}i ${probe.address ?? "$pc"}`);
    case "memory":
      return at(probe, `x/${probe.count}gx ${probe.address}`);
    case "string":
      return `x/s ${probe.address}`;
    case "strings":
      // `print elements` would cut long values at 200 characters, `print repeats` fold runs of one character.
      return `with print elements unlimited -- with print repeats unlimited -- x/${probe.count}s ${probe.address}`;
    case "symbol":
      return `info symbol ${probe.indirect ? `*(void **) ${probe.address}` : probe.address}`;
    case "symbol-address":
      return `info address ${probe.name}`;
    case "source":
      return `list ${probe.file}:${probe.from},${probe.to}`;
    case "source-line":
      return `info line *${probe.address}`;
    case "exit-signal":
      return "p $_exitsignal";
    case "signal-info":
      return "p $_siginfo";
    case "shared-libraries":
      return "info sharedlibrary";
    case "sections":
      return "info files";
    case "mappings":
      return "info proc mappings";
    case "abort-message":
      return ABORT_MESSAGE_COMMAND;
    case "managed-threads":
    case "managed-stack":
    case "managed-stacks":
    case "managed-exception":
    case "managed-locks":
    case "managed-heap":
      // gdb has no reader of .NET's runtime (SOS is for cdb and lldb): the libraries show whether
      // the process ran one (libcoreclr.so), and the managed side reads as none.
      return "info sharedlibrary";
    case "select":
      return "thread" in probe ? `thread ${probe.thread}` : `frame ${probe.frame}`;
    case "command":
      return probe.text;
  }
}

type Readers = { [K in keyof Readings]: (output: string) => Readings[K] };

const READERS: Readers = {
  threads: parseThreads,
  backtrace: parseBacktrace,
  "thread-backtraces": parseThreadBacktraces,
  registers: parseRegisters,
  register: (output) => {
    const value = printedValue(output);
    return value && /^0x[0-9a-f]+$/.test(value) ? normalizeAddress(value) : null;
  },
  evaluate: printedValue,
  "frame-info": (output) => {
    const cfa = /frame at (0x[0-9a-f]+)/.exec(output)?.[1];
    return cfa ? normalizeAddress(cfa) : null;
  },
  locals: parseLocals,
  arguments: parseLocals,
  disassemble: parseDisassembly,
  instructions: parseDisassembly,
  memory: (output) => {
    const { start, words } = parseMemoryWords(output);
    return { start: start === null ? null : `0x${start.toString(16)}`, words };
  },
  string: parseMemoryString,
  strings: (output) => output.split("\n").filter((line) => /^0x[0-9a-f]+/.test(line)).map((line) => parseMemoryString(line)),
  symbol: parseSymbol,
  source: parseSource,
  // `Symbol "runtime.allgs" is static storage at address 0x5364b0.`, `... is at 0x4010 in a file compiled without debugging.`
  "symbol-address": (output) => {
    const address = /^Symbol ".*" is (?:static storage at address|at|a function at address) (0x[0-9a-f]+)/m.exec(output)?.[1];
    return address ? normalizeAddress(address) : null;
  },
  // `Line 11 of "greet.c" starts at address 0x1186 <greet+61> and ends at 0x1188.`
  "source-line": (output) => {
    const row = /^Line (\d+) of "(.+?)"/m.exec(output.trim());
    return row ? { file: row[2] ?? "", line: Number(row[1]) } : null;
  },
  "exit-signal": parseExitSignal,
  "signal-info": parseSiginfo,
  "shared-libraries": parseSharedLibraries,
  sections: parseTargetFiles,
  mappings: parseMappings,
  "abort-message": parseAbortMessage,
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
  const reader = READERS[probe.kind] as (output: string) => Reading<P>;
  return reader(output);
}

/** `info symbol`: `leaf + 12 in section .text of /lib/libc.so.6`, or `No symbol matches ...`. */
/** gdb prints some Go functions with the last element in brackets (`main[load]`, `fmt.(*pp)[printValue]`): the symbol is `main.load`. */
function goSymbolName(symbol: string): string {
  return symbol.replace(/^([\w./]+(?:\.\(\*?\w+\))?)\[([A-Za-z_]\w*)\]$/, "$1.$2");
}

function parseSymbol(output: string): SymbolAt | null {
  const row = /^(.+?)(?: \+ (\d+))? in section (\S+)(?: of (.+))?$/m.exec(output.trim());
  if (!row) return null;
  return { symbol: goSymbolName(row[1] ?? ""), offset: Number(row[2] ?? 0), section: row[3] ?? null, module: row[4]?.trim() ?? null };
}

/** `list FILE:A,B`: `22\t    session->client = NULL;` per line. */
function parseSource(output: string): SourceLine[] {
  const lines: SourceLine[] = [];
  for (const row of output.split("\n")) {
    const match = /^(\d+)\t(.*)$/.exec(row);
    if (match) lines.push({ line: Number(match[1]), text: match[2] ?? "" });
  }
  return lines;
}

/** Commands a model or user may type that are one of the probes, so their output is read the same way. */
const RECOGNISED: CommandPatterns = [
  [/^thread apply (all|[\d\s-]+?)\s+(?:-\S+\s+)*(?:bt|backtrace|where)\b(?:\s+(\d+))?\s*$/, (m) => ({ kind: "thread-backtraces", threads: m[1] === "all" ? "all" : (m[1] ?? "").trim().split(/\s+/).map(Number), ...(m[2] ? { limit: Number(m[2]) } : {}) })],
  [/^(?:bt|backtrace|where)(?:\s+-?full)?(?:\s+(-?)(\d+))?\s*$/, (m) => ({ kind: "backtrace", limit: Number(m[2] ?? 0), ...(m[1] ? { outermost: true } : {}) })],
  [/^(?:info\s+(?:registers|all-registers)|i\s+r)\b(.*)$/, (m) => ({ kind: "registers", ...((m[1] ?? "").trim() ? { names: (m[1] ?? "").trim().split(/\s+/) } : {}) })],
  [/^(?:p|print|output)\s+(?:\/\w\s+)?\$_siginfo\s*$/, () => ({ kind: "signal-info" })],
  [/^(?:p|print)\s+\$_exitsignal\s*$/, () => ({ kind: "exit-signal" })],
  [/^info\s+threads\b/, () => ({ kind: "threads" })],
  [/^info\s+proc\s+mappings\b/, () => ({ kind: "mappings" })],
  [/^info\s+(?:files|target)\b/, () => ({ kind: "sections" })],
  [/^info\s+(?:sharedlibrary|shared|dll)\b/, () => ({ kind: "shared-libraries" })],
  [/^(?:disassemble|disas)\b/, () => ({ kind: "disassemble" })],
  [/^x\/(\d*)i\b/, (m) => ({ kind: "instructions", count: Number(m[1] || 1) })],
  [/^info\s+locals\b/, () => ({ kind: "locals" })],
  [/^info\s+args\b/, () => ({ kind: "arguments" })],
  [/^x\/s\s+\*\(char \*\*\)&__abort_msg \+ 4$/, () => ({ kind: "abort-message" })],
];

/** The probe a gdb command is, reading through `thread apply N [-q]` and `frame apply level N [-q]`. */
function recognise(command: string): Probe | null {
  let text = command.trim();
  const place: Place = {};
  // `thread apply N bt` prints a header per thread (a listing of threads); with -q, one stack.
  const thread = /^thread apply (\d+)\s+(-q\s+)?(?![\d-])(.*)$/.exec(text);
  if (thread && (thread[2] || !/^(?:bt|backtrace|where)\b/.test(thread[3] ?? ""))) {
    place.thread = Number(thread[1]);
    text = thread[3] ?? "";
  }
  const frame = /^frame apply level (\d+)\s+(?:-q\s+)?(.*)$/.exec(text);
  if (frame) {
    place.frame = Number(frame[1]);
    text = frame[2] ?? "";
  }
  const found = probeOfCommand(RECOGNISED, text);
  return found && ({ ...found, ...place } as Probe);
}

const SYNTAX = [
  "gdb console commands, one per line; for another thread or frame without moving: `thread apply N -q frame apply level F -q CMD`.",
  "`bt 40`, `thread apply all bt 20`, `p EXPR`, `p/x EXPR`, `info locals`, `info args`, `info registers`, `info frame level F`, `info threads`,",
  "`x/8gx ADDR`, `x/s ADDR`, `x/6i $pc`, `disassemble`, `info symbol ADDR`, `info proc mappings`, `list FILE:A,B`",
].join("\n");

/** Commands that may move the selection, with the prefixes and aliases gdb takes for them (`thre`, `fra`, `do`, `dow`), and MI's. */
const SELECTION_CHANGE = /^\s*(t|thr|thre|threa|thread|f|fr|fra|fram|frame|up|do|dow|down|up-silently|down-silently|select-frame|-thread-select|-stack-select-frame)(\s+(?!apply\b)\S.*)?$/;

export const gdbVocabulary: Vocabulary = {
  debugger: "gdb",
  render,
  read,
  recognise,
  movesSelection: (command) => SELECTION_CHANGE.test(command),
  syntax: SYNTAX,
  // gdb reads each compilation unit's file names (its line table's header) the first time a source
  // is named (`list FILE:LINE`), every module's: with libc's debug information installed that is
  // ~15 ms of the first listing. `maint expand-symtabs` reads them to match its pattern, and this
  // pattern matches no file (a file's base name never holds a `/`): nothing is expanded.
  readSourceNames: "maint expand-symtabs ^/$",
};
