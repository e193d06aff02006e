/**
 * A compressed dump, or the core inside an apport report, decompressed as a stream into a private
 * temporary file (mode 0600, in a private folder) that the debugger is given; the user's file and
 * its folder are only read. The output is bounded: by the size the format's header declares, by
 * the size the core's own ELF headers describe, by DUMPDBG_UNPACK_LIMIT and by the free space of the
 * temporary folder; a file that decompresses past its own bounds (a damaged file, a compression
 * bomb) is refused in one line as bad input, a temporary folder without room for it (full, a quota,
 * read-only, not writable) is the machine's fault (StorageError, naming the folder), and either way
 * what was written is removed.
 *
 * zstd, lz4, xz and gzip are the system's decompressors (Debian's zstd, lz4, xz-utils and gzip;
 * Node's own zlib for gzip where the tool is missing), run as child processes reading the opened
 * file on their stdin: they are the formats' reference implementations, native and fast (zstd and
 * lz4 decompress at several GB/s, far beyond what a JavaScript port does), they read every frame
 * variant their tools write (lz4's legacy frames, concatenated and multi-block xz streams), and
 * nothing of them loads into this process.
 * They write the plain file themselves, through util-linux's prlimit: the kernel stops them at the
 * smallest bound known before the first byte (RLIMIT_FSIZE, SIGXFSZ), and the core's own extent is
 * checked on the result. Passing every byte through this process instead costs about 5 ms a MiB
 * (a 78 MiB core: 190 ms for zstd alone, 630 ms through a pipe, 700 ms through zlib); without
 * prlimit, it is done so.
 */
