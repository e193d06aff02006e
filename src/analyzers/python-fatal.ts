/**
 * CPython's fatal errors: C code's `Py_FatalError(msg)` (3.11's macro for
 * `_Py_FatalErrorFunc(__func__, msg)`) prints "Fatal Python error: <function>: <msg>" to stderr and
 * aborts. The text is in no buffer of the process: it is read from the arguments of the
 * interpreter's frames where the debugger shows them, or from the code of the caller that passed them.
 */
import { unquoteCString } from "../debuggers/c-text.js";
import type { Frame } from "../debuggers/model.js";
import { normalizeFunctionName } from "./culprit.js";

/** The interpreter's functions a fatal error goes through, and the arguments that hold its prefix (the function that failed) and message. */
const FATAL_PATH: Record<string, { prefix: string | null; msg: string }> = {
  fatal_error: { prefix: "prefix", msg: "msg" },
  _Py_FatalErrorFunc: { prefix: "func", msg: "msg" },
  Py_FatalError: { prefix: null, msg: "msg" },
};

/**
 * The functions C code calls to fail fatally, which the interpreter exports (so they are named
 * without its debug information), with the argument registers of the System V ABI that carry the
 * prefix and the message.
 */
export const FATAL_ERROR_CALLS: Record<string, { prefix: string | null; msg: string }> = {
  _Py_FatalErrorFunc: { prefix: "rdi", msg: "rsi" },
  Py_FatalError: { prefix: null, msg: "rdi" },
};

/** Whether a frame is on CPython's fatal error path. */
export function onFatalErrorPath(frame: Frame): boolean {
  return frame.function !== null && normalizeFunctionName(frame.function) in FATAL_PATH;
}

/** What Python prints: "Fatal Python error: records_define: record table full". */
export function fatalErrorText(prefix: string | null, msg: string): string {
  return `Fatal Python error: ${prefix ? `${prefix}: ` : ""}${msg}`;
}

/**
 * The fatal error's text from the arguments the debugger printed for the interpreter's frames
 * (`_Py_FatalErrorFunc (func=0x… "records_define", msg=0x… "record table full")`), innermost first;
 * null where no frame of the path shows its message (no debug information, `<optimized out>`).
 */
export function fatalErrorFromArguments(frames: Frame[]): string | null {
  for (const frame of frames) {
    const path = frame.function === null ? undefined : FATAL_PATH[normalizeFunctionName(frame.function)];
    if (!path) continue;
    const msg = stringArgument(frame.args, path.msg);
    if (msg === undefined || msg === null) continue;
    const prefix = path.prefix === null ? null : stringArgument(frame.args, path.prefix);
    // A prefix the debugger could not show is left out rather than guessed.
    return fatalErrorText(prefix ?? null, msg);
  }
  return null;
}

/**
 * A `char *` argument as gdb prints it: its text for `name=0x… "text"`, null for a null pointer,
 * undefined where it is not shown (absent, `<optimized out>`, an address without its text).
 */
function stringArgument(args: string, name: string): string | null | undefined {
  const match = new RegExp(`(?:^|,\\s*)${name}=([^,"]*)("(?:[^"\\\\]|\\\\.)*"(?:\\.\\.\\.)?)?`).exec(args);
  if (!match) return undefined;
  if (/^0x0\s*$/.test(match[1] ?? "")) return null;
  return match[2] ? (unquoteCString(match[2]) ?? undefined) : undefined;
}
