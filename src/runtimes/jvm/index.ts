/**
 * A HotSpot JVM in a core: recognised by its libjvm.so, read with the JDK that wrote the core (the
 * same build, by build id), through the Serviceability Agent: `jhsdb jstack` for the threads, a
 * `jhsdb clhsdb` session for the classes' source files and the heap. What could not be read
 * is said with what it would have shown; the caller keeps the native frames then.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import type { Module } from "../../debuggers/model.js";
import { sourceFileOf } from "./class-file.js";
import { openClhsdb, type Clhsdb } from "./clhsdb.js";
import { jstackCommand, runJstack, type JstackRun } from "./jhsdb.js";
import { parseHeap, type JavaHeap } from "./heap.js";
import { readHsErr, type HsErr } from "./hs-err.js";
import { javaFrames, parseJstack, type JstackFrame, type JstackThread } from "./jstack.js";
import { javaLockCycles, readJavaLocks, type JavaLockCycle, type JavaLocks } from "./locks.js";

export { parseHeap, type HeapSpace, type HistogramRow, type JavaHeap } from "./heap.js";
export { javaFrames, parseJstack, type Jstack, type JstackFrame, type JstackThread } from "./jstack.js";
export { parseHsErr, readHsErr, type HsErr, type HsErrFrame, type HsErrFrameKind, type HsErrSignal, type HsErrThread } from "./hs-err.js";
export { javaLockCycles, readJavaLocks, type JavaLockCycle, type JavaLocks, type JavaThreadLocks, type LockRef, type LockWait, type ReportedWait, type ThreadRef, type WaitKind } from "./locks.js";

/** A core of a JVM and what is needed to read it. */
export interface JvmCore {
  core: string;
  /** The `java` launcher the process ran (`--exe`, else the core's notes); null when unknown. */
  java: string | null;
  /** The VM's library as the core maps it, with the build id its copy in the core holds. */
  libjvm: Module;
  /** Reads a local file's build id. */
  buildIdOf: (file: string) => string | null;
  /** The crashed process's id, as the core gives it. */
  pid: number | null;
  /** The JVM's error log of the crash (`hs_err_pid<pid>.log`), named or found; null where there is none. */
  hsErr: string | null;
}

export interface JvmReading {
  /** The VM's version as the SA printed it (`17.0.15+6-Debian-1deb12u1`). */
  version: string | null;
  /** What read the frames, with the VM's version: `jhsdb (JVM 17.0.15+6-Debian-1deb12u1)`. */
  source: string;
  threads: JstackThread[];
  /** The heap's spaces and what holds it, read where the VM ran out of memory; null where not read. */
  heap: JavaHeap | null;
  /** Each Java thread's state and locks, and the cycles of threads waiting for each other's (a Java deadlock). */
  locks: JavaLocks;
  cycles: JavaLockCycle[];
  /** The command whose answer holds the threads, their frames and locks (`jhsdb jstack --core … --exe …`), to cite it; null where the frames came from the error log. */
  threadsCommand: string | null;
  /** The JVM's own error log of the crash, where it was found or named. */
  errorLog: { path: string; log: HsErr } | null;
}

export interface JvmRead {
  /** Null when the JVM's side could not be read; `notes` say why. */
  reading: JvmReading | null;
  notes: string[];
  /** The commands run, for the report's record. */
  commands: string[];
}

/** The HotSpot VM's library among a core's modules, or null: this is no JVM's core. */
export function hotspotOf(modules: Module[]): Module | null {
  return modules.find((module) => path.basename(module.path) === "libjvm.so") ?? null;
}

const WOULD_SHOW = "the Java methods and lines the crashing thread ran, and the program's own among them as the culprit; the native frames are shown instead";

/** Classes whose source file names are read, at most: the crashing thread's and the lock cycle's, a few frames each. */
const MAX_CLASSES = 24;
/** A class file the SA rebuilds is kilobytes; one larger than this is not read. */
const MAX_CLASS_BYTES = 8 * 1024 * 1024;

/**
 * The JVM's threads, their Java frames (with their lines) and locks, from the core, through the SA's
 * thread dump (`jhsdb jstack`: threads, frames, lines, monitors, the SA's deadlock detection) and a
 * `jhsdb clhsdb` session: `dumpclass` for the source file names of the classes whose frames the
 * report shows (`lwp`'s, the crashing thread's), the heap where it ran out. Where jhsdb cannot read
 * them, the crashing thread's Java frames come from the VM's error log.
 */
