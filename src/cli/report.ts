/** `dumpdbg report <session-id>`: re-renders a finished analysis from its session, in any formats. */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadSession, resolveSessionId, SessionDamaged, sessionPaths, updateSession, type SessionMeta } from "../evidence/sessions.js";
import { parseReportDocument, REPORT_DOCUMENT, REPORT_FORMATS, writeReports, type ReportDocument, type ReportFormat } from "../report/index.js";
import { ExitCode, ExitError } from "./exit.js";
import { sessionsRoot } from "./sessions-root.js";

export interface ReportFlags {
  format: string;
  out: string;
  sessionsDir?: string;
}

export async function report(given: string, flags: ReportFlags): Promise<void> {
  const formats = parseFormats(flags.format);
  const root = sessionsRoot(flags.sessionsDir);
  const id = resolveSessionId(root, given);
  const documentPath = join(sessionPaths(root, id).dir, REPORT_DOCUMENT);
  const meta = loadUnlessDamaged(root, id, documentPath);
  const document = readDocument(documentPath, id, meta?.state ?? "damaged");
  const written = await writeReports(document, { outDir: flags.out, formats });
  // Kept with the session, so removing it removes these too; a damaged session.json is left as it is.
  if (meta) updateSession(root, id, { reports: [...new Set([...(meta.reports ?? []), ...written.map(({ file }) => resolve(file))])].slice(-64) });
  for (const { file } of written) process.stdout.write(`${file}\n`);
}

/** The session, or null when its session.json is damaged but its report document can still be read. */
function loadUnlessDamaged(root: string, id: string, documentPath: string): SessionMeta | null {
  try {
    return loadSession(root, id);
  } catch (error) {
    if (error instanceof SessionDamaged && existsSync(documentPath)) return null;
    throw error;
  }
}

function parseFormats(list: string): ReportFormat[] {
  const formats = list.split(",").map((f) => f.trim().toLowerCase()).filter(Boolean);
  const unknown = formats.filter((f) => !(REPORT_FORMATS as readonly string[]).includes(f));
  if (formats.length === 0 || unknown.length > 0) {
    throw new ExitError(ExitCode.usage, `--format takes ${REPORT_FORMATS.join(", ")} (comma-separated), got "${list}"`);
  }
  return formats as ReportFormat[];
}

function readDocument(path: string, id: string, state: string): ReportDocument {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    const next = state === "done" ? "run the analysis again" : `finish it with "dumpdbg resume ${id}"`;
    throw new ExitError(ExitCode.badInput, `session ${id} has no saved report (state: ${state}); ${next}`);
  }
  try {
    return parseReportDocument(JSON.parse(text));
  } catch {
    throw new ExitError(ExitCode.badInput, `${path} is damaged; run the analysis again`);
  }
}
