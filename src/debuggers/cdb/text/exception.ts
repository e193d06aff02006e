/**
 * Readers of what cdb says about the exception: `.exr -1` (the exception record), `.lastevent`,
 * and `!analyze -v`, whose `KEY:  value` report gives the record, the faulting IP, the failure
 * bucket, the culprit (`SYMBOL_NAME`, `MODULE_NAME`, `FAULTING_SOURCE_*`) and, for .NET, the
 * managed exception. The dump file's own exception stream stays the ground truth; these say what
 * cdb made of it.
 */
import type { ExceptionStop, ManagedException } from "../../model.js";
import { bounded, cdbAddress, lines, parseLocation } from "./common.js";

/** Parameters an exception record holds at most (EXCEPTION_MAXIMUM_PARAMETERS). */
const MAX_PARAMETERS = 15;

/** `.exr -1`, or the `EXCEPTION_RECORD:  (.exr -1)` block of `!analyze -v`; null when there is none. */
export function parseExceptionRecord(output: string): ExceptionStop | null {
  let address: string | null = null;
  let code: string | null = null;
  let flags = 0;
  const parameters: string[] = [];
  for (const line of lines(output)) {
    const field = /^\s*(ExceptionAddress|ExceptionCode|ExceptionFlags|Parameter\[(\d+)\]):\s*([0-9a-f`]+)/i.exec(line);
    if (!field) continue;
    const value = cdbAddress(field[3]);
    if (value === null) continue;
    // `!analyze -v` prints the record once; a nested record (`.exr` of a chain) is not the exception.
    if (field[1] === "ExceptionAddress" && address !== null) break;
    if (field[1] === "ExceptionAddress") address = value;
    else if (field[1] === "ExceptionCode") code = `0x${BigInt(value).toString(16).padStart(8, "0")}`;
    else if (field[1] === "ExceptionFlags") flags = Number(BigInt(value) & 0xffffffffn);
    else if (Number(field[2]) === parameters.length && parameters.length < MAX_PARAMETERS) parameters.push(value);
  }
  if (address === null || code === null) return null;
  return { type: "exception", code, flags, address, parameters, thread: null };
}

/** `.lastevent`: `Last event: 1a2c.1b3c: Access violation - code c0000005 (first/second chance not available)`. */
export function parseLastEvent(output: string): string | null {
  const event = /^Last event:\s*[0-9a-f]+\.[0-9a-f]+:\s*(.+)$/im.exec(output);
  return event ? bounded((event[1] ?? "").trim()) : null;
}

/** What `!analyze -v` concludes. */
export interface AnalyzeReport {
  exception: ExceptionStop | null;
  /** The instruction that faulted. */
  faultingIp: string | null;
  /** `FAILURE_BUCKET_ID`: how Windows Error Reporting groups this crash. */
  bucket: string | null;
  /** `SYMBOL_NAME`, `MODULE_NAME`, `IMAGE_NAME` and `FAULTING_SOURCE_*`: where !analyze puts the blame. */
  culprit: { module: string | null; function: string | null; image: string | null; file: string | null; line: number | null };
  /** `PROCESS_NAME`. */
  process: string | null;
  /** `ERROR_CODE`'s text, `(NTSTATUS) 0xc0000005 - The instruction at ...`. */
  error: string | null;
  managed: ManagedException | null;
}

/** The `KEY:  value` fields of `!analyze -v` (a value may continue on the lines below its key). */
function fields(output: string): Map<string, string> {
  const found = new Map<string, string>();
  let key: string | null = null;
  for (const line of lines(output)) {
    const field = /^([A-Z][A-Z0-9_]{1,63}):\s*(.*)$/.exec(line);
    if (field) {
      key = field[1] ?? null;
      if (key !== null && !found.has(key)) found.set(key, bounded((field[2] ?? "").trim()));
      continue;
    }
    // The first line under a key with nothing after it (`FAULTING_IP: ` in older versions).
    if (key !== null && found.get(key) === "" && line.trim() !== "") found.set(key, bounded(line.trim()));
    if (line.trim() === "") key = null;
  }
  return found;
}

export function parseAnalyze(output: string): AnalyzeReport {
  const field = fields(output);
  const value = (key: string) => {
    const text = field.get(key);
    return text === undefined || text === "" ? null : text;
  };
  const record = /EXCEPTION_RECORD:[^\n]*\n([\s\S]*?)(?:\n\s*\n|$)/.exec(output);
  const exception = parseExceptionRecord(record ? (record[1] ?? "") : output);
  const symbol = value("SYMBOL_NAME");
  const location = symbol ? parseLocation(symbol.replace(/\+([0-9a-f]+)$/i, "+0x$1")) : null;
  const faulting = value("FAULTING_IP");
  const line = value("FAULTING_SOURCE_LINE_NUMBER");
  return {
    exception,
    faultingIp: exception?.address ?? (faulting ? cdbAddress(/^([0-9a-f`]{8,17})\s/i.exec(faulting)?.[1]) : null),
    bucket: value("FAILURE_BUCKET_ID"),
    culprit: {
      module: value("MODULE_NAME") ?? location?.module ?? null,
      function: location?.function ?? null,
      image: value("IMAGE_NAME"),
      file: value("FAULTING_SOURCE_FILE"),
      line: line && /^\d+$/.test(line) ? Number(line) : null,
    },
    process: value("PROCESS_NAME"),
    error: value("ERROR_CODE"),
    managed: managedOf(output, field),
  };
}

/**
 * The managed exception `!analyze` found: newer versions say `EXCEPTION_OBJECT`/`MANAGED_OBJECT`
 * and `EXCEPTION_MESSAGE`, older ones embed SOS's own `Exception type:` and `Message:` lines.
 */
function managedOf(output: string, field: Map<string, string>): ManagedException | null {
  const type = /^\s*Exception type:\s+(\S.*)$/m.exec(output)?.[1]?.trim() ?? null;
  const bucketType = /^CLR_EXCEPTION_([\w.`+]+?)_[0-9a-f]{8}_/i.exec(field.get("FAILURE_BUCKET_ID") ?? "")?.[1] ?? null;
  const name = type ?? field.get("EXCEPTION_TYPE") ?? bucketType;
  if (!name) return null;
  const message = /^\s*Message:\s+(.*)$/m.exec(output)?.[1]?.trim() ?? field.get("EXCEPTION_MESSAGE") ?? null;
  const object = /^\s*Exception object:\s+([0-9a-f`]+)/m.exec(output)?.[1] ?? /([0-9a-f`]{8,17})\s*$/i.exec(field.get("EXCEPTION_OBJECT") ?? field.get("MANAGED_OBJECT") ?? "")?.[1];
  // `!analyze` names the exception; the frames it went through are `!pe`'s to list.
  return { type: bounded(name), message: message === null || message === "<none>" ? null : bounded(message), object: object ? cdbAddress(object) : null, stack: [] };
}
