/**
 * `dumpdbg batch`: every dump under the given paths triaged on a pool of `jobs` debugger sessions
 * at a time (or by `dumpdbg worker`s behind a queue), grouped by bug, and written as one batch
 * report. A file that is not a dump is skipped and listed with why; a dump that cannot be read is an error row, never a failed batch.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SESSIONS_ELSEWHERE } from "../evidence/sessions.js";
import { counted } from "../report/numbers.js";
import { StorageError, writing } from "../storage-errors.js";
import { endKeptGdbs } from "../debuggers/gdb/kept-gdb.js";
import { findDumps, type SkippedFile } from "./dump-files.js";
import { groupByBug, type Group, type Triaged } from "./grouping.js";
import { NotStarted, RemoteWork } from "./queue.js";
import { analyzeDump, oneLine, triageDump, type AnalysisSettings, type GroupAnalysis, type OpenSettings } from "./work.js";

export interface BatchOptions {
  paths: string[];
  /** Debugger sessions at a time, on this machine (without a queue). */
  jobs: number;
  /** One full analysis per group, on its representative (`--analyze`). */
  analyze?: AnalysisSettings | null;
  open: OpenSettings;
  /** `redis://HOST:PORT`: the work goes to `dumpdbg worker`s through this queue instead of the local pool. */
  queue?: string;
  progress: (done: number, total: number, groups: number, line: string | null) => void;
  /** Ctrl+C: dumps not started yet are left out. */
  signal?: AbortSignal;
  /** Where triage results are kept for the next batch over the same files (the sessions folder). */
  cacheDir?: string;
  /** Called with the number of dumps found, before any is read: the folders' room for them is checked there. */
  checkRoom?: (dumps: number) => void;
}

export interface BatchDocument {
  groups: { id: string; kind: string; origin: Group["origin"]; exploitability: Triaged["exploitability"]; signature: string; culprit: Group["culprit"]; count: number; members: string[]; representative: string; firstModified: string; lastModified: string; analysis: string | null }[];
  errors: { dump: string; error: string }[];
  /** Files under the paths that were not triaged, and why (not a dump, a FIFO, a second path to one file). */
  skipped: SkippedFile[];
  /** Dumps not triaged because the batch was stopped (Ctrl+C); a rerun takes them. */
  notDone: number;
}

/** Where the work is done: this machine's pool of debugger sessions, or workers behind a queue. */
interface Workforce {
  /** Workers behind a queue: all work is handed out at once, and reports are on their machines. */
  remote: boolean;
  /** How many dumps are handed out at once. */
  width: number;
  triage(dump: string): Promise<Triaged>;
  analyze(dump: string): Promise<GroupAnalysis | null>;
  close(): Promise<void>;
}

function localWorkforce(options: BatchOptions, dumps: number): Workforce {
  return {
    remote: false,
    width: Math.max(1, Math.min(options.jobs, dumps)),
    // One gdb per job for all its dumps, each loaded in turn (gdb/kept-gdb.ts).
    triage: (dump) => triageDump(dump, { ...options.open, keepDebugger: true }),
    analyze: (dump) => (options.analyze ? analyzeDump(dump, options.open, options.analyze) : Promise.resolve(null)),
    close: () => endKeptGdbs(),
  };
}

async function queueWorkforce(url: string, options: BatchOptions, dumps: number): Promise<Workforce> {
  const remote = await RemoteWork.connect(url, options.signal);
  return {
    remote: true,
    // Every dump goes on the queue at once; the workers decide how many run.
    width: Math.max(1, dumps),
    triage: (dump) => remote.triage(dump, options.open),
    analyze: (dump) => remote.analyze(dump, options.open),
    close: () => remote.close(),
  };
}

