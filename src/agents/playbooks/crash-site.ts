/**
 * The crash site: the program's source files the playbooks read, taken from disk once, when the
 * analysis starts, and kept in the graph's state. A resumed run reasons from the same text, so the
 * rules its checkpointed hypotheses name still exist even if the sources were edited since.
 */
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { isRuntimeFrame, type TriageResult } from "../../analyzers/index.js";
import { readSource, type SourceFile } from "./source.js";

export interface CrashSite {
  /** The thread the debugger selects on opening the dump; probes on another thread name theirs. */
  homeThread: number | null;
  /** The source of each file of the crashing stack found on this machine, by the name the debug info gives it. */
  sources: Record<string, SourceFile>;
}

/** The crash site of `triage`, its sources read now: the culprit's and those of the program's own frames. */
export function crashSiteOf(triage: TriageResult, homeThread: number | null): CrashSite {
  const sources = new Map<string, SourceFile>();
  const culprit = triage.crash.culprit.frame === null ? null : triage.frames[0];
  for (const frame of triage.frames) {
    if (frame.file === null || sources.has(frame.file) || (frame !== culprit && isRuntimeFrame(frame))) continue;
    const source = readSource(sourcePath(frame.file, triage.executable));
    if (source) sources.set(frame.file, source);
  }
  // A plain object, which the checkpoint serialises as it is.
  return { homeThread, sources: Object.fromEntries(sources) };
}

/**
 * Debug info often names sources relative to the build directory (`gcc -g w.c`); when that path
 * does not resolve from here, try it next to the executable, where small builds keep their sources.
 */
function sourcePath(file: string, executable: string | null): string {
  if (isAbsolute(file) || existsSync(file) || executable === null) return file;
  const beside = join(dirname(executable), file);
  return existsSync(beside) ? beside : file;
}