import { spawn } from "node:child_process";
import { closeSync, constants, createReadStream, createWriteStream, fstatSync, openSync, readSync } from "node:fs";
import { statfs } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { Transform, type Readable, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";

import { ApportReader, type ApportReport } from "./dumpfile/apport.js";
import { coreExtent } from "./dumpfile/elf.js";
import { DumpFileError } from "./dumpfile/file.js";
import type { Packing } from "./dumpfile/packed.js";
import { DumpError } from "./dump.js";
import { canRun } from "./backends.js";
import { DebuggerError } from "./errors.js";
import { live } from "./live.js";
import { privateFolder, TEMP_ELSEWHERE, type PrivateFolder } from "./private-folder.js";
import { asStorageError, StorageError } from "../storage-errors.js";

/** The default most a dump may decompress to; DUMPDBG_UNPACK_LIMIT changes it. */
const DEFAULT_LIMIT_BYTES = 64 * 2 ** 30;
/** Room left free on the temporary folder's filesystem for everything else. */
const SPACE_RESERVE_BYTES = 64 * 2 ** 20;
/** The output's first bytes, kept to read the core's ELF headers from. */
const HEAD_BYTES = 256 * 1024;
/** Room past a core's described extent, for whatever a core writer appends that its headers do not place. */
const EXTENT_SLACK_BYTES = 1024 * 1024;
/** A dump this big shows a progress line on a terminal. */
const PROGRESS_FROM_BYTES = 64 * 2 ** 20;
const PROGRESS_EVERY_MS = 250;
/** One line of an apport report: its core's lines are a megabyte of data's base64. */
const MAX_LINE_BYTES = 64 * 2 ** 20;
const MAX_STDERR_CHARS = 400;
/** What a temporary folder says when the decompressed copy cannot be written there. */
const WRITE_REFUSALS = new Set(["ENOSPC", "EDQUOT", "EFBIG", "EROFS", "EACCES", "EPERM"]);

/** Which Debian package holds each system decompressor. */
const DECOMPRESSORS: Record<Packing, { binary: string; args: string[]; packageName: string }> = {
  zstd: { binary: "zstd", args: ["-d", "-c", "-q", "--no-progress"], packageName: "zstd" },
  // Where it is installed; Node's zlib otherwise.
  gzip: { binary: "gzip", args: ["-d", "-c", "-q"], packageName: "gzip" },
  lz4: { binary: "lz4", args: ["-d", "-c", "-q"], packageName: "lz4" },
  // -T0: a stream written in blocks (xz -T0's) is decompressed on every core (a 78 MiB core: 200 ms
  // → 120 ms on two); one block stays on one thread, and xz 5.2, which decompresses on one, takes -T0.
  xz: { binary: "xz", args: ["-d", "-c", "-q", "-T0"], packageName: "xz-utils" },
};

/** The system decompressors, for `dumpdbg doctor`: name, binary and the package that installs it. */
export const SYSTEM_DECOMPRESSORS = Object.entries(DECOMPRESSORS).filter(([format]) => format !== "gzip").map(([format, d]) => ({ format, binary: d.binary, packageName: d.packageName }));

/** A decompressor the dump needs is not installed: exit 4, like a missing debugger, with the package to install. */
export class DecompressorMissing extends DebuggerError {}

/** A dump decompressed: the file the debugger reads, and how it was made. */
export interface Unpacked {
  /** The plain dump, in a private folder. */
  path: string;
  packedBytes: number;
  plainBytes: number;
  ms: number;
  /** Removes the plain dump and its folder. */
  remove(): void;
}

/** Decompresses `path` (opened as `fd`, compressed as `packing`), refusing more than `declared` bytes when the format says. */
export async function unpackFile(path: string, fd: number, packing: Packing, packedBytes: number, declared: number | null): Promise<Unpacked> {
  if (canRun(prlimit()) && (packing !== "gzip" || canRun(decompressorOf("gzip")))) return unpackDirect(path, fd, packing, packedBytes, declared);
  return unpacking(path, packedBytes, declared, packing, async (sink) => {
    if (packing === "gzip") {
      await pipeline(createReadStream("", { fd, autoClose: false }), createGunzip(), ...sink);
      return;
    }
    await throughDecompressor(path, fd, packing, sink);
  });
}

/**
 * The core an apport report carries, decompressed; the report's text fields are read on the way
 * (they come before the core, as apport writes them). `core` is null when the report has none.
 */
export async function unpackApport(path: string, packedBytes: number): Promise<{ report: ApportReport; core: Unpacked | null }> {
  const reader = new ApportReader();
  const lines = boundedLines(createReadStream(path));
  const read = async (line: string) => {
    try {
      return reader.line(line);
    } catch (error) {
      if (error instanceof DumpFileError) throw new DumpError(`${path} is not a readable apport report: ${error.message}`);
      throw error;
    }
  };
  // The text fields, up to the core's first line.
  let first: Buffer | null = null;
  for (;;) {
    const next = await lines.next();
    if (next.done) break;
    first = await read(next.value);
    if (first) break;
  }
  if (!first) {
    await lines.return(undefined);
    return { report: reader.report(), core: null };
  }
  const start: Buffer = first;
  const core = await unpacking(path, packedBytes, null, "gzip", async (sink) => {
    async function* coreBytes(): AsyncGenerator<Buffer> {
      yield start;
      for (;;) {
        const next = await lines.next();
        if (next.done) return;
        const bytes = await read(next.value);
        // The core's lines end at the next field.
        if (!next.value.startsWith(" ")) return;
        if (bytes) yield bytes;
      }
    }
    await pipeline(coreBytes(), createGunzip(), ...sink);
  });
  await lines.return(undefined);
  return { report: reader.report(), core };
}

type Sink = [Transform, NodeJS.WritableStream];

/** Runs one decompression into a fresh private file, bounded, with progress; cleans up on any failure. */
async function unpacking(path: string, packedBytes: number, declared: number | null, packing: Packing, run: (sink: Sink) => Promise<void>): Promise<Unpacked> {
  const started = performance.now();
  const folder = await privateFolder("dumpdbg-dump-");
  try {
    const target = join(folder.path, plainName(path));
    const bound = new OutputBound(path, await limits(folder, declared), packedBytes);
    try {
      await run([bound, createWriteStream(target, { flags: "wx", mode: 0o600 })]);
    } catch (error) {
      throw bound.failure ?? unpackError(path, packing, error);
    } finally {
      bound.endProgress();
    }
    if (bound.failure) throw bound.failure;
    if (bound.bytes === 0) throw new DumpError(`${path} decompresses to nothing, not a crash dump`);
    return { path: target, packedBytes, plainBytes: bound.bytes, ms: Math.round(performance.now() - started), remove: folder.remove };
  } catch (error) {
    folder.remove();
    throw error;
  }
}

interface Limit {
  bytes: number;
  /** Why this is the bound, said when it is passed. */
  why: string;
  /** The temporary folder's free space: passing it is the machine's fault, not the dump's. */
  space?: { folder: string; free: number };
}

/** The bounds known before the first byte: the declared size, the configured limit, the free space. */
async function limits(folder: PrivateFolder, declared: number | null): Promise<Limit[]> {
  const configured = configuredLimit();
  const found: Limit[] = [{ bytes: configured, why: `the limit of ${sizeText(configured)} (DUMPDBG_UNPACK_LIMIT)` }];
  if (declared !== null) found.push({ bytes: declared, why: `the ${sizeText(declared)} its header declares` });
  try {
    const fs = await statfs(folder.path);
    const free = Number(fs.bavail) * Number(fs.bsize);
    const usable = Math.max(0, free - SPACE_RESERVE_BYTES);
    found.push({ bytes: usable, why: `the ${sizeText(usable)} free in ${tmpdir()}`, space: { folder: tmpdir(), free } });
  } catch {
    // A filesystem that will not say its free space still fails the write when full.
  }
  return found;
}

/** DUMPDBG_UNPACK_LIMIT: bytes, or a number with K, M, G or T (powers of 1024). */
function configuredLimit(): number {
  const text = process.env.DUMPDBG_UNPACK_LIMIT?.trim();
  if (!text) return DEFAULT_LIMIT_BYTES;
  const match = /^(\d{1,15})\s*([KMGT]?)i?B?$/i.exec(text);
  if (!match) throw new DumpError(`DUMPDBG_UNPACK_LIMIT must be a size such as 8G or 500M, not ${JSON.stringify(text.slice(0, 40))}`);
  return Number(match[1]) * 1024 ** " KMGT".indexOf((match[2] || " ").toUpperCase());
}

/**
 * Counts what passes, keeps its first bytes to read the core's extent from, fails the stream at the
 * first byte past the smallest bound, and shows progress on a terminal.
 */
class OutputBound extends Transform {
  bytes = 0;
  failure: DumpError | StorageError | null = null;
  private head: Buffer[] = [];
  private headBytes = 0;
  private extentRead = false;
  private readonly progress: Progress;

  constructor(
    private readonly path: string,
    private readonly bounds: Limit[],
    packedBytes: number,
  ) {
    super();
    this.progress = new Progress(path, packedBytes);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (!this.extentRead) this.keepHead(chunk);
    // The smallest bound passed is the one passed first: a bomb past its declared size stays a bomb on a small disk.
    const passed = passedBound(this.bounds, this.bytes);
    if (passed) {
      this.failure = boundFailure(this.path, passed);
      done(this.failure);
      return;
    }
    this.progress.show(this.bytes);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (!this.extentRead) this.readExtent();
    done();
  }

  endProgress(): void {
    this.progress.end();
  }

  private keepHead(chunk: Buffer): void {
    this.head.push(chunk);
    this.headBytes += chunk.length;
    if (this.headBytes >= HEAD_BYTES) this.readExtent();
  }

  /** A core's program headers say where its last segment ends: nothing past it belongs to the core. */
  private readExtent(): void {
    this.extentRead = true;
    const head = Buffer.concat(this.head);
    this.head = [];
    const extent = extentOf(head);
    if (extent !== null) this.bounds.push(extentBound(extent));
  }
}

/** A system decompressor reading the opened file on its stdin, its output through the sink. */
async function throughDecompressor(path: string, fd: number, packing: Exclude<Packing, "gzip">, sink: Sink): Promise<void> {
  const run = startDecompressor(path, fd, "pipe", packing, []);
  try {
    await pipeline(run.child.stdout as Readable, ...sink);
  } catch (error) {
    run.child.kill("SIGKILL");
    const ended = await run.ended;
    if (ended.error) throw missingOr(path, packing, run.binary, ended.error);
    throw error;
  }
  const ended = await run.ended;
  if (ended.error) throw missingOr(path, packing, run.binary, ended.error);
  if (ended.code !== 0) throw new DumpError(`${path} is ${packing}-compressed but cannot be decompressed (${run.binary}: ${ended.said})`);
}

/**
 * A system decompressor writing the plain file itself (see the head of this file): the kernel
 * holds it to the smallest bound known before it starts, SIGXFSZ past it; the core's extent, read
 * from the written file's head, is checked once it is done.
 */
async function unpackDirect(path: string, fd: number, packing: Packing, packedBytes: number, declared: number | null): Promise<Unpacked> {
  const started = performance.now();
  const folder = await privateFolder("dumpdbg-dump-");
  try {
    const target = join(folder.path, plainName(path));
    const bounds = await limits(folder, declared);
    const allowed = Math.min(...bounds.map((b) => b.bytes));
    let out: number;
    try {
      out = openSync(target, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (error) {
      throw unpackError(path, packing, error);
    }
    const progress = new Progress(path, packedBytes);
    const poll = setInterval(() => progress.show(fstatSync(out).size), PROGRESS_EVERY_MS);
    let ended: Ended;
    let plainBytes: number;
    let head: Buffer;
    try {
      // zstd and lz4 leave runs of zeros as holes, as they do writing a file they open themselves.
      const run = startDecompressor(path, fd, out, packing, packing === "zstd" || packing === "lz4" ? ["--sparse"] : [], [`--fsize=${allowed}:unlimited`]);
      ended = await run.ended;
      if (ended.error) throw missingOr(path, packing, run.binary, ended.error);
      plainBytes = fstatSync(out).size;
      head = Buffer.alloc(Math.min(HEAD_BYTES, plainBytes));
      readSync(out, head, 0, head.length, 0);
      if (ended.signal !== "SIGXFSZ" && ended.code !== 0) {
        const refused = refusedWrite(ended.said);
        throw refused ? unpackError(path, packing, refused) : new DumpError(`${path} is ${packing}-compressed but cannot be decompressed (${run.binary}: ${ended.said})`);
      }
    } finally {
      clearInterval(poll);
      progress.end();
      closeSync(out);
    }
    const extent = extentOf(head);
    if (extent !== null) bounds.push(extentBound(extent));
    // Stopped at the bound: it had more to write than the bound allows.
    const passed = passedBound(bounds, ended.signal === "SIGXFSZ" ? allowed + 1 : plainBytes);
    if (passed) throw boundFailure(path, passed);
    if (plainBytes === 0) throw new DumpError(`${path} decompresses to nothing, not a crash dump`);
    return { path: target, packedBytes, plainBytes, ms: Math.round(performance.now() - started), remove: folder.remove };
  } catch (error) {
    folder.remove();
    throw error;
  }
}

/** util-linux's prlimit, which runs a command with the resource limits it is given (DUMPDBG_PRLIMIT names another). */
function prlimit(): string {
  return process.env.DUMPDBG_PRLIMIT || "prlimit";
}

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  error: NodeJS.ErrnoException | null;
  /** The first line the decompressor wrote on stderr, or its exit status. */
  said: string;
}

/**
 * Starts the format's decompressor on the opened file, its output to `stdout` (a pipe, or the plain
 * file's descriptor), ended by the handlers that end the debuggers; `limits` runs it under prlimit.
 */
function startDecompressor(path: string, fd: number, stdout: "pipe" | number, packing: Packing, extra: string[], limits: string[] = []): { child: ReturnType<typeof spawn>; binary: string; ended: Promise<Ended> } {
  const tool = DECOMPRESSORS[packing];
  const binary = decompressorOf(packing);
  // prlimit would start, then fail to run a decompressor that is not there.
  if (limits.length > 0 && !canRun(binary)) throw missingOr(path, packing, binary, Object.assign(new Error(binary), { code: "ENOENT" }));
  const [file, args] = limits.length > 0 ? [prlimit(), [...limits, "--", binary, ...tool.args, ...extra]] : [binary, [...tool.args, ...extra]];
  const child = spawn(file, args, { stdio: [fd, stdout, "pipe"] });
  const entry = { kill: () => child.kill("SIGKILL") };
  live.add(entry);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    if (stderr.length < MAX_STDERR_CHARS) stderr += chunk.toString("utf8");
  });
  const ended = new Promise<Ended>((resolve) => {
    const said = (code: number | null, signal: NodeJS.Signals | null) => (stderr.split("\n").map((l) => l.trim()).find(Boolean) ?? (signal ? `killed by ${signal}` : `exit status ${code}`)).slice(0, 200);
    child.once("error", (error: NodeJS.ErrnoException) => resolve({ code: null, signal: null, error, said: error.message }));
    child.once("close", (code, signal) => resolve({ code, signal, error: null, said: said(code, signal) }));
  }).finally(() => live.delete(entry));
  return { child, binary, ended };
}

