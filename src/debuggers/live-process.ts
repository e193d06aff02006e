/**
 * A live process dumped for analysis (`--pid`): gcore, gdb's, attaches to it, writes its core into
 * a private folder of ours (mode 0700, the core 0600) and detaches at once, and the core is read
 * like any other (its origin: a dump taken on request). The process goes on running: it is never
 * killed, and never left stopped, whether gcore ends, fails or overruns, or dumpdbg is interrupted
 * (the CLI's signal handlers end what debuggers/live.ts tracks: gcore, then the process is seen
 * resumed, then the folder goes). The dump is removed with the folder unless it is kept.
 */
import { spawn } from "node:child_process";
import { chmodSync, closeSync, constants, copyFileSync, existsSync, linkSync, lstatSync, mkdtempSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { DumpError } from "./dump.js";
import { DebuggerError, DebuggerMissing } from "./errors.js";
import { live, type Killable } from "./live.js";
import { attachFailure, hasCapSysPtrace, ptraceRefusal, readProcessStatus, type ProcessStatus } from "./ptrace.js";

/** gcore could not attach: ptrace is not permitted here, for the reason the message gives. */
export class PtraceRefused extends DebuggerError {}

export interface LiveDump {
  pid: number;
  /** The process's name, as its status gives it. */
  name: string;
  /** The core gcore wrote, in our private folder. */
  core: string;
  bytes: number;
  /** What happened to the process that the report should say (it was left stopped and resumed). */
  notes: string[];
  /** Removes the private folder and the core in it; a kept copy stays. */
  remove(): void;
}

/** A big service's memory takes minutes to write; a gcore past this is stuck (a process in uninterruptible sleep). */
const GCORE_LIMIT_MS = 10 * 60 * 1000;
/** How long an interrupted gcore's attachment may take to go once it is killed, before the process is looked at anyway. */
const DETACH_WAIT_MS = 5_000;
/** What is kept of gcore's output, for its reason when it fails. */
const OUTPUT_TAIL = 4096;
const STATUS_BYTES = 64 * 1024;
/** Parents walked up from the process to see whether it descends from dumpdbg (Yama's scope 1 allows that). */
const MAX_ANCESTORS = 4096;

/** Refuses, in one line, a --keep-dump path that is taken or whose folder is not one: before anything is dumped. */
export function checkKeepPath(path: string): void {
  const full = resolve(path);
  if (lstatOrNull(full) !== null) throw new DumpError(`--keep-dump ${path} already exists; dumpdbg never overwrites a file: name a new one`);
  const folder = dirname(full);
  if (!statOrNull(folder)?.isDirectory()) throw new DumpError(`--keep-dump ${path}: ${folder} is not a folder`);
}

/**
 * Keeps the dump at `path` (a new file, never overwriting one: linked where the private folder and
 * `path` share a file system, copied otherwise) and returns its full path.
 */
export function keepDump(dump: LiveDump, path: string): string {
  const full = resolve(path);
  try {
    linkSync(dump.core, full);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new DumpError(`--keep-dump ${path} already exists; dumpdbg never overwrites a file: name a new one`);
    if (code !== "EXDEV" && code !== "EPERM") throw error;
    copyFileSync(dump.core, full, constants.COPYFILE_EXCL);
    chmodSync(full, 0o600);
  }
  return full;
}

/**
 * Dumps process `pid` with gcore into a private folder, and sees it running again after;
 * `dumping` is told its name once the checks pass and gcore starts. Throws
 * DumpError for a process that is not there to dump (exit 3), PtraceRefused where attaching is not
 * permitted (saying what to change), DebuggerMissing without gcore, DebuggerError when gcore fails.
 */
export async function dumpLiveProcess(pid: number, dumping: (name: string) => void = () => undefined): Promise<LiveDump> {
  const before = targetStatus(pid);
  const refusal = ptraceRefusal(pid, before, tracer(), ptraceScope(), descendsFromUs(before), before.tracerPid ? (processStatus(before.tracerPid)?.name ?? null) : null);
  if (refusal) throw new PtraceRefused(refusal);
  dumping(before.name);
  const wasStopped = before.state === "T";
  const folder = mkdtempSync(join(tmpdir(), "dumpdbg-pid-"));
  // The dump holds the process's memory (its secrets): the folder goes on every exit from now on.
  const removeFolder: Killable = { kill: () => rmSync(folder, { recursive: true, force: true }) };
  live.add(removeFolder);
  const remove = () => {
    live.delete(removeFolder);
    removeFolder.kill();
  };
  try {
    const output = await runGcore(pid, join(folder, "core"), wasStopped);
    const core = join(folder, `core.${pid}`);
    const notes = resumedIfStopped(pid, wasStopped) ? [`process ${pid} was left stopped after gcore detached and was resumed (SIGCONT)`] : [];
    if (!existsSync(core)) {
      const failure = attachFailure(pid, output);
      if (failure.gone) throw new DumpError(failure.message);
      throw /could not attach/.test(failure.message) ? new PtraceRefused(failure.message) : new DebuggerError(failure.message);
    }
    chmodSync(core, 0o600);
    return { pid, name: before.name, core, bytes: statSync(core).size, notes, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** The process's status; a DumpError for one that is not there to dump. */
function targetStatus(pid: number): ProcessStatus {
  if (pid === process.pid) throw new DumpError(`--pid ${pid} is dumpdbg itself`);
  const status = processStatus(pid);
  if (status === null) throw new DumpError(`no process ${pid} is running here (or it is in another PID namespace): check the pid with ps`);
  if (status.state === "Z") throw new DumpError(`process ${pid} (${status.name}) has exited and waits for its parent to collect it (a zombie): there is nothing left to dump`);
  if (!status.hasMemory) throw new DumpError(`process ${pid} (${status.name}) is a kernel thread: it has no memory of its own to dump`);
  return status;
}

/**
 * gcore, in its own process group and with a umask that keeps the core ours alone. Tracked in
 * debuggers/live.ts while it runs: an interrupted dumpdbg kills it, waits for the kernel to detach
 * it from the process, and resumes the process if it was left stopped. Resolves with the end of
 * what it printed.
 */
function runGcore(pid: number, prefix: string, wasStopped: boolean): Promise<string> {
  const mask = process.umask(0o077);
  let child;
  try {
    child = spawn("gcore", ["-o", prefix, String(pid)], { detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LC_ALL: "C.UTF-8" } });
  } finally {
    process.umask(mask);
  }
  const stopDumping: Killable = {
    kill: () => {
      if (child.pid !== undefined) signalQuietly(-child.pid, "SIGKILL");
      resumedIfStopped(pid, wasStopped);
    },
  };
  live.add(stopDumping);
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-OUTPUT_TAIL);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  return new Promise<string>((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      stopDumping.kill();
      reject(new DebuggerError(`gcore did not finish dumping process ${pid} within ${GCORE_LIMIT_MS / 60_000} minutes: it was stopped and the process left running`));
    }, GCORE_LIMIT_MS);
    child.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      live.delete(stopDumping);
      reject(error.code === "ENOENT" ? new DebuggerMissing("gcore was not found: --pid dumps a live process with gdb's gcore; install gdb") : new DebuggerError(`cannot start gcore: ${error.message}`));
    });
    child.once("close", () => {
      clearTimeout(timer);
      live.delete(stopDumping);
      resolvePromise(output);
    });
  });
}

