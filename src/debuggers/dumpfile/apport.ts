/**
 * Ubuntu's apport crash reports (`/var/crash/*.crash`), read line by line as apport's
 * problem_report module writes them: `Key: value`, a value of several lines as `Key:` followed by
 * lines that start with a space, and a binary value as `Key: base64` followed by lines each holding
 * the base64 of one piece of a gzip stream (the core, for `CoreDump`). Every field and every line
 * is bounded; the core's bytes are handed out piece by piece, never held whole.
 */
import { DumpFileError } from "./file.js";

/** What a report starts with: apport writes ProblemType first. */
const FIRST_FIELD = "ProblemType: ";
/** A field kept longer than this is cut (ProcMaps of a large process, a long stack trace). */
const MAX_FIELD_CHARS = 64 * 1024;
const MAX_MAPS_CHARS = 512 * 1024;
/** Fields past this many are not kept (apport writes some tens). */
const MAX_FIELDS = 1000;
const KEY = /^([A-Za-z0-9][A-Za-z0-9._-]{0,127}):(?: (.*))?$/;

/** Whether a file's first bytes start an apport report. */
export function isApportReport(head: Buffer): boolean {
  return head.subarray(0, FIRST_FIELD.length).toString("latin1") === FIRST_FIELD;
}

/** What the report says, field by field, as bounded text. */
export interface ApportReport {
  /** Text fields by key, each at most its bound; binary fields (but the core) are left out. */
  fields: Map<string, string>;
  /** The fields cut to their bound. */
  cut: string[];
  /** Whether the report carries its core (`CoreDump: base64`). */
  hasCore: boolean;
}

/**
 * Reads one report a line at a time (lines without their newline). `line` returns the decoded bytes
 * of the core's gzip stream a `CoreDump` line holds, else null: the caller writes them on.
 */
export class ApportReader {
  private readonly fields = new Map<string, string>();
  private readonly cut = new Set<string>();
  private hasCore = false;
  private key: string | null = null;
  private binary = false;
  private first = true;

  line(text: string): Buffer | null {
    if (this.first) {
      this.first = false;
      if (!text.startsWith(FIRST_FIELD)) throw new DumpFileError("it does not start as an apport report (ProblemType: …)");
    }
    if (text.startsWith(" ")) return this.continued(text.slice(1));
    if (text === "") return null;
    const field = KEY.exec(text);
    if (!field) throw new DumpFileError(`a line of the report is neither a field nor its continuation: ${JSON.stringify(text.slice(0, 60))}`);
    const [, key, value] = field as unknown as [string, string, string | undefined];
    this.key = key;
    this.binary = value === "base64";
    if (this.binary) {
      if (key === "CoreDump") this.hasCore = true;
      return null;
    }
    if (this.fields.size >= MAX_FIELDS && !this.fields.has(key)) {
      this.key = null;
      return null;
    }
    this.fields.set(key, "");
    if (value !== undefined) this.append(key, value);
    return null;
  }

  /** What was read; the reader may be asked again after more lines. */
  report(): ApportReport {
    return { fields: new Map(this.fields), cut: [...this.cut], hasCore: this.hasCore };
  }

  private continued(text: string): Buffer | null {
    const key = this.key;
    if (key === null) return null;
    if (this.binary) {
      if (key !== "CoreDump") return null;
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new DumpFileError("a line of its CoreDump is not base64");
      return Buffer.from(text, "base64");
    }
    this.append(key, this.fields.get(key) === "" ? text : `\n${text}`);
    return null;
  }

  private append(key: string, text: string): void {
    const now = this.fields.get(key) ?? "";
    const room = (key === "ProcMaps" ? MAX_MAPS_CHARS : MAX_FIELD_CHARS) - now.length;
    if (room <= 0) return;
    if (text.length > room) this.cut.add(key);
    this.fields.set(key, now + text.slice(0, room));
  }
}

/** The facts of a report that dumpdbg uses as evidence, each null when the report lacks it. */
export interface ApportFacts {
  problemType: string | null;
  executablePath: string | null;
  commandLine: string | null;
  signal: number | null;
  package: string | null;
  date: string | null;
  /** The number of mappings ProcMaps lists, and the lines that map the program. */
  mappings: { count: number; program: string[] } | null;
  /** The crashing thread's stack as apport's gdb printed it (Stacktrace), or every thread's. */
  stackTrace: string | null;
  threadStackTrace: string | null;
  /** An assertion's text, where apport caught one (AssertionMessage). */
  assertion: string | null;
}

export function apportFacts(report: ApportReport): ApportFacts {
  const field = (key: string): string | null => {
    const value = report.fields.get(key)?.trim();
    return value ? value : null;
  };
  const executablePath = field("ExecutablePath");
  const signal = field("Signal");
  const maps = field("ProcMaps");
  const lines = maps?.split("\n") ?? [];
  return {
    problemType: field("ProblemType"),
    executablePath,
    commandLine: field("ProcCmdline"),
    signal: signal !== null && /^\d{1,3}$/.test(signal) ? Number(signal) : null,
    package: field("Package"),
    date: field("Date"),
    mappings: maps === null ? null : { count: lines.length, program: executablePath ? lines.filter((l) => l.endsWith(` ${executablePath}`)).slice(0, 8) : [] },
    stackTrace: field("Stacktrace"),
    threadStackTrace: field("ThreadStacktrace"),
    assertion: field("AssertionMessage"),
  };
}

/** The whole text of a report, read with ApportReader: for a report held in memory (tests, small reports). */
export function readApportText(text: string): ApportReport {
  const reader = new ApportReader();
  for (const line of text.split("\n")) reader.line(line);
  return reader.report();
}
