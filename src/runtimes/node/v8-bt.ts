/**
 * llnode's `v8 bt` read into frames: the native frames as lldb names them, V8's own frames
 * (`<exit>`, `<stub>`, `<entry>`, `<internal>`, a builtin) and the JavaScript frames with their
 * function, arguments, script and position. Pure and bounded: 1,000 frames, 512 characters of arguments.
 */

export const MAX_V8_FRAMES = 1000;
const MAX_ARGS = 512;

export interface V8Frame {
  /** The frame's number in `v8 bt`. */
  index: number;
  pc: string;
  /** `js`: a JavaScript function's frame; `v8`: V8's generated code that runs no script (stubs, entry and exit frames); `native`: compiled code of a module. */
  kind: "js" | "v8" | "native";
  /** `parseUser`, `Module._compile`, `node::Start(int, char**)`; null for an anonymous function or an unnamed frame. */
  function: string | null;
  /** The JavaScript arguments as llnode prints them (`this=…:<Global proxy>, …:<Object: Object>`), cut at 512 characters. */
  args: string;
  /** The script's path (`/srv/server.js`, `node:internal/modules/cjs/loader`) or a native frame's module (`node`, `libc.so.6`). */
  file: string | null;
  /** Where the function is defined in its script, as V8 records it (1-based line, 0-based column). */
  line: number | null;
  column: number | null;
  /** The JavaScript function object's address (`fn=`), which `v8 inspect` reads; null for other frames. */
  fn: string | null;
}

const FRAME = /^\s*\*?\s*frame #(\d+): (0x[0-9a-f]+) (.*)$/;
const JS_FRAME = /^(.*?)\((.*)\) at (.+):(\d+):(\d+) fn=(0x[0-9a-f]+)$/;
const V8_FRAME = /^<([a-z_ ]+)>$/i;
const NATIVE_FRAME = /^([^\s`]+)`(.+?)(?: at \S+:\d+(?::\d+)?)?$/;
const BUILTIN_FRAME = /^(Builtins_\w+)$/;

/** A thread's frames in llnode's `v8 bt` output, outermost last; empty where it printed none. */
export function readV8Backtrace(text: string): V8Frame[] {
  const frames: V8Frame[] = [];
  for (const line of text.split("\n")) {
    if (frames.length >= MAX_V8_FRAMES) break;
    const frame = FRAME.exec(line);
    if (!frame) continue;
    const [, index, pc, rest] = frame as unknown as [string, string, string, string];
    frames.push(frameOf(Number(index), pc, rest.trim()));
  }
  return frames;
}

function frameOf(index: number, pc: string, text: string): V8Frame {
  const base = { index, pc, args: "", file: null, line: null, column: null, fn: null };
  const js = JS_FRAME.exec(text);
  if (js) {
    const [, name, args, file, line, column, fn] = js as unknown as [string, string, string, string, string, string, string];
    return { ...base, kind: "js", function: name.trim() === "" ? null : name.trim(), args: args.slice(0, MAX_ARGS), file, line: Number(line), column: Number(column), fn };
  }
  const v8 = V8_FRAME.exec(text) ?? BUILTIN_FRAME.exec(text);
  if (v8) return { ...base, kind: "v8", function: v8[1]! };
  const native = NATIVE_FRAME.exec(text);
  if (native) {
    const name = native[2]!.replace(/ \+ \d+$/, "");
    // A builtin named through its module (`node\`Builtins_InterpreterEntryTrampoline + 220`) is V8's generated code all the same.
    return { ...base, kind: BUILTIN_FRAME.test(name) ? "v8" : "native", function: name, file: native[1]! };
  }
  return { ...base, kind: "native", function: null, file: text === "" ? null : text };
}

const THREAD = /^\s*\*?\s*thread #(\d+): tid = (\d+)\b/;

/** lldb's thread numbers by the kernel's thread id, from its `thread list`. */
export function readThreadList(text: string): Map<number, number> {
  const threads = new Map<number, number>();
  for (const line of text.split("\n")) {
    const match = THREAD.exec(line);
    if (match) threads.set(Number(match[2]), Number(match[1]));
  }
  return threads;
}
