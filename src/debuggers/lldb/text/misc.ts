/** Parsers for LLDB's memory reads, source listings and stop reasons. */
import type { SourceLine } from "../../model.js";
import type { SignalRecord } from "../../probe.js";
import { normalizeAddress } from "../../model.js";
import { stopReasonOf } from "./frames.js";

/** `memory read -s8 -fx`: `0x7ffe5c90d5f0: 0x000055b5780cd02e 0x000055b582e732f0` per line. */
export function parseMemoryWords(output: string): { start: string | null; words: bigint[] } {
  let start: string | null = null;
  const words: bigint[] = [];
  for (const line of output.split("\n")) {
    const row = /^(0x[0-9a-f]+):\s+(.*)$/.exec(line.trim());
    if (!row) continue;
    start ??= normalizeAddress(row[1] ?? "0x0");
    for (const word of (row[2] ?? "").trim().split(/\s+/)) if (/^0x[0-9a-f]+$/.test(word)) words.push(BigInt(word));
  }
  return { start, words };
}

/**
 * `memory read -f s`: `0x55b582e73310: "text"` per string. Unlike a value's summary, lldb escapes
 * only unprintable bytes here (`\t`, `\n`, `\x05`, a byte above 0x7f as `\xffffffc3`) and prints `"`
 * and `\` as they are: the string is everything between the line's first and last quote.
 */
export function parseMemoryStrings(output: string): (string | null)[] {
  const strings: (string | null)[] = [];
  for (const line of output.split("\n")) {
    const row = /^0x[0-9a-f]+:\s+"(.*)"$/.exec(line.trim());
    if (row) strings.push(unescapeMemoryString(row[1] ?? ""));
  }
  return strings;
}

const MEMORY_ESCAPES: Record<string, string> = { e: "\x1b", a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };

function unescapeMemoryString(body: string): string {
  return body.replace(/\\(?:x(?:ffffff)?([0-9a-f]{2})|([eabfnrtv]))/g, (_, hex: string | undefined, letter: string | undefined) =>
    hex !== undefined ? String.fromCharCode(parseInt(hex, 16)) : (MEMORY_ESCAPES[letter ?? ""] ?? ""),
  );
}

/** `source list -f FILE -l A -c N`: `   27  \t    int fd = ...;` per line, the current one marked `->`. */
export function parseSourceListing(output: string, from: number, to: number): SourceLine[] {
  const lines: SourceLine[] = [];
  for (const row of output.split("\n")) {
    const match = /^(?:->)?\s*(\d+)\s{2}\t?(.*)$/.exec(row);
    if (!match) continue;
    const line = Number(match[1]);
    if (line >= from && line <= to) lines.push({ line, text: match[2] ?? "" });
  }
  return lines;
}

/** Linux signal numbers by name, for lldb's `stop reason = signal SIGSEGV`. */
const SIGNAL_NUMBERS: Record<string, number> = {
  SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGILL: 4, SIGTRAP: 5, SIGABRT: 6, SIGBUS: 7, SIGFPE: 8, SIGKILL: 9,
  SIGUSR1: 10, SIGSEGV: 11, SIGUSR2: 12, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15, SIGSTKFLT: 16,
  SIGCHLD: 17, SIGCONT: 18, SIGSTOP: 19, SIGTSTP: 20, SIGTTIN: 21, SIGTTOU: 22, SIGURG: 23,
  SIGXCPU: 24, SIGXFSZ: 25, SIGVTALRM: 26, SIGPROF: 27, SIGWINCH: 28, SIGIO: 29, SIGPWR: 30, SIGSYS: 31,
};

/** The signal of the selected thread's stop reason in `thread list`, or null (an exception, no signal). */
export function parseStopSignal(output: string): number | null {
  const current = output.split("\n").find((line) => /^\* thread #/.test(line));
  const reason = current ? stopReasonOf(current) : null;
  const name = reason ? /^signal (SIG[A-Z0-9]+)/.exec(reason)?.[1] : undefined;
  return name ? (SIGNAL_NUMBERS[name] ?? null) : null;
}

/** si_code of the descriptions newer lldb versions give (`signal SIGSEGV: address not mapped to object (fault address: 0x10)`). */
const CODE_DESCRIPTIONS: [RegExp, number][] = [
  [/address not mapped/, 1],
  [/invalid permissions/, 2],
  [/invalid address alignment/, 1],
  [/nonexistent physical address/, 2],
  [/integer divide by zero/, 1],
  [/illegal opcode/, 1],
  [/sent by kill|sent by tkill/, 0],
];

/**
 * The signal record lldb shows in a thread's stop reason. LLDB 16 reads only the signal number of a
 * core (no code, no fault address): then there is no record, and the dump file's own notes give it.
 */
export function parseStopSignalRecord(output: string): SignalRecord | null {
  const signo = parseStopSignal(output);
  const reason = output.split("\n").map(stopReasonOf).find((text) => text !== null) ?? "";
  const fault = /\(fault address: (0x[0-9a-f]+)\)/.exec(reason)?.[1];
  const code = CODE_DESCRIPTIONS.find(([pattern]) => pattern.test(reason))?.[1];
  if (signo === null || code === undefined) return null;
  return { signo, errno: 0, code, address: fault ? normalizeAddress(fault) : null, pid: null };
}