/**
 * Sees the process out of gcore's hands: waits (a bounded, blocking wait, as it may run in a signal
 * handler about to exit) until no tracer is attached, then sends SIGCONT if it is stopped and was
 * not before. True when it had to.
 */
function resumedIfStopped(pid: number, wasStopped: boolean): boolean {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const until = Date.now() + DETACH_WAIT_MS;
  for (;;) {
    const status = processStatus(pid);
    if (status === null) return false;
    if (status.tracerPid === 0 || Date.now() > until) {
      if (wasStopped || status.state !== "T") return false;
      signalQuietly(pid, "SIGCONT");
      return true;
    }
    Atomics.wait(pause, 0, 0, 10);
  }
}

function processStatus(pid: number): ProcessStatus | null {
  const text = readBounded(`/proc/${pid}/status`);
  return text === null ? null : readProcessStatus(text);
}

function tracer(): { uid: number; capSysPtrace: boolean } {
  const capEff = /^CapEff:\s*([0-9a-f]+)$/m.exec(readBounded("/proc/self/status") ?? "")?.[1] ?? "0";
  return { uid: process.geteuid?.() ?? -1, capSysPtrace: hasCapSysPtrace(capEff) };
}

/** kernel.yama.ptrace_scope; null where Yama is not there. */
function ptraceScope(): number | null {
  const value = readBounded("/proc/sys/kernel/yama/ptrace_scope");
  const scope = value === null ? Number.NaN : Number.parseInt(value, 10);
  return Number.isInteger(scope) ? scope : null;
}

function descendsFromUs(status: ProcessStatus): boolean {
  let parent = status.ppid;
  for (let steps = 0; parent !== null && parent > 1 && steps < MAX_ANCESTORS; steps++) {
    if (parent === process.pid) return true;
    parent = processStatus(parent)?.ppid ?? null;
  }
  return false;
}

/** A /proc file's text, at most STATUS_BYTES of it; null when it cannot be read (the process is gone). */
function readBounded(path: string): string | null {
  let fd = -1;
  try {
    fd = openSync(path, "r");
    const buffer = Buffer.alloc(STATUS_BYTES);
    let length = 0;
    for (let read = 1; read > 0 && length < STATUS_BYTES; length += read) read = readSync(fd, buffer, length, STATUS_BYTES - length, null);
    return buffer.subarray(0, length).toString("utf8");
  } catch {
    return null;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function statOrNull(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
