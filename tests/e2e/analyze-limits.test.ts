/**
 * The limits (hypotheses, test iterations, graph steps) cut an analysis short, and it still ends in a
 * valid report that says what was not done.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { analyze, type AnalysisResult } from "../../src/analysis.js";
import type { Limits } from "../../src/agents/runtime.js";
import { ReportSchema } from "../../src/report/schema.js";
import { buildCore } from "../helpers/cores.js";

async function offline(limits: Partial<Limits>): Promise<AnalysisResult & { progress: string[] }> {
  const built = await buildCore("null-deref");
  const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-limits-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const progress: string[] = [];
  const result = await analyze(null, {
    open: { dump: built.core, exe: built.exe },
    models: { provider: "offline", redact: true },
    sessionsDir: path.join(dir, "sessions"),
    outDir: path.join(dir, "reports"),
    unsafe: false,
    limits,
    progress: (line) => progress.push(line),
  });
  ReportSchema.parse(result.report);
  return { ...result, progress };
}

describe("limits", () => {
  it("stops testing at the iteration limit; the critic asks for the untested alternative and the responder tests it", async () => {
    const { state, report } = await offline({ maxIterations: 1 });
    expect(state.trail).toEqual(["hypothesis", "tester", "evaluator", "reasoner", "critic", "responder", "reasoner", "critic", "report"]);
    expect(state.iterations).toBe(1);
    expect(report.critique.rounds[0]?.issues).toContain("No alternative to H1 was tested, so nothing rules out another explanation.");
    expect(report.hypotheses.map((h) => h.status)).toEqual(["confirmed", "rejected", "inconclusive"]);
    expect(report.hypotheses[2]?.statement).toMatch(/\(not tested: the analysis reached its limits\)$/);
    expect(report.conclusion.rootCause).toMatch(/Not tested, because the analysis reached its limits: H3/);
    expect(report.conclusion.confidence).toBeLessThanOrEqual(0.6);
  });

  it("forms no more hypotheses than allowed", async () => {
    const { state } = await offline({ maxHypotheses: 1 });
    expect(state.hypotheses.map((h) => h.id)).toEqual(["H1"]);
    expect(state.trail.at(-1)).toBe("report");
  });

  it("writes the report from the last checkpoint when LangGraph's recursion limit stops the graph", async () => {
    const { state, report, progress, files } = await offline({ recursionLimit: 4 });
    expect(progress).toContain("[report] the step limit (4) stopped the graph; reporting what was established");
    expect(state.trail).toHaveLength(4);
    expect(report.crash.kind).toBe("null-dereference");
    expect(report.hypotheses.length).toBeGreaterThan(0);
    expect(report.followUpQuestions.length).toBeGreaterThanOrEqual(3);
    expect(files.map((f) => f.format).sort()).toEqual(["html", "json", "md"]);
  });
});