export async function readJvm(jvm: JvmCore, lwp: number | null, wanted: Wanted = { heap: false }): Promise<JvmRead> {
  const started = startJvm(jvm, wanted.record);
  try {
    return await started.finish(lwp, wanted.heap);
  } finally {
    started.close();
  }
}

/** A JVM's reading begun; `finish` completes it once the crashing thread, and whether its heap matters, are known. */
export interface JvmStart {
  finish(lwp: number | null, heap: boolean): Promise<JvmRead>;
  /** Ends jhsdb, read or not. */
  close(): void;
}

/**
 * Starts reading a JVM's core: jhsdb opens it and is asked for the threads and the VM's version at
 * once, so that the JVM it runs starts up, and reads the core, while the debugger reads the native side.
 */
export function startJvm(jvm: JvmCore, record?: Wanted["record"]): JvmStart {
  const notes: string[] = [];
  const commands: string[] = [];
  const log = errorLogOf(jvm, notes);
  const begun = beginJhsdb(jvm, record, notes, commands);
  return {
    async finish(lwp, heap) {
      // The log's own notes (another process's, cut short) come first, as they are read first.
      const found = await log;
      const read = "failure" in begun ? { reading: null, notes: [...notes, begun.failure], commands } : await finishJhsdb(begun, lwp, heap, notes, commands);
      if (read.reading) {
        if (found) read.notes.push(`the JVM's own error log was read with the core: ${found.path} records ${logSays(found.log)}`);
        return { ...read, reading: { ...read.reading, errorLog: found } };
      }
      const fromLog = found ? readingOfLog(found) : null;
      if (!fromLog || !found) return read;
      read.notes.push(`the crashing thread's Java frames were read from the JVM's error log instead (${found.path}): it names their methods and bytecode indexes, not their lines`);
      return { ...read, reading: fromLog };
    },
    close() {
      if (!("failure" in begun)) begun.sa.close();
    },
  };
}

interface Wanted {
  heap: boolean;
  /** Keeps each of jhsdb's answers as evidence, by the command that asked it. */
  record?: (command: string, output: string, ms: number) => void;
}

/** The JVM's error log of the core's process: the one named, else one beside the core or in the current folder. */
async function errorLogOf(jvm: JvmCore, notes: string[]): Promise<{ path: string; log: HsErr } | null> {
  if (jvm.hsErr === null) return null;
  const log = await readHsErr(jvm.hsErr);
  if (!log) {
    notes.push(`the JVM's error log ${jvm.hsErr} could not be read`);
    return null;
  }
  if (jvm.pid !== null && log.pid !== null && log.pid !== jvm.pid) {
    notes.push(`${jvm.hsErr} is the error log of another process (pid ${log.pid}; the core's is ${jvm.pid}): it was not read`);
    return null;
  }
  if (log.truncated) notes.push(`the JVM's error log ${jvm.hsErr} is cut short or longer than what is read: what it lacks is unknown`);
  return { path: jvm.hsErr, log };
}

/** "SIGSEGV at 0x8, in Unsafe_GetLong (libjvm.so)", "fatal error: OutOfMemory encountered: Java heap space". */
export function logSays(log: HsErr): string {
  const frame = log.problematicFrame;
  const where = frame?.function ? `, in ${frame.function}${frame.module ? ` (${frame.module})` : ""}` : "";
  if (log.signal) return `${log.signal.name}${log.signal.code ? ` ${log.signal.code}` : ""}${log.signal.address ? ` at ${log.signal.address}` : ""}${where}`;
  return `${log.errorMessage ?? log.error ?? "an error of the VM's own"}${where}`;
}

