/**
 * Parsers for LLDB's frame and thread lines: `thread list`, `bt` / `thread backtrace`, and the
 * listing of several threads' stacks. dumpdbg's LLDB session sets lldb's formats to their defaults
 * with the source file's full path and the thread's tid in every thread header (`lldb-session.ts`).
 */
import type { Backtrace, Frame, ThreadBacktrace, ThreadSummary } from "../../model.js";
import { normalizeAddress } from "../../model.js";

/** A thread header: `* thread #1: tid = 4334, name = 'worker', stop reason = signal SIGSEGV`. */
const THREAD_HEADER = /^\s*([* ]) thread #(\d+)(?::? tid = (0x[0-9a-f]+|\d+))?(.*)$/;
const FRAME_LINE = /^\s*(\*)?\s*frame #(\d+): (.*)$/;

/**
 * The description of a frame: `0xADDR module\`function(args) + offset at /path/file.c:27:9 [opt]`;
 * every part after the address may be missing. Argument values may hold anything (`" at x.c:1"`,
 * a function pointer printed as `(prog\`main at main.c:3:1)`), so the location is the last ` at `
 * outside brackets and quotes.
 */
export function parseFrameText(text: string): Omit<Frame, "level"> | null {
  let rest = text.trim().replace(/(?:\s+\[(?:opt|artificial)\])+$/, "");
  const addressed = /^(0x[0-9a-fA-F]+)(?:\s+(.*))?$/.exec(rest);
  if (!addressed) return null;
  const address = normalizeAddress(addressed[1] ?? "0x0");
  rest = addressed[2] ?? "";
  const frame: Omit<Frame, "level"> = { address, function: null, args: "", file: null, line: null, from: null };
  const tick = rest.indexOf("`");
  if (tick < 0) {
    // Only a module (`libc.so.6 + 1234`) or nothing: no symbol is known there.
    const module = /^(\S+)/.exec(rest)?.[1];
    if (module) frame.from = module;
    return frame;
  }
  const module = rest.slice(0, tick);
  rest = rest.slice(tick + 1);
  const at = lastOutside(rest, " at ");
  if (at >= 0) {
    const location = parseLocation(rest.slice(at + 4).trim());
    if (location) {
      frame.file = location.file;
      frame.line = location.line;
      rest = rest.slice(0, at);
    }
  }
  rest = rest.replace(/\s+\+\s+\d+$/, "");
  if (frame.file !== null) {
    // With debug information lldb prints the arguments with their values: `f(a=1, b=0x0)`, and a
    // C++ method's qualifiers after them: `Session::idle_seconds(this=0x0, now=1400) const`.
    const called = rest.replace(/\)(?:\s+(?:const|volatile|&&|&|noexcept))+$/, ")");
    const open = called.endsWith(")") ? openingParen(called) : null;
    if (open !== null && open > 0 && /=/.test(called.slice(open))) {
      frame.args = called.slice(open + 1, -1);
      rest = called.slice(0, open);
    }
    // Code inlined into a function is named `caller [inlined] callee`: the frame is the callee's.
    const inlined = rest.lastIndexOf(" [inlined] ");
    if (inlined >= 0) rest = rest.slice(inlined + " [inlined] ".length);
  } else {
    // A function without debug information: name the module it is in, as a listing of it would.
    frame.from = module;
  }
  // lldb names a stripped function by its index in the symbol table: no name is known there.
  // A section's name (`.text + 212`) is no function either.
  frame.function = rest.trim() === "" || /^(?:___lldb_unnamed_symbol\d+|\.\w+)$/.test(rest.trim()) ? null : rest.trim();
  return frame;
}

/**
 * `FILE:LINE:COLUMN`, `FILE:LINE`, or `LINE:COLUMN` when lldb knows no file name (code compiled
 * without one, as parts of mingw's runtime are).
 */
export function parseLocation(text: string): { file: string | null; line: number } | null {
  const parts = /^(?:(.+?):)?(\d+)(?::(\d+))?$/.exec(text);
  if (!parts) return null;
  const [, file, first, second] = parts;
  if (file === undefined) return second === undefined ? null : { file: null, line: Number(first) };
  if (/^\d+$/.test(file) && second === undefined) return { file: null, line: Number(file) };
  return { file, line: Number(first) };
}