/** The decompressor's own words for a write the machine refused, as the error its write had. */
function refusedWrite(said: string): NodeJS.ErrnoException | null {
  const code = Object.entries(REFUSAL_TEXTS).find(([, text]) => said.includes(text))?.[0];
  return code ? Object.assign(new Error(said), { code }) : null;
}

/** strerror's text of each refusal, as a decompressor prints it. */
const REFUSAL_TEXTS: Record<string, string> = {
  ENOSPC: "No space left on device",
  EDQUOT: "Disk quota exceeded",
  EFBIG: "File too large",
  EROFS: "Read-only file system",
  EACCES: "Permission denied",
};

/** The smallest bound `bytes` passes: the one passed first, so a bomb past its declared size stays a bomb on a small disk. */
function passedBound(bounds: Limit[], bytes: number): Limit | undefined {
  return bounds.filter((b) => bytes > b.bytes).sort((a, b) => a.bytes - b.bytes)[0];
}

/** What passing a bound means: the temporary folder's free space is the machine's; any other, the dump's. */
function boundFailure(path: string, passed: Limit): DumpError | StorageError {
  return passed.space
    ? new StorageError(
        passed.space.folder,
        `no space left on device for the decompressed dump (${sizeText(passed.space.free)} free, ${sizeText(SPACE_RESERVE_BYTES)} of it kept for everything else)`,
        `free some space there ${TEMP_ELSEWHERE}; ${path} was not unpacked`,
      )
    : new DumpError(`${path} decompresses to more than ${passed.why}: a damaged file or a compression bomb; it was not unpacked`);
}

