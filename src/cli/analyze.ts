/** `dumpdbg analyze`: the whole analysis of one dump, reports written, a short verdict printed. */
import { resolve } from "node:path";
import type { AnalysisOptions, AnalysisResult } from "../analysis.js";
import { ReportWithoutCore } from "../debuggers/dump-source.js";
import { openDump } from "../debuggers/open.js";
import { printTextVerdict } from "./text-verdict.js";
import { colours, startProgress, widthOf, wrap, type Progress, type Verbosity } from "./terminal.js";
import { openOptions, type DumpFlags, type LiveFlags } from "./dump-options.js";
import { dumpToRead } from "./live-dump.js";
import { modelConfig, type ModelFlags } from "./model-options.js";
import { sessionsRoot } from "./sessions-root.js";
import { ExitCode, ExitError } from "./exit.js";
import { onInterrupt } from "./signals.js";
import { earlyLoadDecided } from "./early-load.js";
import { NEEDS, usableFolder } from "./usable-folder.js";

export interface AnalysisFlags extends DumpFlags, ModelFlags {
  sessionsDir?: string;
  out: string;
  json?: boolean;
  unsafe?: boolean;
  /** The verdict and the report paths only, no progress. */
  quiet?: boolean;
  /** Every progress line, also on a terminal. */
  verbose?: boolean;
}

export interface AnalyzeFlags extends AnalysisFlags, LiveFlags {
  issue?: string;
  /** Follow-up chat after the report, on the same open session. */
  chat?: boolean;
}

/** The analysis of the dump named, or of a live process `--pid` names, dumped for it. */
export async function analyze(dumpArgument: string | undefined, flags: AnalyzeFlags): Promise<void> {
  if (flags.issue !== undefined && flags.issue.trim() === "") {
    throw new ExitError(ExitCode.usage, '--issue is empty; say what went wrong, e.g. --issue "hangs after login", or leave it out');
  }
  const dump = await dumpToRead(dumpArgument, flags);
  try {
    await analyzeDump(dump.path, flags);
  } finally {
    dump.live?.remove();
    if (dump.live && !dump.live.kept) process.stderr.write(`dumpdbg: the dump of process ${dump.live.pid} is removed; --keep-dump PATH keeps it for a later chat or resume\n`);
  }
}

async function analyzeDump(dumpPath: string, flags: AnalyzeFlags): Promise<void> {
  const progress = await startProgress(verbosityOf(flags));
  const options = analysisOptions(dumpPath, flags, progress);
  // The debugger starts reading the dump first; the graph, the agents and LangChain load meanwhile.
  options.opening = openDump(options.open);
  options.opening.catch(() => undefined);
  // Their code is evaluated in one synchronous stretch: gdb is given the core to load before it.
  await earlyLoadDecided();
  const { analyze: runAnalysis } = await import("../analysis.js").catch(async (error: unknown) => {
    progress.stop();
    await options.opening?.then((opened) => opened.session.close(), () => undefined);
    throw error;
  });
  if (!flags.chat) {
    const result = await runAnalysis(flags.issue ?? null, options).finally(() => progress.stop()).catch((error: unknown) => textOnly(error, flags));
    if (result === null) return;
    await printResult(result, flags);
    return;
  }
  options.afterReport = async (open) => {
    progress.stop();
    await printResult({ sessionId: open.sessionId, report: open.report, files: open.files }, flags);
    const { runChat } = await import("./chat.js");
    await runChat({
      root: options.sessionsDir,
      sessionId: open.sessionId,
      open: { store: open.store, executor: open.executor, transcript: open.transcript },
      models: open.models,
      redactor: open.redactor,
      outDir: options.outDir,
      unsafe: options.unsafe,
    });
  };
  await runAnalysis(flags.issue ?? null, options).finally(() => progress.stop()).catch((error: unknown) => textOnly(error, flags));
}

/** An apport report with no core has no dump to analyse: what its text says is the answer. */
function textOnly(error: unknown, flags: AnalyzeFlags): null {
  if (!(error instanceof ReportWithoutCore)) throw error;
  printTextVerdict(error, flags.json === true);
  return null;
}

