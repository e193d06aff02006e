/**
 * The dump as the user has it, made into the plain file a debugger reads: a compressed core or
 * minidump decompressed (unpack.ts), the core inside an apport report taken out, and what the file
 * says about where it came from (systemd-coredump's name and attributes, apport's fields) kept as
 * evidence. The one place every command's dump passes through, in `openDump`.
 */
import { closeSync, existsSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";

import { apportFacts, isApportReport, type ApportFacts } from "./dumpfile/apport.js";
import { parseCoredumpName, type CoredumpAttributes, type CoredumpName } from "./dumpfile/coredump-name.js";
import { DumpFile, DumpFileError, openRegularFile } from "./dumpfile/file.js";
import { declaredBytes, packingOf, type Packing } from "./dumpfile/packed.js";
import { readCoredumpAttributes } from "./coredump-store.js";
import { DumpError } from "./dump.js";
import { CONTROL_CHARACTER } from "./input-files.js";
import { unpackApport, unpackFile, sizeText, type Unpacked } from "./unpack.js";

/** Where a dump came from and what was done to it before a debugger read it. */
export interface DumpSource {
  /** The user's file, untouched. */
  original: string;
  /** How it was decompressed; null for a plain dump. */
  unpacked: { form: Packing | "apport"; packedBytes: number; plainBytes: number; ms: number } | null;
  /** What systemd-coredump's name and attributes say; null for a file it did not write. */
  coredump: { name: CoredumpName | null; attributes: CoredumpAttributes | null } | null;
  /** The apport report's fields; null for anything else. */
  apport: ApportFacts | null;
}

export interface PreparedDump {
  /** The plain dump for the debugger: the user's own file, or a private decompressed copy. */
  path: string;
  source: DumpSource;
  /** Removes a decompressed copy; nothing for the user's own file. */
  release(): void;
}

/** An apport report that kept no core, only text (its stack trace): what it holds, for a verdict without a debugger. */
export class ReportWithoutCore extends DumpError {
  constructor(
    readonly path: string,
    readonly facts: ApportFacts,
  ) {
    super(`${path} is an apport report without its core (apport kept ${facts.stackTrace ? "its stack trace" : "only its text"}): dumpdbg triage shows what it holds`);
  }
}

/** The dump ready for a debugger; see the module's comment. Throws DumpError in one line for what cannot be read. */
export async function prepareDump(path: string): Promise<PreparedDump> {
  const original = resolve(path);
  const { head, packing, declared, size, fd } = openAndRecognise(path);
  let unpacked: Unpacked | null = null;
  let apport: ApportFacts | null = null;
  try {
    const coredump = await coredumpFacts(path);
    if (packing) {
      unpacked = await unpackFile(path, fd, packing, size, declared);
    } else if (isApportReport(head)) {
      const read = await unpackApport(path, size);
      apport = apportFacts(read.report);
      if (!read.core) throw new ReportWithoutCore(path, apport);
      unpacked = read.core;
    }
    const form: Packing | "apport" | null = packing ?? (apport ? "apport" : null);
    return {
      path: unpacked?.path ?? original,
      source: {
        original,
        unpacked: unpacked && form ? { form, packedBytes: unpacked.packedBytes, plainBytes: unpacked.plainBytes, ms: unpacked.ms } : null,
        coredump,
        apport,
      },
      release: unpacked?.remove ?? (() => undefined),
    };
  } finally {
    closeQuietly(fd);
  }
}

/** Whether a file's first bytes say it is compressed or an apport report: a batch takes it as a dump. */
export function isPackedDump(path: string): boolean {
  let fd: number;
  try {
    fd = openRegularFile(path);
  } catch {
    return false;
  }
  const file = new DumpFile(fd);
  try {
    const head = file.read(0, Math.min(16, file.size), "the file's first bytes");
    return packingOf(head) !== null || isApportReport(head);
  } catch {
    return false;
  } finally {
    file.close();
  }
}

/**
 * The executable the dump's source names (systemd's `user.coredump.exe`, apport's ExecutablePath),
 * when it is a file here: the `--exe` default before the core's own notes.
 */
export function executableOfSource(source: DumpSource): string | null {
  const named = source.coredump?.attributes?.exe ?? source.apport?.executablePath ?? null;
  if (named === null || CONTROL_CHARACTER.test(named)) return null;
  try {
    return statSync(named).isFile() ? named : null;
  } catch {
    return null;
  }
}

/** What the source says, in lines for the user and the report: how it was unpacked, what systemd and apport recorded. */
export function sourceLines(source: DumpSource): string[] {
  const lines: string[] = [];
  const { unpacked, coredump, apport } = source;
  if (unpacked) {
    const what = unpacked.form === "apport" ? "the core of the apport report" : `${unpacked.form}-compressed`;
    lines.push(`${source.original}: ${what}, decompressed (${sizeText(unpacked.packedBytes)} to ${sizeText(unpacked.plainBytes)} in ${unpacked.ms} ms) into a private temporary file`);
  }
  const name = coredump?.name;
  const tags = coredump?.attributes;
  if (name || tags) {
    const parts = [
      tags?.exe ? `program ${tags.exe}` : name ? `program ${name.comm}` : null,
      `pid ${tags?.pid ?? name?.pid}`,
      tags?.uid ?? name?.uid ? `uid ${tags?.uid ?? name?.uid}` : null,
      tags?.signal !== null && tags?.signal !== undefined ? `signal ${tags.signal}` : null,
      tags?.timestampUs ?? name?.timestampUs ? `at ${new Date(Math.floor((tags?.timestampUs ?? name?.timestampUs ?? 0) / 1000)).toISOString()}` : null,
      tags?.hostname ? `on ${tags.hostname}` : null,
    ].filter((p): p is string => p !== null);
    lines.push(`systemd-coredump recorded ${parts.join(", ")}${tags ? "" : " (from its file name; no extended attributes read)"}`);
  }
  if (apport) {
    const parts = [
      apport.executablePath ? `program ${apport.executablePath}` : null,
      apport.package ? `package ${apport.package}` : null,
      apport.signal !== null ? `signal ${apport.signal}` : null,
      apport.commandLine ? `command line ${JSON.stringify(apport.commandLine.slice(0, 200))}` : null,
      apport.mappings ? `${apport.mappings.count} mappings in ProcMaps` : null,
      apport.date ? `on ${apport.date}` : null,
    ].filter((p): p is string => p !== null);
    lines.push(`apport recorded ${parts.join(", ")}`);
  }
  return lines;
}

function openAndRecognise(path: string): { head: Buffer; packing: Packing | null; declared: number | null; size: number; fd: number } {
  let fd: number;
  try {
    fd = openRegularFile(path);
  } catch (error) {
    if (error instanceof DumpFileError) throw new DumpError(`${error.message}, not a dump file`);
    throw new DumpError(`dump ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const file = new DumpFile(fd);
  try {
    const head = file.read(0, Math.min(64, file.size), "the file's first bytes");
    const packing = packingOf(head);
    const declared = packing ? declaredBytes(packing, file) : null;
    return { head, packing, declared, size: file.size, fd };
  } catch (error) {
    closeQuietly(fd);
    if (error instanceof DumpFileError) throw new DumpError(`${path} is compressed but its header cannot be read: ${error.message}`);
    throw error;
  }
}

/** systemd-coredump's facts, for a file with its name (its attributes are read only then: getfattr is a process). */
async function coredumpFacts(path: string): Promise<DumpSource["coredump"]> {
  const name = parseCoredumpName(basename(path));
  if (!name) return null;
  return { name, attributes: existsSync(path) ? await readCoredumpAttributes(path) : null };
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed.
  }
}
