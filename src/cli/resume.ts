/** `dumpdbg resume <id>`: continue an interrupted analysis from its last checkpoint. */
import { resumeAnalysis } from "../analysis.js";
import { resolveSessionId } from "../evidence/sessions.js";
import { analysisOptions, printResult, verbosityOf, type AnalysisFlags } from "./analyze.js";
import { startProgress } from "./terminal.js";

export async function resume(id: string, flags: AnalysisFlags): Promise<void> {
  const progress = await startProgress(verbosityOf(flags));
  // The dump comes from the session; openOptions needs a path, which resumeAnalysis replaces.
  const options = analysisOptions("", flags, progress);
  const result = await resumeAnalysis(resolveSessionId(options.sessionsDir, id), options).finally(() => progress.stop());
  await printResult(result, flags);
}
