/**
 * `dumpdbg batch`: every dump under the given paths triaged on a pool of `jobs` debugger sessions
 * at a time, grouped by bug, and written as one batch report. A file that is not a dump is skipped
 * and listed; a dump that cannot be read is an error row, never a failed batch.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { analyze } from "../analysis.js";
import { triage, triageOptionsOf } from "../analyzers/index.js";
import type { ModelConfig } from "../llm/index.js";
import { normalizeFunctionName } from "../analyzers/culprit.js";
import { DumpError, inspectDump } from "../debuggers/dump.js";
import { askSession } from "../debuggers/inspector.js";
import { openDump, type OpenDumpOptions } from "../debuggers/open.js";
import { groupByBug, type Group, type Triaged } from "./grouping.js";

export interface BatchOptions {
  paths: string[];
  jobs: number;
  /** One full analysis per group, on its representative (`--analyze`). */
  analyze?: { models: ModelConfig; sessionsDir: string; outDir: string } | null;
  /** Everything openDump takes but the dump itself. */
  open: Omit<OpenDumpOptions, "dump">;
  progress: (done: number, total: number, groups: number, line: string | null) => void;
  /** Ctrl+C: dumps not started yet are left out. */
  signal?: AbortSignal;
  /** Where triage results are kept for the next batch over the same files (the sessions folder). */
  cacheDir?: string;
}

export interface BatchDocument {
  groups: { id: string; kind: string; signature: string; culprit: Group["culprit"]; count: number; members: string[]; representative: string; firstModified: string; lastModified: string; analysis: string | null }[];
  errors: { dump: string; error: string }[];
  skipped: string[];
  /** Dumps not triaged because the batch was stopped (Ctrl+C); a rerun takes them. */
  notDone: number;
}

/** Folders are walked this deep; files this many at most. */
const MAX_DEPTH = 8;
const MAX_FILES = 100_000;

/** The files under the paths, in a stable order. */
export function filesUnder(paths: string[]): string[] {
  const files: string[] = [];
  const walk = (path: string, depth: number) => {
    if (files.length >= MAX_FILES) return;
    let info;
    try {
      info = statSync(path);
    } catch {
      files.push(path);
      return;
    }
    if (info.isDirectory()) {
      if (depth >= MAX_DEPTH) return;
      for (const name of readdirSync(path).sort()) walk(join(path, name), depth + 1);
    } else if (info.isFile()) files.push(path);
  };
  for (const path of paths) walk(resolve(path), 0);
  return [...new Set(files)];
}