export function verbosityOf(flags: { quiet?: boolean; verbose?: boolean }): Verbosity {
  if (flags.quiet && flags.verbose) throw new ExitError(ExitCode.usage, "--quiet and --verbose cannot be used together");
  return flags.quiet ? "quiet" : flags.verbose ? "verbose" : "normal";
}

/** The options `analysis.ts` takes, from the flags `analyze` and `resume` share. */
export function analysisOptions(dumpPath: string, flags: AnalysisFlags, progress: Progress): AnalysisOptions {
  if (flags.unsafe) {
    process.stderr.write("dumpdbg: WARNING: --unsafe lifts the command safety policy; commands a model proposes may run shells, write files or start processes\n");
  }
  const sessionsDir = usableFolder(sessionsRoot(flags.sessionsDir), "--sessions-dir", NEEDS.session);
  const outDir = usableFolder(resolve(flags.out), "--out", NEEDS.reports);
  return {
    open: openOptions(dumpPath, flags),
    models: modelConfig(flags),
    sessionsDir,
    outDir,
    unsafe: flags.unsafe ?? false,
    progress: (line, detail) => progress.line(line, detail),
    onInterrupt,
    // `analyze` and `resume` end when the analysis (and its chat) does.
    exiting: true,
  };
}

/** The `--sessions-dir` a later command needs to find this session, when it is not the default. */
function sessionsFlag(flag: string | undefined): string {
  if (flag === undefined) return "";
  const dir = resolve(flag);
  return dir === sessionsRoot(undefined) ? "" : ` --sessions-dir ${/\s/.test(dir) ? JSON.stringify(dir) : dir}`;
}

/**
 * `--json`: the JSON report alone on stdout. Otherwise the verdict first (kind, where), why in one
 * sentence, the confidence, then the report paths and the session; `--quiet`: the verdict and the
 * paths only.
 */
export async function printResult(result: Pick<AnalysisResult, "sessionId" | "report" | "files">, flags: { json?: boolean; sessionsDir?: string; quiet?: boolean }): Promise<void> {
  const [{ renderJson }, { verdictText }] = await Promise.all([import("../report/index.js"), import("../report/markdown.js")]);
  if (flags.json) {
    process.stdout.write(result.files.find((f) => f.format === "json")?.text ?? renderJson(result.report));
    return;
  }
  const { report, files } = result;
  const c = colours(process.stdout);
  const width = process.stdout.isTTY ? widthOf(process.stdout) : Number.POSITIVE_INFINITY;
  const hang = report.crash.kind === "deadlock" || report.crash.kind === "hang";
  const headline = c.bold((hang ? c.yellow : c.red)(verdictText(report)));
  const paths = files.map((f) => `  ${f.file}`);
  if (flags.quiet) {
    process.stdout.write(`${[headline, ...paths].join("\n")}\n`);
    return;
  }
  const { confidence, summary, recommendations } = report.conclusion;
  const lines = [
    headline,
    wrap(`${c.bold("Why:")} ${firstSentence(summary)}`, width, "  "),
    `${c.bold("Confidence:")} ${confidenceWord(confidence)} (${confidence.toFixed(2)})`,
    ...(recommendations[0] ? [wrap(`${c.bold("First fix:")} ${recommendations[0]}`, width, "  ")] : []),
    "",
    "Reports:",
    ...paths.map((p) => c.dim(p)),
    wrap(`Session: ${result.sessionId} (dumpdbg chat ${result.sessionId}${sessionsFlag(flags.sessionsDir)} for follow-up questions)`, width, "  "),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** The summary's first sentence: up to the first full stop that ends one (not one inside a name). */
function firstSentence(text: string): string {
  const end = /[.!?](?=\s+[A-Z`(])/.exec(text);
  return end ? text.slice(0, end.index + 1) : text;
}

function confidenceWord(value: number): string {
  return value >= 0.8 ? "high" : value >= 0.5 ? "medium" : "low";
}
