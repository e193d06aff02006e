/**
 * What a Microsoft symbol server offers when the file itself is not there: a CAB-compressed copy
 * (`crash.pd_`) and a `file.ptr` that points elsewhere (`PATH:\\share\crash.pdb` or `MSG:text`).
 */
import { existsSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { readStart, type RequestLimits } from "./download.js";

/** A `file.ptr` is one short line; anything longer is not one. */
const MAX_POINTER_BYTES = 4096;
const CAB_MAGIC = "MSCF";

export type Tried = { url: string; outcome: string };

/** What the compressed copy at `url` turned out to be, as one line for the user. */
export async function compressedCopy(url: string, limits: RequestLimits): Promise<Tried> {
  const start = await readStart(url, CAB_MAGIC.length, limits);
  if (!start.ok) return { url, outcome: start.failure };
  // No CAB expander ships with Debian's base system and dumpdbg adds none: say so rather than guess.
  const outcome = start.bytes.toString("latin1") === CAB_MAGIC ? "compressed (.pd_), cannot be expanded here" : "compressed name, but not a CAB archive";
  return { url, outcome };
}

/** The local file a `file.ptr` at `url` points to, or what the pointer said instead. */
export async function followPointer(url: string, limits: RequestLimits): Promise<{ path: string; tried: Tried } | { path: null; tried: Tried }> {
  const start = await readStart(url, MAX_POINTER_BYTES, limits);
  if (!start.ok) return { path: null, tried: { url, outcome: start.failure } };
  if (!start.complete) return { path: null, tried: { url, outcome: "file.ptr too long to be a pointer" } };
  const text = start.bytes.toString("utf8").trim();
  const message = /^MSG:(.*)$/s.exec(text);
  if (message) return { path: null, tried: { url, outcome: `file.ptr says: ${oneLine(message[1] ?? "")}` } };
  const pointer = /^PATH:(.+)$/s.exec(text);
  if (!pointer) return { path: null, tried: { url, outcome: "file.ptr is neither PATH: nor MSG:" } };
  const target = (pointer[1] ?? "").trim();
  // A UNC path or a Windows drive is another machine's; only a file that exists here is taken.
  if (!isAbsolute(target) || target.startsWith("\\\\") || !isFile(target)) return { path: null, tried: { url, outcome: `file.ptr points at ${oneLine(target)}, not a file here` } };
  return { path: target, tried: { url, outcome: `file.ptr points at ${target}` } };
}

function isFile(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Server text shown to the user stays one short line. */
function oneLine(text: string): string {
  const flat = text.replace(/[\x00-\x1f\x7f]+/g, " ").trim();
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
}