export async function runBatch(options: BatchOptions): Promise<BatchDocument> {
  const candidates = filesUnder(options.paths);
  const dumps: string[] = [];
  const skipped: string[] = [];
  const errors: BatchDocument["errors"] = [];
  for (const file of candidates) {
    try {
      inspectDump(file);
      dumps.push(file);
    } catch (error) {
      // Not a dump at all (a log, a program) is skipped; a dump that is broken is an error.
      if (error instanceof DumpError && /not a crash dump|is an ELF program|is empty/.test(error.message)) skipped.push(file);
      else errors.push({ dump: file, error: oneLine(error) });
    }
  }
  const triaged: Triaged[] = [];
  let next = 0;
  let done = 0;
  // What an earlier batch over the same files already triaged (same path, size and time) is reused:
  // a batch stopped with Ctrl+C goes on where it stopped.
  const cacheFile = options.cacheDir ? join(options.cacheDir, "batch-triage.json") : null;
  const cache: Record<string, Triaged> = cacheFile ? (readCache(cacheFile) as unknown as Record<string, Triaged>) : {};
  const keyOf = (dump: string) => {
    const info = statSync(dump);
    return `${dump}\u0000${info.size}\u0000${info.mtimeMs}`;
  };
  const remember = (dump: string, result: Triaged) => {
    if (!cacheFile || !options.cacheDir) return;
    cache[keyOf(dump)] = result;
    mkdirSync(options.cacheDir, { recursive: true });
    writeFileSync(`${cacheFile}.tmp`, JSON.stringify(cache));
    renameSync(`${cacheFile}.tmp`, cacheFile);
  };
  let reused = 0;
  const worker = async () => {
    for (;;) {
      if (options.signal?.aborted) return;
      const index = next++;
      const dump = dumps[index];
      if (dump === undefined) return;
      try {
        const known = cache[keyOf(dump)];
        if (known) reused += 1;
        const result = known ?? (await triageOne(dump, options.open));
        if (!known) remember(dump, result);
        triaged.push(result);
        options.progress(++done, dumps.length, groupByBug(triaged).length, null);
      } catch (error) {
        errors.push({ dump, error: oneLine(error) });
        options.progress(++done, dumps.length, groupByBug(triaged).length, `${dump}: ${oneLine(error)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.jobs, dumps.length)) }, worker));
  if (reused > 0) options.progress(done, dumps.length, groupByBug(triaged).length, `${reused} ${reused === 1 ? "dump was" : "dumps were"} triaged by an earlier batch and reused`);
  const groups = groupByBug(triaged);
  const analyses = options.analyze ? await analyzeGroups(groups, options.analyze, options.open, options.progress, options.signal) : new Map<string, string>();
  return {
    groups: groups.map((group) => {
      const times = group.members.map((m) => m.modifiedAt).sort();
      return {
        id: group.id,
        kind: group.kind,
        signature: group.signature,
        culprit: group.culprit,
        count: group.members.length,
        members: group.members.map((m) => m.dump),
        representative: group.representative.dump,
        firstModified: times[0] ?? "",
        lastModified: times.at(-1) ?? "",
        analysis: analyses.get(group.id) ?? null,
      };
    }),
    errors: errors.sort((a, b) => a.dump.localeCompare(b.dump)),
    skipped,
    notDone: dumps.length - done,
  };
}

/**
 * One analysis per group, on its representative, in turn (each is a whole graph); one already done
 * for the same signature and build, in an earlier batch, is reused: the cache is a file in the
 * sessions folder.
 */
async function analyzeGroups(
  groups: Group[],
  settings: NonNullable<BatchOptions["analyze"]>,
  open: BatchOptions["open"],
  progress: BatchOptions["progress"],
  signal: AbortSignal | undefined,
): Promise<Map<string, string>> {
  const cacheFile = join(settings.sessionsDir, "batch-analyses.json");
  const cache = readCache(cacheFile);
  const done = new Map<string, string>();
  const dumps = groups.reduce((n, group) => n + group.members.length, 0);
  for (const [index, group] of groups.entries()) {
    if (signal?.aborted) break;
    const key = `${group.signature}\u0000${group.representative.buildId ?? group.representative.dump}`;
    const known = cache[key];
    if (known && existsSync(known)) {
      done.set(group.id, known);
      continue;
    }
    try {
      const analysis = await analyze(null, {
        open: { ...open, dump: group.representative.dump },
        models: settings.models,
        sessionsDir: settings.sessionsDir,
        outDir: settings.outDir,
        unsafe: false,
        progress: () => undefined,
      });
      const report = analysis.files.find((file) => file.format === "md")?.file ?? analysis.files[0]?.file ?? null;
      if (report) {
        done.set(group.id, report);
        cache[key] = report;
        mkdirSync(settings.sessionsDir, { recursive: true });
        writeFileSync(cacheFile, `${JSON.stringify(cache, null, 2)}\n`);
      }
      progress(dumps, dumps, groups.length, `${group.id} analysed (${index + 1}/${groups.length}): ${analysis.report.conclusion.summary.slice(0, 160)}`);
    } catch (error) {
      progress(dumps, dumps, groups.length, `${group.id} could not be analysed: ${oneLine(error)}`);
    }
  }
  return done;
}

function readCache(file: string): Record<string, string> {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as unknown;
    return parsed && typeof parsed === "object" ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

async function triageOne(dump: string, open: BatchOptions["open"]): Promise<Triaged> {
  const opened = await openDump({ ...open, dump });
  try {
    const result = await triage(askSession(opened.session), triageOptionsOf(opened.dump, opened.executable));
    const { crash } = result;
    const frames = result.frames.map((frame) => (frame.function ? normalizeFunctionName(frame.function) : "??"));
    return {
      dump,
      kind: crash.kind,
      signature: crash.signature,
      frames,
      culprit: { function: crash.culprit.function, file: crash.culprit.file, line: crash.culprit.line },
      completeness: (crash.culprit.line !== null ? 10 : 0) + frames.filter((f) => f !== "??").length,
      modifiedAt: statSync(dump).mtime.toISOString(),
      buildId: opened.dump.facts.modules[0]?.buildId ?? null,
    };
  } finally {
    await opened.session.close();
  }
}

function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
}
