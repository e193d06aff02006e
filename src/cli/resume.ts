/** `dumpdbg resume <id>`: continue an interrupted analysis from its last checkpoint. */
import { resumeAnalysis } from "../analysis.js";
import { resolveSessionId } from "../evidence/sessions.js";
import { analysisOptions, printResult, type AnalysisFlags } from "./analyze.js";

export async function resume(id: string, flags: AnalysisFlags): Promise<void> {
  // The dump comes from the session; openOptions needs a path, which resumeAnalysis replaces.
  const options = analysisOptions("", flags);
  await printResult(await resumeAnalysis(resolveSessionId(options.sessionsDir, id), options), flags);
}
