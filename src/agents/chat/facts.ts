/**
 * What the chat knows before the first question: the report the analysis rendered (or the crash
 * facts of a fresh triage when there is none), and which stored evidence measured those facts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { triage } from "../../analyzers/triage.js";
import type { EvidenceStore } from "../../evidence/store.js";
import { parseReportDocument, REPORT_DOCUMENT, type ReportDocument } from "../../report/index.js";
import { ReportSchema, type Crash } from "../../report/schema.js";
import type { CommandExecutor } from "../executor.js";

export interface ChatFacts {
  crash: Crash;
  /** The analysis's report and the details it rendered; null when the session has no report. */
  document: ReportDocument | null;
  /**
   * Where the facts came from: the document the analysis rendered (with its details), its bare
   * JSON report, or a triage run now because the session has neither.
   */
  origin: "document" | "report" | "triage";
  /** The same, for the user: the file read, or what was done instead. */
  source: string;
  /** Why a report file that exists could not be used, for the user. */
  warnings: string[];
}

export interface FactsLocation {
  /** The session's folder: `report.json` there is the document the analysis rendered. */
  sessionDir: string;
  /** The reports folder (`--out`), where `<id>.json` is the bare JSON report. */
  reportsDir: string;
  sessionId: string;
}

/**
 * The session's report document, else its bare JSON report, else the crash facts of a triage run
 * now through the executor (its commands are served from the store when the analysis ran them).
 */
export async function loadFacts(where: FactsLocation, executor: CommandExecutor): Promise<ChatFacts> {
  const warnings: string[] = [];
  const documentFile = join(where.sessionDir, REPORT_DOCUMENT);
  const document = readJson(documentFile, warnings, parseReportDocument);
  if (document) return { crash: document.report.crash, document, origin: "document", source: documentFile, warnings };

  const reportFile = join(where.reportsDir, `${where.sessionId}.json`);
  const report = readJson(reportFile, warnings, (value) => ReportSchema.parse(value));
  if (report) return { crash: report.crash, document: { report, details: {} }, origin: "report", source: reportFile, warnings };

  const result = await triage(executor.runner("triage"));
  return { crash: result.crash, document: null, origin: "triage", source: "a triage of the dump (the session has no report)", warnings };
}

/**
 * The evidence id of the first successful run of a command: the analysis's triage runs first,
 * right after the dump is opened, so this is the measurement the report's facts rest on.
 */
export function firstEvidence(store: EvidenceStore, isCommand: (command: string) => boolean): string | null {
  return store.list().find((record) => record.ok && isCommand(record.command))?.id ?? null;
}

function readJson<T>(file: string, warnings: string[], parse: (value: unknown) => T): T | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") warnings.push(`${file} is unreadable (${(error as Error).message}); not used`);
    return null;
  }
  try {
    return parse(JSON.parse(text));
  } catch {
    warnings.push(`${file} is not a dumpdbg report; not used`);
    return null;
  }
}