/** A reading from the error log alone: the crashing thread's Java frames as the VM walked them when it died. */
function readingOfLog({ path: file, log }: { path: string; log: HsErr }): JvmReading | null {
  const java = (log.javaFrames.length > 0 ? log.javaFrames : log.nativeFrames).filter((frame) => frame.language === "java");
  if (java.length === 0) return null;
  const frames: JstackFrame[] = java.map((frame) => ({ pc: frame.pc, function: frame.function, parameters: frame.signature, line: null, language: "java", mode: frame.kind === "java-compiled" ? "Compiled frame" : "Interpreted frame" }));
  const lwp = log.currentThread?.lwp ?? log.tid;
  return {
    version: log.version,
    source: log.version === null ? path.basename(file) : `${path.basename(file)} (JVM ${log.version})`,
    threads: [{ lwp, name: log.currentThread?.name ?? null, frames }],
    heap: null,
    locks: { threads: [], reported: null },
    cycles: [],
    threadsCommand: null,
    errorLog: { path: file, log },
  };
}

/** The error log HotSpot writes by default, `hs_err_pid<pid>.log`, beside the core or in the current folder; null where none is. */
export function errorLogBeside(core: string, pid: number | null): string | null {
  if (pid === null) return null;
  const name = `hs_err_pid${pid}.log`;
  return [path.join(path.dirname(core), name), path.resolve(name)].find((file) => existsSync(file)) ?? null;
}

/**
 * jhsdb started: its thread dump (`jhsdb jstack`, which reads no more than the threads) and a clhsdb
 * session for what the dump lacks (the classes' source files, the heap), both attaching to the core at
 * once; or why it was not run.
 */
type Begun = { sa: Clhsdb; threads: Promise<JstackRun>; threadsCommand: string } | { failure: string };

function beginJhsdb(jvm: JvmCore, record: Wanted["record"], notes: string[], commands: string[]): Begun {
  const build = jvm.buildIdOf(jvm.libjvm.path);
  const failure = (why: string): Begun => ({ failure: why });
  if (build === null) return failure(`the JDK that wrote the core is not on this machine (no ${jvm.libjvm.path}): jhsdb needs that build to read the Java frames, which would show ${WOULD_SHOW}`);
  if (jvm.libjvm.buildId !== null && build !== jvm.libjvm.buildId) {
    return failure(`${jvm.libjvm.path} here is another build (build id ${build}) than the core's (${jvm.libjvm.buildId}): jhsdb reads a core only with the JDK build that wrote it, which would show ${WOULD_SHOW}`);
  }
  if (jvm.libjvm.buildId === null) notes.push(`the core holds no build id of ${jvm.libjvm.path}: the JDK here was taken as the one that wrote it`);
  if (jvm.java === null) return failure(`the java launcher the JVM ran is not known (give it with --exe): jhsdb needs it to read the Java frames, which would show ${WOULD_SHOW}`);
  // `DUMPDBG_JHSDB` names another jhsdb, as `DUMPDBG_GDB` another gdb; by default the JDK's whose libjvm.so the core maps.
  const jhsdb = process.env.DUMPDBG_JHSDB || path.join(path.dirname(jvm.libjvm.path), "..", "..", "bin", "jhsdb");
  const started = performance.now();
  const threads = runJstack(jhsdb, jvm.core, jvm.java).then((run) => {
    if (run.ok) record?.(run.command, run.output, Math.round(performance.now() - started));
    return run;
  });
  commands.push(jstackCommand(jvm.core, jvm.java));
  const opened = openClhsdb(jhsdb, jvm.core, jvm.java);
  // Each question is recorded by the command that asked it, and its answer kept as evidence where the caller keeps it.
  const sa: Clhsdb = {
    ...opened,
    async ask(question, timeoutMs) {
      const asked = performance.now();
      const answer = await opened.ask(question, timeoutMs);
      record?.(`${opened.command}: ${question.replace(/ \/\S*$/, "")}`, answer, Math.round(performance.now() - asked));
      return answer;
    },
  };
  return { sa, threads, threadsCommand: jstackCommand(jvm.core, jvm.java) };
}

