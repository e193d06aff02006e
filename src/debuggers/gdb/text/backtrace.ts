/** Parsers for `bt` / `bt full` / `bt N` / `bt -N` and `thread apply all bt`. */
import type { Backtrace, Frame, ThreadBacktrace } from "../../model.js";
import { lines, normalizeAddress } from "./common.js";

const FRAME_LINE = /^#(\d+)\s+(.*)$/;

export function parseBacktrace(output: string): Backtrace {
  const frames: Frame[] = [];
  let truncated = false;
  for (const line of lines(output)) {
    if (line.startsWith("(More stack frames follow")) truncated = true;
    const frame = parseFrameLine(line);
    if (frame) {
      frames.push(frame);
      continue;
    }
    const local = /^ {8}(\S+) = (.*)$/.exec(line);
    const last = frames.at(-1);
    if (local && last) (last.locals ??= []).push({ name: local[1] ?? "", value: local[2] ?? "" });
  }
  return { frames, truncated };
}

/** `thread apply all bt` (or `thread apply 1 2 bt`): one backtrace per thread, in gdb's order. */
export function parseThreadBacktraces(output: string): ThreadBacktrace[] {
  const threads: ThreadBacktrace[] = [];
  let chunk: string[] = [];
  const flush = () => {
    const current = threads.at(-1);
    if (current) current.frames = parseBacktrace(chunk.join("\n")).frames;
    chunk = [];
  };
  for (const line of lines(output)) {
    const header = /^Thread (\d+) \((.*)\):$/.exec(line);
    if (header) {
      flush();
      const target = header[2] ?? "";
      const lwp = /\(LWP (\d+)\)/.exec(target) ?? /^process (\d+)/.exec(target);
      const name = /"((?:[^"\\]|\\.)*)"$/.exec(target);
      threads.push({ thread: Number(header[1]), lwp: lwp ? Number(lwp[1]) : null, name: name?.[1] ?? null, frames: [] });
      continue;
    }
    chunk.push(line);
  }
  flush();
  return threads;
}

export function parseFrameLine(line: string): Frame | null {
  const match = FRAME_LINE.exec(line.trimEnd());
  if (!match) return null;
  const frame = parseFrameText(match[2] ?? "");
  return frame ? { ...frame, level: Number(match[1]) } : null;
}

/**
 * The part of a frame line after `#N`, as also printed in the Frame column of `info threads`:
 * `[0xADDR in ]FUNCTION (ARGS)[ at FILE:LINE | from MODULE]`. Function names may themselves hold
 * parentheses (`std::terminate()`, `(anonymous namespace)::f`) and argument strings may hold
 * anything, so the argument list is found from the end of the line, quote-aware.
 */
export function parseFrameText(text: string): Omit<Frame, "level"> | null {
  let rest = text.trim();
  if (rest === "<signal handler called>") {
    return { address: null, function: rest, args: "", file: null, line: null, from: null };
  }
  let address: string | null = null;
  const addressed = /^(0x[0-9a-fA-F]+) in (.*)$/.exec(rest);
  if (addressed) {
    address = normalizeAddress(addressed[1] ?? "0x0");
    rest = addressed[2] ?? "";
  }
  let file: string | null = null;
  let line: number | null = null;
  let from: string | null = null;
  // Argument strings may contain " at x:1" too: only the last one can be the location.
  const at = rest.lastIndexOf(") at ");
  const located = at >= 0 ? /^(.+):(\d+)$/.exec(rest.slice(at + 5)) : null;
  const fromAt = rest.lastIndexOf(") from ");
  if (located) {
    file = located[1] ?? null;
    line = Number(located[2]);
    rest = rest.slice(0, at + 1);
  } else if (fromAt >= 0 && !rest.endsWith(")")) {
    from = rest.slice(fromAt + 7);
    rest = rest.slice(0, fromAt + 1);
  }
  const open = openingParen(rest);
  if (open === null) return null;
  const name = rest.slice(0, open).trim();
  return {
    address,
    function: name === "??" || name === "" ? null : name,
    args: rest.slice(open + 1, -1),
    file,
    line,
    from,
  };
}

/** Index of the `(` that matches the `)` ending `text`, skipping quoted strings and chars. */
function openingParen(text: string): number | null {
  if (!text.endsWith(")")) return null;
  let depth = 0;
  let quote: string | null = null;
  for (let index = text.length - 1; index >= 0; index--) {
    const ch = text[index];
    if (quote) {
      if (ch === quote && !escaped(text, index)) quote = null;
      continue;
    }
    if (ch === '"' || (ch === "'" && isCharLiteralEnd(text, index))) quote = ch;
    else if (ch === ")") depth++;
    else if (ch === "(") {
      depth--;
      if (depth === 0) return index;
    }
  }
  return null;
}

function escaped(text: string, index: number): boolean {
  let slashes = 0;
  for (let at = index - 1; at >= 0 && text[at] === "\\"; at--) slashes++;
  return slashes % 2 === 1;
}

/** gdb prints chars as `97 'a'`: a quote closes a char literal only right after such a value. */
function isCharLiteralEnd(text: string, index: number): boolean {
  return /\d '(?:\\.{1,3}|[^'])'$/.test(text.slice(Math.max(0, index - 8), index + 1));
}
