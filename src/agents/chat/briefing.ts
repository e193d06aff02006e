/**
 * What the chat knows before the first question: the report the analysis rendered (or the crash
 * facts of a fresh triage when there is none), the playbooks' facts of the crash (the analysis's
 * triage and crash site as it checkpointed them), and which stored evidence measured them.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { triage, triageOptionsOf, type TriageResult } from "../../analyzers/index.js";
import type { DumpInfo } from "../../debuggers/dump.js";
import type { Probe, Vocabulary } from "../../debuggers/probe.js";
import { checkpointSaver } from "../../evidence/checkpoints.js";
import { commandKey, type EvidenceStore } from "../../evidence/store.js";
import { parseReportDocument, REPORT_DOCUMENT, type ReportDocument } from "../../report/index.js";
import { ReportSchema, type Crash } from "../../report/schema.js";
import type { CommandExecutor } from "../executor.js";
import { crashSiteOf, type CrashSite } from "../playbooks/crash-site.js";
import { factsOf, type Facts } from "../playbooks/facts.js";

export interface Briefing {
  crash: Crash;
  /** The analysis's report and the details it rendered; null when the session has no report. */
  document: ReportDocument | null;
  /**
   * Where the crash and the report came from: the document the analysis rendered (with its
   * details), its bare JSON report, or a triage run now because the session has neither.
   */
  origin: "document" | "report" | "triage";
  /** The same, for the user: the file read, or what was done instead. */
  source: string;
  /** Why a report file that exists could not be used, for the user. */
  warnings: string[];
  /** The process id the dump's notes recorded (the main thread's LWP); null when they record none. */
  processId: number | null;
  /**
   * The playbooks' facts of the crash, from the triage and crash site the analysis checkpointed
   * (a triage run now, and the sources read now, for a session that checkpointed none).
   */
  facts: Facts;
  /** The thread the debugger selected on opening the dump, where the playbooks' probes that name no thread ran. */
  homeThread: number | null;
  /** Triage's commands and the evidence ids of their runs: what the playbooks' judges read besides their own probes. */
  triageEvidence: Record<string, string>;
}

export interface BriefingLocation {
  /** The session's folder: `report.json` there is the document the analysis rendered. */
  sessionDir: string;
  /** The session's evidence database, which also holds the analysis's checkpoints. */
  evidenceDb: string;
  /** The reports folder (`--out`), where `<id>.json` is the bare JSON report. */
  reportsDir: string;
  sessionId: string;
}

/**
 * The session's report document, else its bare JSON report, else the crash facts of a triage run
 * now through the executor (its commands are served from the store when the analysis ran them);
 * and the analysis's crash site, else one read now. `dump` is what the dump file's own notes say,
 * when it could be read.
 */
export async function loadBriefing(where: BriefingLocation, executor: CommandExecutor, dump: DumpInfo | null): Promise<Briefing> {
  const warnings: string[] = [];
  const processId = processIdOf(dump);
  const analysed = (await analysedCrash(where.evidenceDb, where.sessionId)) ?? (await triagedNow(executor, dump));
  const known = {
    warnings,
    processId,
    facts: factsOf(analysed.triage, analysed.crashSite),
    homeThread: analysed.crashSite.homeThread,
    triageEvidence: analysed.triageEvidence,
  };

  const documentFile = join(where.sessionDir, REPORT_DOCUMENT);
  const document = readJson(documentFile, warnings, parseReportDocument);
  if (document) return { ...known, crash: document.report.crash, document, origin: "document", source: documentFile };

  const reportFile = join(where.reportsDir, `${where.sessionId}.json`);
  const report = readJson(reportFile, warnings, (value) => ReportSchema.parse(value));
  if (report) return { ...known, crash: report.crash, document: { report, details: {} }, origin: "report", source: reportFile };

  return { ...known, crash: analysed.triage.crash, document: null, origin: "triage", source: "a triage of the dump (the session has no report)" };
}

interface AnalysedCrash {
  triage: TriageResult;
  crashSite: CrashSite;
  triageEvidence: Record<string, string>;
}

/**
 * The triage and crash site of the session's analysis, from its last checkpoint; null when it
 * checkpointed none (a session the analysis never reached, or one made by an older dumpdbg).
 */
async function analysedCrash(evidenceDb: string, sessionId: string): Promise<AnalysedCrash | null> {
  let db: Database.Database;
  try {
    db = new Database(evidenceDb, { readonly: true, fileMustExist: true });
  } catch {
    return null;
  }
  try {
    const saved = await checkpointSaver(db).getTuple({ configurable: { thread_id: sessionId } });
    const values = saved?.checkpoint.channel_values as Partial<AnalysedCrash> | undefined;
    if (!values?.triage || !values.crashSite) return null;
    return { triage: values.triage, crashSite: values.crashSite, triageEvidence: values.triageEvidence ?? {} };
  } catch {
    // No checkpoint tables (the read-only connection cannot create them): nothing was checkpointed.
    return null;
  } finally {
    db.close();
  }
}

/** A triage run now through the executor, and its crash site: the sources are read now, and the debugger stands where it opened. */
async function triagedNow(executor: CommandExecutor, dump: DumpInfo | null): Promise<AnalysedCrash> {
  const result = await triage(executor.asker("triage"), triageOptionsOf(dump, null));
  return { triage: result, crashSite: crashSiteOf(result, executor.context().selectedThread?.id ?? null), triageEvidence: executor.evidenceIdsOf(result.commands) };
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
