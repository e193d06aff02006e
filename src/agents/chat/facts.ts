/**
 * What the chat knows before the first question: the report the analysis rendered (or the crash
 * facts of a fresh triage when there is none), and which stored evidence measured those facts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { triage, triageOptionsOf } from "../../analyzers/index.js";
import type { DumpInfo } from "../../debuggers/dump.js";
import type { Probe, Vocabulary } from "../../debuggers/probe.js";
import { commandKey, type EvidenceStore } from "../../evidence/store.js";
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
  /** The process id the dump's notes recorded (the main thread's LWP); null when they record none. */
  processId: number | null;
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
 * `dump` is what the dump file's own notes say, when it could be read.
 */
export async function loadFacts(where: FactsLocation, executor: CommandExecutor, dump: DumpInfo | null): Promise<ChatFacts> {
  const warnings: string[] = [];
  const processId = processIdOf(dump);
  const documentFile = join(where.sessionDir, REPORT_DOCUMENT);
  const document = readJson(documentFile, warnings, parseReportDocument);
  if (document) return { crash: document.report.crash, document, origin: "document", source: documentFile, warnings, processId };

  const reportFile = join(where.reportsDir, `${where.sessionId}.json`);
  const report = readJson(reportFile, warnings, (value) => ReportSchema.parse(value));
  if (report) return { crash: report.crash, document: { report, details: {} }, origin: "report", source: reportFile, warnings, processId };

  const result = await triage(executor.asker("triage"), triageOptionsOf(dump, null));
  return { crash: result.crash, document: null, origin: "triage", source: "a triage of the dump (the session has no report)", warnings, processId };
}

/** The process id the dump file recorded: NT_PRPSINFO's pr_pid in an ELF core, the misc info stream's in a minidump. */
function processIdOf(dump: DumpInfo | null): number | null {
  if (dump === null) return null;
  const pid = dump.facts.format === "elf-core" ? dump.facts.pid : dump.facts.processId;
  return pid !== null && pid > 0 ? pid : null;
}

/**
 * The evidence id of the first successful run of any of the probes, found by the command the
 * session's debugger renders each as: the analysis's triage runs first, right after the dump is
 * opened, so this is the measurement the report's facts rest on.
 */
export function firstEvidence(store: EvidenceStore, vocabulary: Vocabulary, ...wanted: Probe[]): string | null {
  const keys = new Set(wanted.map((probe) => commandKey(vocabulary.render(probe))));
  return store.list().find((record) => record.ok && keys.has(commandKey(record.command)))?.id ?? null;
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
