/**
 * A CPython process's Python frames read the second way: by CPython's own gdb extension
 * (`python3.11-gdb.py`, the one behind py-bt and py-locals), in the gdb session that has the core
 * open, over the interpreter's debug information. Where gdb's auto-load would find the extension of
 * one of the process's interpreter files, a small script run in gdb walks each thread's evaluation
 * loops with the extension's own classes (`Frame`, `PyFramePtr`) and prints what it read as bounded
 * JSON between markers; what could not be read is said, never guessed.
 */
import { existsSync, realpathSync } from "node:fs";
import path from "node:path";

import { versionText } from "./layouts.js";
import type { PythonFrame, PythonThread } from "./walk.js";

/** The extension's file and the interpreter file it is the gdb script of. */
export interface GdbExtension {
  file: string;
  interpreter: string;
}

/** What the extension read: each thread's frames (as the direct reader gives them), or why nothing. */
export type ExtensionReading = { version: string | null; threads: PythonThread[]; notes: string[] } | { why: string };

/**
 * Where gdb's auto-load looks for an objfile's `-gdb.py` script (`$debugdir:$datadir/auto-load`
 * with Debian's gdb): the session loads none by itself (it turns auto-load off), so the route looks
 * where gdb would have.
 */
export const AUTO_LOAD_DIRS = ["/usr/share/gdb/auto-load", "/usr/lib/debug"] as const;

/** CPython's own extension among auto-load scripts: `python3.11-gdb.py`, `libpython3.11.so.1.0-gdb.py`, `python3.11d-gdb.py`. */
const EXTENSION_FILE = /^(lib)?python\d+\.\d+[a-z]*(\.so(\.[\d.]+)?)?-gdb\.py$/;

/**
 * CPython's gdb extension for one of the process's files (`files`, the core's modules), as gdb's
 * auto-load would find it for that file's path or the path it links to; why not where there is none.
 */
export function extensionFor(files: readonly string[], dirs: readonly string[] = AUTO_LOAD_DIRS, exists: (file: string) => boolean = existsSync): GdbExtension | { why: string } {
  const looked: string[] = [];
  for (const file of files) {
    for (const named of new Set([file, resolved(file)])) {
      if (!path.isAbsolute(named)) continue;
      const script = `${named}-gdb.py`;
      if (!EXTENSION_FILE.test(path.basename(script))) continue;
      for (const dir of dirs) {
        const candidate = path.join(dir, script);
        looked.push(candidate);
        if (exists(candidate)) return { file: candidate, interpreter: file };
      }
    }
  }
  if (looked.length === 0) return { why: "none of the process's files is a CPython interpreter whose gdb extension could be looked for" };
  return { why: `no CPython gdb extension for the interpreter is here (looked for ${looked.join(", ")}; Debian's python3.X-dbg installs it with the interpreter's debug information)` };
}

