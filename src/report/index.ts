/** Writing reports to disk: `<session-id>.md`, `.html` and `.json` in one folder. */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HTML_MARKER, renderHtml } from "./html.js";
import { drawPictures, type Picture } from "./pictures.js";
import { renderJson } from "./json.js";
import { ReportSchema } from "./schema.js";
import type { ReportDocument } from "./document.js";
import { reportBlocks, type RenderOptions } from "./layout.js";
import { MARKDOWN_MARKER, renderMarkdown } from "./markdown.js";
import { writing } from "../storage-errors.js";

export { renderHtml } from "./html.js";
export { renderJson } from "./json.js";
export { renderMarkdown } from "./markdown.js";
export type { ChatExchange, LoadedModule, Recursion, Redactions, Register, ReportDetails, ReportDocument, SourceExcerpt, StackFrame, ThreadSummary } from "./document.js";
export type { RenderOptions } from "./markdown.js";

export const REPORT_FORMATS = ["md", "html", "json"] as const;

/** The file in a session folder holding the rendered document, from which reports are re-rendered. */
export const REPORT_DOCUMENT = "report.json";

/** A saved document, checked: the report against the schema; details are optional extras. */
export function parseReportDocument(value: unknown): ReportDocument {
  const doc = (value ?? {}) as { report?: unknown; details?: unknown };
  const details = typeof doc.details === "object" && doc.details !== null ? (doc.details as ReportDocument["details"]) : {};
  return { report: ReportSchema.parse(doc.report), details };
}
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** A report file exists at the destination that dumpdbg did not write: it is the user's, left alone. */
export class ReportConflictError extends Error {
  constructor(readonly file: string) {
    super(`${file} exists and is not a dumpdbg report; move it or choose another --out folder`);
    this.name = "ReportConflictError";
  }
}

export interface WrittenReport {
  format: ReportFormat;
  file: string;
  /** What the file holds: `analyze --json` prints the JSON report as written, not rendered again. */
  text: string;
}

/**
 * Writes the report in each format to `outDir` as `<session-id>.<format>`. A previous report of
 * ours is replaced; any other file of that name makes the call throw `ReportConflictError` before
 * anything is written. Each file appears whole (written beside it, then renamed), never half-written.
 * The files are small and few: they are checked and written synchronously, which takes a fraction
 * of the round trips through libuv's thread pool that the promise API would (~10 ms of an analysis).
 */
export async function writeReports(
  doc: ReportDocument,
  options: { outDir: string; formats?: readonly ReportFormat[] },
): Promise<WrittenReport[]> {
  const formats = [...new Set(options.formats ?? REPORT_FORMATS)];
  // A picture that cannot be drawn costs the report nothing but the picture.
  const pictures = formats.includes("html") ? await drawPictures(doc).catch(() => []) : [];
  // Laid out once for Markdown and HTML alike.
  const blocks = formats.some((format) => format !== "json") ? reportBlocks(doc, { linkBase: options.outDir }) : undefined;
  // Render first: a report that breaks the JSON contract fails before any file is touched.
  const rendered = formats.map((format) => ({
    format,
    file: path.join(options.outDir, `${reportName(doc.report.session.id)}.${format}`),
    content: render(doc, format, { linkBase: options.outDir, blocks }, pictures),
  }));
  for (const { format, file } of rendered) {
    if (!isOursOrAbsent(file, format)) throw new ReportConflictError(file);
  }
  const elsewhere = { elsewhere: "or choose another --out folder" };
  writing(options.outDir, () => mkdirSync(options.outDir, { recursive: true }), { ...elsewhere, verb: "create" });
  for (const { file, content } of rendered) writing(file, () => replaceFile(file, content), elsewhere);
  return rendered.map(({ format, file, content }) => ({ format, file, text: content }));
}

function render(doc: ReportDocument, format: ReportFormat, layout: RenderOptions, pictures: Picture[]): string {
  switch (format) {
    case "md":
      return renderMarkdown(doc, layout);
    case "html":
      return renderHtml(doc, { ...layout, pictures });
    case "json":
      return renderJson(doc.report);
  }
}

/** A session id is ours, but it becomes a file name: keep it one plain path segment. */
function reportName(sessionId: string): string {
  if (!/^[\w.-]+$/.test(sessionId) || /^\.+$/.test(sessionId)) {
    throw new Error(`session id ${JSON.stringify(sessionId)} cannot name a report file`);
  }
  return sessionId;
}

/**
 * Removes the report files a removed session wrote, each only if it is still a dumpdbg report of
 * its format (a file the user put there since is kept). Returns the files removed.
 */
export function removeReports(files: readonly string[]): string[] {
  const removed: string[] = [];
  for (const file of files) {
    const format = path.extname(file).slice(1) as ReportFormat;
    if (!REPORT_FORMATS.includes(format)) continue;
    try {
      statSync(file);
      if (!isOursOrAbsent(file, format)) continue;
      rmSync(file, { force: true });
      removed.push(file);
    } catch {
      // Unreadable: not ours to remove.
    }
  }
  return removed;
}

function isOursOrAbsent(file: string, format: ReportFormat): boolean {
  let existing: string;
  try {
    existing = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw error;
  }
  switch (format) {
    case "md":
      return existing.startsWith(MARKDOWN_MARKER);
    case "html":
      return existing.slice(0, 2048).includes(HTML_MARKER);
    case "json":
      return isJsonReport(existing);
  }
}

function isJsonReport(content: string): boolean {
  try {
    const value: unknown = JSON.parse(content);
    return typeof value === "object" && value !== null && "schemaVersion" in value && "session" in value;
  } catch {
    return false;
  }
}

function replaceFile(file: string, content: string): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    writeFileSync(temp, content, { flag: "wx" });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
