/**
 * The two units of batch work, the same on the local pool and on a queue worker: one dump triaged,
 * and one group's representative analysed.
 */
import { statSync } from "node:fs";
import { normalizeFunctionName } from "../analyzers/culprit.js";
import { noteCodeUse } from "../code-cache.js";
import { readAheadTriage, triage, triageOptionsOf } from "../analyzers/index.js";
import { askSession } from "../debuggers/inspector.js";
import { openDump, type OpenDumpOptions } from "../debuggers/open.js";
import type { ModelConfig } from "../llm/index.js";
import type { Triaged } from "./grouping.js";

/** Everything openDump takes but the dump itself. */
export type OpenSettings = Omit<OpenDumpOptions, "dump">;

export interface AnalysisSettings {
  models: ModelConfig;
  sessionsDir: string;
  outDir: string;
}

export interface GroupAnalysis {
  /** The analysis's Markdown report. */
  report: string;
  summary: string;
}

export async function triageDump(dump: string, open: OpenSettings): Promise<Triaged> {
  const opened = await openDump({ ...open, dump });
  try {
    const options = triageOptionsOf(opened.dump, opened.executable, opened.hsErr);
    await readAheadTriage(opened.session, options);
    const result = await triage(askSession(opened.session), options);
    opened.unchanged();
    const { crash } = result;
    const frames = result.frames.map((frame) => (frame.function ? normalizeFunctionName(frame.function) : "??"));
    return {
      dump,
      kind: crash.kind,
      signature: crash.signature,
      frames,
      culprit: { function: crash.culprit.function, file: crash.culprit.file, line: crash.culprit.line, language: crash.culprit.language },
      completeness: (crash.culprit.line !== null ? 10 : 0) + frames.filter((f) => f !== "??").length,
      modifiedAt: statSync(dump).mtime.toISOString(),
      buildId: opened.dump.facts.modules[0]?.buildId ?? null,
      origin: crash.origin?.type ?? null,
      exploitability: crash.exploitability?.rating ?? null,
      crashedDebugger: opened.crashedDebugger,
    };
  } finally {
    await opened.session.close();
  }
}

export async function analyzeDump(dump: string, open: OpenSettings, settings: AnalysisSettings): Promise<GroupAnalysis | null> {
  // Evaluated only for a batch that analyses: a triage-only batch never needs LangGraph and the agents.
  // Noted, so that the batch's code cache, if a triage-only batch wrote it, is written again with them.
  noteCodeUse("analysis");
  const { analyze } = await import("../analysis.js");
  const analysis = await analyze(null, {
    open: { ...open, dump },
    models: settings.models,
    sessionsDir: settings.sessionsDir,
    outDir: settings.outDir,
    unsafe: false,
    progress: () => undefined,
  });
  const report = analysis.files.find((file) => file.format === "md")?.file ?? analysis.files[0]?.file ?? null;
  return report ? { report, summary: analysis.report.conclusion.summary } : null;
}

export function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
}