function extentBound(extent: number): Limit {
  return { bytes: extent + EXTENT_SLACK_BYTES, why: `the ${sizeText(extent)} its ELF headers describe` };
}

/** A core's extent from its first bytes; null when they are not a core's headers (the dump reader reports on the whole file). */
function extentOf(head: Buffer): number | null {
  try {
    return coreExtent(head);
  } catch {
    return null;
  }
}

/** The line that shows a big dump's decompression on a terminal. */
class Progress {
  private last = 0;
  private shown = false;

  constructor(
    private readonly path: string,
    private readonly packedBytes: number,
  ) {}

  show(bytes: number): void {
    if (!process.stderr.isTTY || (this.packedBytes < PROGRESS_FROM_BYTES / 8 && bytes < PROGRESS_FROM_BYTES)) return;
    const now = performance.now();
    if (now - this.last < PROGRESS_EVERY_MS - 10) return;
    this.last = now;
    this.shown = true;
    process.stderr.write(`\r\u001b[Kdumpdbg: decompressing ${basename(this.path)}: ${sizeText(bytes)}`);
  }

  end(): void {
    if (this.shown) process.stderr.write("\r\u001b[K");
    this.shown = false;
  }
}

/** The format's decompressor: DUMPDBG_ZSTD (…_LZ4, _XZ, _GZIP) names another. */
function decompressorOf(packing: Packing): string {
  const { binary } = DECOMPRESSORS[packing];
  return process.env[`DUMPDBG_${binary.toUpperCase()}`] || binary;
}