export async function runBatch(options: BatchOptions): Promise<BatchDocument> {
  const { dumps, skipped, errors } = await findDumps(options.paths);
  options.checkRoom?.(dumps.length);
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
    const cacheDir = options.cacheDir;
    writing(cacheFile, () => {
      mkdirSync(cacheDir, { recursive: true });
      try {
        writeFileSync(`${cacheFile}.tmp`, JSON.stringify(cache));
        renameSync(`${cacheFile}.tmp`, cacheFile);
      } catch (error) {
        // The cache on disk stays the last whole one.
        rmSync(`${cacheFile}.tmp`, { force: true });
        throw error;
      }
    }, { elsewhere: SESSIONS_ELSEWHERE });
  };
  // A disk that refuses the cache (or a dump's decompressed copy) refuses the next dump's too: the batch stops there.
  let refused: StorageError | null = null;
  const todo = dumps.filter((dump) => !cache[keyOf(dump)]);
  const workforce = options.queue ? await queueWorkforce(options.queue, options, todo.length) : localWorkforce(options, todo.length);
  try {
    for (const dump of dumps) {
      const known = cache[keyOf(dump)];
      if (known) {
        triaged.push(known);
        done += 1;
      }
    }
    const reused = done;
    if (reused > 0) options.progress(done, dumps.length, groupByBug(triaged).length, `${reused} ${reused === 1 ? "dump was" : "dumps were"} triaged by an earlier batch and reused`);
    const hand = async () => {
      for (;;) {
        if (options.signal?.aborted || refused) return;
        const dump = todo[next++];
        if (dump === undefined) return;
        try {
          const result = await workforce.triage(dump);
          remember(dump, result);
          triaged.push(result);
          options.progress(++done, dumps.length, groupByBug(triaged).length, result.crashedDebugger ? `warning: ${result.crashedDebugger}` : null);
        } catch (error) {
          if (error instanceof NotStarted) continue;
          if (error instanceof StorageError) {
            refused ??= error;
            return;
          }
          errors.push({ dump, error: oneLine(error) });
          options.progress(++done, dumps.length, groupByBug(triaged).length, `${dump}: ${oneLine(error)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: workforce.width }, hand));
    if (refused) {
      const kept = triaged.length;
      throw (refused as StorageError).followedBy(`${counted(kept, "dump")} triaged before it ${kept === 1 ? "is" : "are"} kept: run the same batch again to go on`);
    }
    const groups = groupByBug(triaged);
    const analyses = options.analyze ? await analyzeGroups(groups, options.analyze, workforce, options.progress, options.signal) : new Map<string, string>();
    return documentOf(groups, analyses, errors, skipped, dumps.length - done);
  } finally {
    await workforce.close();
  }
}

const RATINGS = ["not-exploitable", "probably-not-exploitable", "unknown", "probably-exploitable", "exploitable"] as const;

function worstRating(members: Triaged[]): Triaged["exploitability"] {
  const rated = members.flatMap((m) => (m.exploitability ? [m.exploitability] : []));
  return rated.length === 0 ? null : rated.reduce((worst, r) => (RATINGS.indexOf(r) > RATINGS.indexOf(worst) ? r : worst));
}

function documentOf(groups: Group[], analyses: Map<string, string>, errors: BatchDocument["errors"], skipped: SkippedFile[], notDone: number): BatchDocument {
  return {
    groups: groups.map((group) => {
      const times = group.members.map((m) => m.modifiedAt).sort();
      return {
        id: group.id,
        kind: group.kind,
        origin: group.origin,
        // The most exploitable-looking member rates the bug: fuzzing teams triage by the worst case.
        exploitability: worstRating(group.members),
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
    notDone,
  };
}

/**
 * One analysis per group, on its representative: in turn on this machine (each is a whole graph),
 * all at once through a queue. One already done for the same signature and build, in an earlier
 * batch, is reused: the cache is a file in the sessions folder. Through a queue the report is on the
 * worker's machine, so it is not looked for here.
 */
async function analyzeGroups(
  groups: Group[],
  settings: AnalysisSettings,
  workforce: Workforce,
  progress: BatchOptions["progress"],
  signal: AbortSignal | undefined,
): Promise<Map<string, string>> {
  const cacheFile = join(settings.sessionsDir, "batch-analyses.json");
  const cache = readCache(cacheFile);
  const done = new Map<string, string>();
  const dumps = groups.reduce((n, group) => n + group.members.length, 0);
  let finished = 0;
  let next = 0;
  // A full or read-only sessions folder fails every analysis after it: the batch stops there.
  let refused: StorageError | null = null;
  const hand = async () => {
    for (;;) {
      if (signal?.aborted || refused) return;
      const group = groups[next++];
      if (group === undefined) return;
      const key = `${group.signature}\u0000${group.representative.buildId ?? group.representative.dump}`;
      const known = cache[key];
      if (known && (workforce.remote || existsSync(known))) {
        done.set(group.id, known);
        continue;
      }
      try {
        const analysis = await workforce.analyze(group.representative.dump);
        finished += 1;
        if (analysis) {
          done.set(group.id, analysis.report);
          cache[key] = analysis.report;
          writing(cacheFile, () => {
            mkdirSync(settings.sessionsDir, { recursive: true });
            writeFileSync(cacheFile, `${JSON.stringify(cache, null, 2)}\n`);
          }, { elsewhere: SESSIONS_ELSEWHERE });
        }
        progress(dumps, dumps, groups.length, `${group.id} analysed (${finished} of ${groups.length}): ${(analysis?.summary ?? "no report").slice(0, 160)}`);
      } catch (error) {
        if (error instanceof NotStarted) continue;
        if (error instanceof StorageError) {
          refused ??= error;
          return;
        }
        progress(dumps, dumps, groups.length, `${group.id} could not be analysed: ${oneLine(error)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: workforce.remote ? Math.max(1, groups.length) : 1 }, hand));
  if (refused) throw (refused as StorageError).followedBy(`the triage of every dump and the analyses before it are kept: run the same batch again to go on`);
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