function resolved(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

const BEGIN = "<<dumpdbg python threads>>";
const END = "<</dumpdbg python threads>>";

/** Bounds of what the script reads and this module takes: a core's garbage can claim any count or length. */
const LIMITS = { threads: 1000, nativeFrames: 2000, frames: 1000, locals: 20, repr: 200, text: 1000, localsBudget: 262_144, seconds: 20 };

/**
 * The script, run by gdb's `python`: loads the extension unless gdb already has it, then for each
 * thread (the selection put back after) walks the native frames outward, and at each evaluation loop
 * its interpreter frames up to the one it was entered with. Frames not yet started are skipped, as
 * CPython's tracebacks (and the direct reader) skip them.
 */
const SCRIPT = `
import gdb, json, time

def _dumpdbg_python_threads(extension, limits):
    if "PyFramePtr" not in globals() or "Frame" not in globals():
        gdb.execute("source " + extension, to_string=True)
    try:
        gdb.lookup_type("PyObject")
    except gdb.error:
        return {"refused": "gdb has no debug information for the interpreter (it knows no type PyObject)"}
    out = {"version": None, "threads": [], "notes": []}
    try:
        out["version"] = int(gdb.parse_and_eval("Py_Version"))
    except Exception:
        pass
    deadline = time.monotonic() + limits["seconds"]
    budget = [limits["localsBudget"]]

    def text(value):
        return None if value is None else str(value)[:limits["text"]]

    def started(frame):
        try:
            if int(frame._gdbval["owner"]) == 1:
                return True
            return frame.f_lasti >= int(frame.co.field("_co_firsttraceable"))
        except Exception:
            return True

    def locals_of(frame):
        if budget[0] <= 0:
            return None
        try:
            found = []
            for name, value in frame.iter_locals():
                if len(found) == limits["locals"]:
                    break
                entry = {"name": text(name.proxyval(set()))[:limits["repr"]], "value": value.get_truncated_repr(limits["repr"])[:limits["repr"]]}
                budget[0] -= len(entry["name"]) + len(entry["value"])
                found.append(entry)
            return found
        except Exception:
            return None

    def python_frames(native, frames):
        frame = Frame(native).get_pyop()
        seen = set()
        while True:
            if frame is None or frame.is_optimized_out():
                return "an evaluation loop's frame is optimized out"
            address = frame.as_address()
            if address == 0:
                return "a chain of frames ends before the frame its evaluation loop was entered with"
            if address in seen:
                return "its frames loop back to 0x%x" % address
            if len(frames) == limits["frames"]:
                return "more than %d frames: the outer ones were not read" % limits["frames"]
            seen.add(address)
            entry = bool(frame.is_entry())
            if started(frame):
                frames.append({
                    "function": text(frame.co.pyop_field("co_qualname").proxyval(set())),
                    "file": text(frame.filename()),
                    "line": frame.current_line_num(),
                    "firstLine": int(frame.co.field("co_firstlineno")),
                    "entry": entry,
                    "locals": locals_of(frame),
                })
            if entry:
                return None
            frame = frame.previous()

    def read_thread(thread):
        thread.switch()
        frames = []
        problems = []
        native = gdb.newest_frame()
        count = 0
        while native is not None:
            if count == limits["nativeFrames"]:
                problems.append("more than %d native frames: the outer ones were not read" % limits["nativeFrames"])
                break
            count += 1
            if Frame(native).is_evalframe():
                why = python_frames(native, frames)
                if why is not None:
                    problems.append(why)
                    break
            native = native.older()
        return {"lwp": thread.ptid[1], "frames": frames, "complete": not problems, "why": "; ".join(problems) or None}

    selected = gdb.selected_thread()
    try:
        selected_frame = gdb.selected_frame()
    except gdb.error:
        selected_frame = None
    try:
        for thread in gdb.selected_inferior().threads()[:limits["threads"]]:
            if time.monotonic() > deadline:
                out["notes"].append("reading took longer than %d s: the remaining threads were not read" % limits["seconds"])
                break
            try:
                out["threads"].append(read_thread(thread))
            except Exception as error:
                out["threads"].append({"lwp": thread.ptid[1], "frames": [], "complete": False, "why": text(error)})
    finally:
        if selected is not None and selected.is_valid():
            selected.switch()
            if selected_frame is not None and selected_frame.is_valid():
                selected_frame.select()
    return out

def _dumpdbg_print_python_threads(extension, limits):
    try:
        out = _dumpdbg_python_threads(extension, limits)
    except Exception as error:
        out = {"refused": "the extension failed: " + str(error)[:limits["text"]]}
    print(${JSON.stringify(BEGIN)})
    print(json.dumps(out))
    print(${JSON.stringify(END)})
`;

/**
 * The gdb command that runs the script over the extension at `extension`: one line, the script as a
 * Python string literal (JSON's escapes are Python's), so that it goes through the session as any
 * other command and its evidence is the script itself.
 */
export function extensionCommand(extension: string): string {
  const call = `${SCRIPT}\n_dumpdbg_print_python_threads(${JSON.stringify(extension)}, ${JSON.stringify(LIMITS)})\n`;
  return `python exec(${JSON.stringify(call)})`;
}

/** What the script printed, read and bounded again: the threads, or why there are none. */
export function readExtensionOutput(output: string): ExtensionReading {
  const begin = output.lastIndexOf(BEGIN);
  if (begin < 0) return { why: `the extension's script printed no reading${firstLine(output)}` };
  const end = output.indexOf(END, begin);
  if (end < 0) return { why: "the extension's reading was cut short" };
  let read: unknown;
  try {
    read = JSON.parse(output.slice(begin + BEGIN.length, end));
  } catch {
    return { why: "the extension's reading is not JSON" };
  }
  if (!isRecord(read)) return { why: "the extension's reading is not an object" };
  if (typeof read.refused === "string") return { why: cut(read.refused, LIMITS.text) };
  if (!Array.isArray(read.threads)) return { why: "the extension's reading has no threads" };
  const version = typeof read.version === "number" && Number.isInteger(read.version) && read.version > 0 ? versionText(read.version) : null;
  const notes = (Array.isArray(read.notes) ? read.notes : []).filter((note): note is string => typeof note === "string").slice(0, 10).map((note) => cut(note, LIMITS.text));
  const threads = read.threads.slice(0, LIMITS.threads).flatMap((thread) => {
    const taken = threadOf(thread);
    return taken ? [taken] : [];
  });
  if (threads.length < Math.min(read.threads.length, LIMITS.threads)) notes.push("some of the extension's threads were not readable and were left out");
  return { version, threads, notes };
}

function threadOf(value: unknown): PythonThread | null {
  if (!isRecord(value) || !Array.isArray(value.frames)) return null;
  const frames: PythonFrame[] = [];
  for (const frame of value.frames.slice(0, LIMITS.frames)) {
    const taken = frameOf(frame);
    if (!taken) return null;
    frames.push(taken);
  }
  const why = typeof value.why === "string" ? cut(value.why, LIMITS.text) : null;
  const complete = value.complete === true && value.frames.length <= LIMITS.frames;
  return { lwp: count(value.lwp), frames, complete, why: complete ? null : (why ?? "not every frame was read") };
}

function frameOf(value: unknown): PythonFrame | null {
  if (!isRecord(value) || typeof value.entry !== "boolean") return null;
  return {
    function: textOf(value.function),
    file: textOf(value.file),
    line: count(value.line),
    firstLine: count(value.firstLine),
    entry: value.entry,
    locals: Array.isArray(value.locals)
      ? value.locals.slice(0, LIMITS.locals).flatMap((local) => (isRecord(local) && typeof local.name === "string" && typeof local.value === "string" ? [{ name: cut(local.name, LIMITS.repr), value: cut(local.value, LIMITS.repr) }] : []))
      : null,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function textOf(value: unknown): string | null {
  return typeof value === "string" ? cut(value, LIMITS.text) : null;
}

/** A positive integer that fits a thread id or a line; null for anything else. */
function count(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value > 0 && value <= 0x7fffffff ? value : null;
}

function cut(text: string, limit: number): string {
  return text.length > limit ? text.slice(0, limit) : text;
}

function firstLine(output: string): string {
  const line = output.split("\n").find((l) => l.trim() !== "")?.trim();
  return line ? ` (gdb said: ${cut(line, 200)})` : "";
}