function missingOr(path: string, packing: Packing, binary: string, error: NodeJS.ErrnoException): Error {
  if (error.code !== "ENOENT" && error.code !== "EACCES") return error;
  const { packageName } = DECOMPRESSORS[packing];
  return new DecompressorMissing(`${path} is ${packing}-compressed and ${binary} is not installed: install Debian's ${packageName} package (apt-get install ${packageName}), or decompress it yourself`);
}

/** A decompressor's failure in one line: the machine refused the temporary file, or the data is damaged or cut short. */
function unpackError(path: string, packing: Packing, error: unknown): Error {
  if (error instanceof DumpError || error instanceof DebuggerError) return error;
  // Only writing is refused this way: the dump itself is already open and read through its descriptor.
  if (WRITE_REFUSALS.has((error as NodeJS.ErrnoException).code ?? "")) return asStorageError(error, tmpdir(), { elsewhere: `${TEMP_ELSEWHERE}; ${path} was not unpacked` }) as Error;
  const why = (error as Error).message?.split("\n")[0] ?? String(error);
  return new DumpError(`${path} is ${packing}-compressed but cannot be decompressed (${why.slice(0, 200)}): damaged or cut short`);
}

/** The plain file's name: the original's without its compression suffix, so a debugger's messages still name it. */
function plainName(path: string): string {
  const name = basename(path).replace(/\.(zst|zstd|lz4|xz|gz|crash)$/i, "");
  return name === "" || name.startsWith(".") ? "core" : name;
}

/** Lines of a stream without their newline; a line longer than the bound is an error, not an allocation. */
async function* boundedLines(stream: Readable): AsyncGenerator<string, void, undefined> {
  const text = new StringDecoder("utf8");
  let rest = "";
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      rest += text.write(chunk);
      let at: number;
      while ((at = rest.indexOf("\n")) >= 0) {
        yield rest.slice(0, at);
        rest = rest.slice(at + 1);
      }
      if (rest.length > MAX_LINE_BYTES) throw new DumpError(`a line of the report is longer than ${sizeText(MAX_LINE_BYTES)}, not an apport report dumpdbg reads`);
    }
    rest += text.end();
    if (rest !== "") yield rest;
  } finally {
    stream.destroy();
  }
}

/** A size as people read it: 1.5 GiB, 640 KiB, 300 bytes. */
export function sizeText(bytes: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
