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
import { fileURLToPath } from "node:url";

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

/** Bounds of what this module takes from the script, which keeps the same ones: a core's garbage can claim any count or length. */
const LIMITS = { threads: 1000, frames: 1000, locals: 20, repr: 200, text: 1000 };

/**
 * The script gdb's `python` runs (gdb-python-threads.py, beside this module in the sources and
 * beside the bundle in dist/): it loads the extension unless gdb already has it, then for each
 * thread walks the native frames outward, and at each evaluation loop its interpreter frames up to
 * the one it was entered with, printing what it read between the markers.
 */
const SCRIPT = fileURLToPath(new URL("gdb-python-threads.py", import.meta.url));

/**
 * The gdb command that runs the script over the extension at `extension`: one short line of gdb's
 * `python` (the paths as Python strings, JSON's escapes being Python's), sent through the session
 * as any other command; the script is run in a namespace of its own, not gdb's `__main__`.
 */
export function extensionCommand(extension: string, script: string = SCRIPT): string {
  return `python import runpy; runpy.run_path(${JSON.stringify(script)}, {"extension": ${JSON.stringify(extension)}})`;
}

/** Whether dumpdbg's script is where the command will look for it. */
export function hasScript(): boolean {
  return existsSync(SCRIPT);
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