async function finishJhsdb(begun: Exclude<Begun, { failure: string }>, lwp: number | null, heapWanted: boolean, notes: string[], commands: string[]): Promise<JvmRead> {
  const { sa } = begun;
  const asked = (command: string) => commands.push(`${sa.command}: ${command}`);
  const run = await begun.threads;
  if (!run.ok) return { reading: null, notes: [...notes, `the JVM's Java frames were not read: ${run.command}: ${run.error}; the JDK's jhsdb would show ${WOULD_SHOW}`], commands };
  const read = parseJstack(run.output);
  if (read.threads.length === 0) return { reading: null, notes: [...notes, `the JVM's Java frames were not read: ${run.command} printed no Java thread; it would show ${WOULD_SHOW}`], commands };
  const locks = readJavaLocks(run.output);
  const cycles = javaLockCycles(locks);
  // The source files of the frames a report shows: the crashing thread's, where each deadlocked
  // thread waits, or (a dump of a running process) every thread's. What the SA cannot rebuild names none.
  const crashing = read.threads.find((thread) => thread.lwp === lwp);
  const shown = crashing ? [...javaFrames(crashing), ...cycles.flatMap((cycle) => cycle.waits.flatMap((wait) => (wait.frame ? [wait.frame] : [])))] : read.threads.flatMap(javaFrames);
  const files = await sourceFiles(sa, shown, asked).catch((error: Error) => {
    notes.push(`the Java frames' source files were not read: ${sa.command}: ${error.message}`);
    return new Map<string, string>();
  });
  const withFile = (frame: JstackFrame): JstackFrame => (frame.language === "java" && frame.function ? { ...frame, file: files.get(classOf(frame.function)) ?? null } : frame);
  const threads = read.threads.map((thread) => ({ ...thread, frames: thread.frames.map(withFile) }));
  const filed = cycles.map((cycle) => ({ ...cycle, waits: cycle.waits.map((wait) => ({ ...wait, frame: wait.frame ? withFile(wait.frame) : null })) }));
  const heap = heapWanted
    ? await readHeap(sa, asked, notes).catch((error: Error) => {
        notes.push(`the Java heap was not read: ${sa.command}: ${error.message}; it would show how full each space was and which types held it`);
        return null;
      })
    : null;
  const version = read.version;
  return { reading: { version, source: version === null ? "jhsdb" : `jhsdb (JVM ${version})`, threads, heap, locks, cycles: filed, threadsCommand: begun.threadsCommand, errorLog: null }, notes, commands };
}

/** A walk of the whole heap takes seconds per hundred MB of objects: the histogram is given this long. */
const HISTOGRAM_TIMEOUT_MS = 30_000;

/** The heap's spaces (`universe`) and the object histogram (`jhisto`, a walk of the whole heap, bounded in time). */
async function readHeap(sa: Clhsdb, asked: (command: string) => void, notes: string[]): Promise<JavaHeap> {
  asked("universe");
  const universe = await sa.ask("universe");
  asked("jhisto");
  const histogram = await sa.ask("jhisto", HISTOGRAM_TIMEOUT_MS).catch((error: Error) => {
    notes.push(`the Java heap's object histogram was not read: ${sa.command}: ${error.message}; it would show which types held the heap`);
    return "";
  });
  return parseHeap(universe, histogram);
}


/** `com.example.Outer$Inner` of `com.example.Outer$Inner.method`. */
function classOf(method: string): string {
  return method.slice(0, Math.max(0, method.lastIndexOf(".")));
}

/**
 * The source file names of the frames' classes, as javac recorded them (`SourceFile`): each class
 * rebuilt from the core by the SA's `dumpclass` into a private folder, removed after. A class the SA
 * cannot rebuild, or that names no source, is left out: its frames name no file.
 */
async function sourceFiles(sa: Clhsdb, frames: JstackFrame[], asked: (command: string) => void): Promise<Map<string, string>> {
  const classes = [...new Set(frames.map((frame) => (frame.function ? classOf(frame.function) : "")).filter((name) => /^[\w$.]{1,500}$/.test(name)))].slice(0, MAX_CLASSES);
  const files = new Map<string, string>();
  if (classes.length === 0) return files;
  const dir = await mkdtemp(path.join(tmpdir(), "dumpdbg-classes-"));
  try {
    for (const name of classes) {
      asked(`dumpclass ${name}`);
      await sa.ask(`dumpclass ${name} ${dir}`);
      const file = path.join(dir, ...name.split(".")) + ".class";
      const bytes = await readBounded(file);
      const source = bytes ? sourceFileOf(bytes) : null;
      if (source) files.set(name, source);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return files;
}

async function readBounded(file: string): Promise<Uint8Array | null> {
  try {
    const info = await stat(file);
    return info.isFile() && info.size <= MAX_CLASS_BYTES ? await readFile(file) : null;
  } catch {
    return null;
  }
}