export function parseBacktrace(output: string, limit?: number): Backtrace {
  const frames: Frame[] = [];
  for (const line of output.split("\n")) {
    const frame = frameLine(line);
    if (frame) frames.push(frame);
  }
  // dumpdbg asks for one frame more than it wants: that one says whether more follow.
  const truncated = limit !== undefined && limit > 0 && frames.length > limit;
  return { frames: truncated ? frames.slice(0, limit) : frames, truncated };
}

/** `thread backtrace all` (or of listed threads): each thread's header, then its frames. */
export function parseThreadBacktraces(output: string): ThreadBacktrace[] {
  const threads: ThreadBacktrace[] = [];
  for (const line of output.split("\n")) {
    const header = THREAD_HEADER.exec(line);
    if (header) {
      threads.push({ thread: Number(header[2]), lwp: header[3] ? Number(header[3]) : null, name: threadName(header[4] ?? ""), frames: [] });
      continue;
    }
    const frame = frameLine(line);
    const current = threads.at(-1);
    if (frame && current) current.frames.push(frame);
  }
  return threads;
}

/** `thread list`: `* thread #1: tid = 4334, 0x... prog\`f(a=1) at f.c:3:5, name = 'prog', stop reason = signal SIGSEGV`. */
export function parseThreads(output: string): ThreadSummary[] {
  const threads: ThreadSummary[] = [];
  for (const line of output.split("\n")) {
    const header = THREAD_HEADER.exec(line);
    if (!header) continue;
    const rest = (header[4] ?? "").replace(/^,\s*/, "");
    const { frameText, tail } = splitThreadLine(rest);
    threads.push({
      id: Number(header[2]),
      lwp: header[3] ? Number(header[3]) : null,
      name: threadName(tail),
      current: header[1] === "*",
      frame: frameText ? parseFrameText(frameText) : null,
    });
  }
  return threads;
}

/** The stop reason a thread line or header shows (`signal SIGSEGV`, `exception`), or null. */
export function stopReasonOf(line: string): string | null {
  return /, stop reason = (.*)$/.exec(line)?.[1]?.trim() ?? null;
}

function frameLine(line: string): Frame | null {
  const match = FRAME_LINE.exec(line);
  if (!match) return null;
  const frame = parseFrameText(match[3] ?? "");
  return frame ? { ...frame, level: Number(match[2]) } : null;
}

/** A thread line after its tid: the frame, then `, name = '…'` and `, stop reason = …`. */
function splitThreadLine(rest: string): { frameText: string | null; tail: string } {
  if (!rest.startsWith("0x")) return { frameText: null, tail: rest };
  const cut = firstOutside(rest, /, (?:name|queue|activity|stop reason) = /);
  return cut < 0 ? { frameText: rest, tail: "" } : { frameText: rest.slice(0, cut), tail: rest.slice(cut) };
}

function threadName(tail: string): string | null {
  return /(?:^|, )name = '(.*?)'(?:, (?:queue|activity|stop reason) = |$)/.exec(tail)?.[1] ?? null;
}

/** Index of the last `needle` outside parentheses, brackets and quotes. */
function lastOutside(text: string, needle: string): number {
  let found = -1;
  scan(text, (index) => {
    if (text.startsWith(needle, index)) found = index;
  });
  return found;
}

function firstOutside(text: string, pattern: RegExp): number {
  let found = -1;
  scan(text, (index) => {
    if (found < 0 && pattern.exec(text.slice(index))?.index === 0) found = index;
  });
  return found;
}

/** Calls `visit` with each index of `text` at bracket depth 0 outside quoted strings. */
function scan(text: string, visit: (index: number) => void): void {
  let depth = 0;
  let quote: string | null = null;
  for (let index = 0; index < text.length; index++) {
    const ch = text[index];
    if (quote) {
      if (ch === "\\") index++;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"') quote = ch;
    else if (ch === "(" || ch === "[" || ch === "{") depth++;
    else if ((ch === ")" || ch === "]" || ch === "}") && depth > 0) depth--;
    else if (depth === 0) visit(index);
  }
}

/** Index of the `(` that matches the `)` ending `text`, skipping quoted strings. */
function openingParen(text: string): number | null {
  let depth = 0;
  let quote = false;
  for (let index = text.length - 1; index >= 0; index--) {
    const ch = text[index];
    if (quote) {
      if (ch === '"' && text[index - 1] !== "\\") quote = false;
      continue;
    }
    if (ch === '"') quote = true;
    else if (ch === ")") depth++;
    else if (ch === "(" && --depth === 0) return index;
  }
  return null;
}
