/** `dumpdbg batch`: many dumps triaged in parallel, grouped by bug, one report. */
import { resolve } from "node:path";
import { runBatch } from "../batch/batch.js";
import { connectionOf } from "../batch/queue.js";
import { writeBatchReports } from "../batch/report.js";
import { counted } from "../report/numbers.js";
import { openOptions, type DumpFlags } from "./dump-options.js";
import { ExitCode, ExitError } from "./exit.js";
import { jobsOf } from "./jobs.js";
import { modelConfig, type ModelFlags } from "./model-options.js";
import { sessionsRoot } from "./sessions-root.js";
import { killAllDebuggers } from "../debuggers/live.js";
import { StorageError } from "../storage-errors.js";
import { batchNeeds, NEEDS, usableFolder } from "./usable-folder.js";

export interface BatchFlags extends Omit<DumpFlags, "exe">, ModelFlags {
  jobs?: number;
  queue?: string;
  json?: boolean;
  out: string;
  analyze?: boolean;
  sessionsDir?: string;
}

/** Skipped files named on the terminal, at most. */
const MAX_SKIPPED_LINES = 10;

export async function batch(paths: string[], flags: BatchFlags): Promise<void> {
  const jobs = jobsOf(flags.jobs);
  // A wrong address is said before any dump is read.
  if (flags.queue !== undefined) connectionOf(flags.queue);
  const { dump: _unused, ...open } = openOptions("", flags);
  const controller = new AbortController();
  // The first Ctrl+C lets the dumps in hand finish and writes the report; a second ends at once.
  process.on("SIGINT", () => {
    if (!controller.signal.aborted) return controller.abort();
    killAllDebuggers();
    process.exit(ExitCode.interrupted);
  });
  const tty = process.stderr.isTTY;
  const outDir = resolve(flags.out);
  const sessionsDir = sessionsRoot(flags.sessionsDir);
  const doc = await runBatch({
    paths,
    jobs,
    ...(flags.queue !== undefined ? { queue: flags.queue } : {}),
    open: { ...open, onMismatch: "warn" },
    analyze: flags.analyze
      ? { models: modelConfig(flags), sessionsDir, outDir }
      : null,
    signal: controller.signal,
    cacheDir: sessionsDir,
    // Said before the first dump is read, not after the batch's work is thrown away.
    checkRoom: (dumps) => {
      const needs = batchNeeds(dumps);
      const what = `a batch of ${counted(dumps, "dump")}`;
      usableFolder(sessionsDir, "--sessions-dir", needs.cache + (flags.analyze ? NEEDS.session : 0), what);
      usableFolder(outDir, "--out", needs.reports + (flags.analyze ? NEEDS.reports : 0), what);
    },
    progress: (done, total, groups, line) => {
      if (line) process.stderr.write(`${tty ? "\r\x1b[K" : ""}dumpdbg: ${line}\n`);
      const status = `batch: ${done}/${total} dumps, ${groups} ${groups === 1 ? "group" : "groups"}`;
      process.stderr.write(tty ? `\r\x1b[K${status}` : `${status}\n`);
    },
  });
  if (tty) process.stderr.write("\n");
  const id = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  let files: string[];
  try {
    files = writeBatchReports(doc, id, outDir);
  } catch (error) {
    if (error instanceof StorageError) throw error.followedBy('the triage of every dump is kept: run the same batch again to write its report');
    throw error;
  }
  const read = doc.groups.reduce((n, g) => n + g.count, 0);
  // Files that are not dumps are only counted; anything passed over for another reason is named.
  const passedOver = doc.skipped.filter((s) => s.reason !== "not a crash dump");
  for (const skipped of passedOver.slice(0, MAX_SKIPPED_LINES)) process.stderr.write(`dumpdbg: skipped ${skipped.path}: ${skipped.reason}\n`);
  if (passedOver.length > MAX_SKIPPED_LINES) process.stderr.write(`dumpdbg: skipped ${passedOver.length - MAX_SKIPPED_LINES} more; the batch report lists them\n`);
  if (flags.json) process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  else process.stdout.write(`${counted(doc.groups.length, "bug")} in ${counted(read, "dump")} (${doc.errors.length} unreadable, ${doc.skipped.length} skipped); report: ${files.join(", ")}\n`);
  if (doc.notDone > 0) throw new ExitError(ExitCode.interrupted, `interrupted: ${counted(doc.notDone, "dump")} not triaged yet; run the same batch again to go on`);
  if (read === 0) throw new ExitError(ExitCode.badInput, doc.errors.length ? `no dump could be read (${doc.errors.length} failed)` : "no dump found");
}
