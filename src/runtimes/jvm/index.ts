/**
 * A HotSpot JVM in a core: recognised by its libjvm.so, read with the JDK that wrote the core (the
 * same build, by build id), through the Serviceability Agent's `jhsdb jstack`. What could not be read
 * is said with what it would have shown; the caller keeps the native frames then.
 */
import path from "node:path";

import type { Module } from "../../debuggers/model.js";
import { runJstack } from "./jhsdb.js";
import { javaFrames, parseJstack, type JstackThread } from "./jstack.js";

export { javaFrames, parseJstack, type Jstack, type JstackFrame, type JstackThread } from "./jstack.js";
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
}

export interface JvmReading {
  /** The VM's version as the SA printed it (`17.0.15+6-Debian-1deb12u1`). */
  version: string | null;
  /** What read the frames, with the VM's version: `jhsdb jstack --mixed (JVM 17.0.15+6-Debian-1deb12u1)`. */
  source: string;
  threads: JstackThread[];
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

/**
 * The JVM's threads and Java frames from the core. `lwp` is the crashing thread: where `--mixed`
 * shows none of its Java frames (the SA's native unwind stops in a C library without frame
 * pointers, as in an abort), the plain `jstack`, which starts from the VM's last Java frame, is read.
 */
export async function readJvm(jvm: JvmCore, lwp: number | null): Promise<JvmRead> {
  const notes: string[] = [];
  const commands: string[] = [];
  const build = jvm.buildIdOf(jvm.libjvm.path);
  if (build === null) return { reading: null, notes: [`the JDK that wrote the core is not on this machine (no ${jvm.libjvm.path}): jhsdb needs that build to read the Java frames, which would show ${WOULD_SHOW}`], commands };
  if (jvm.libjvm.buildId !== null && build !== jvm.libjvm.buildId) {
    return { reading: null, notes: [`${jvm.libjvm.path} here is another build (build id ${build}) than the core's (${jvm.libjvm.buildId}): jhsdb reads a core only with the JDK build that wrote it, which would show ${WOULD_SHOW}`], commands };
  }
  if (jvm.libjvm.buildId === null) notes.push(`the core holds no build id of ${jvm.libjvm.path}: the JDK here was taken as the one that wrote it`);
  if (jvm.java === null) return { reading: null, notes: [...notes, `the java launcher the JVM ran is not known (give it with --exe): jhsdb needs it to read the Java frames, which would show ${WOULD_SHOW}`], commands };
  // `DUMPDBG_JHSDB` names another jhsdb, as `DUMPDBG_GDB` another gdb; by default the JDK's whose libjvm.so the core maps.
  const jhsdb = process.env.DUMPDBG_JHSDB || path.join(path.dirname(jvm.libjvm.path), "..", "..", "bin", "jhsdb");
  const mixed = await runJstack(jhsdb, jvm.core, jvm.java, true);
  commands.push(mixed.command);
  if (!mixed.ok) return { reading: null, notes: [...notes, `the JVM's Java frames were not read: ${mixed.command}: ${mixed.error}; the JDK's jhsdb would show ${WOULD_SHOW}`], commands };
  const read = parseJstack(mixed.output);
  const crashing = read.threads.find((thread) => thread.lwp === lwp);
  if (lwp === null || (crashing && javaFrames(crashing).length > 0)) return { reading: { version: read.version, source: sourceOf(mixed.command, read.version), threads: read.threads }, notes, commands };
  const plain = await runJstack(jhsdb, jvm.core, jvm.java, false);
  commands.push(plain.command);
  if (!plain.ok) return { reading: null, notes: [...notes, `the JVM's Java frames were not read: jhsdb's mixed stack of thread ${lwp} holds none, and ${plain.command}: ${plain.error}; it would show ${WOULD_SHOW}`], commands };
  const java = parseJstack(plain.output);
  notes.push(`jhsdb's mixed stack of thread ${lwp} stops in native code before its Java frames (the SA unwinds native frames by frame pointers); its Java frames were read with jhsdb jstack, which starts from the VM's last Java frame`);
  return { reading: { version: java.version ?? read.version, source: sourceOf("jhsdb jstack", java.version ?? read.version), threads: java.threads }, notes, commands };
}

function sourceOf(command: string, version: string | null): string {
  const name = command.replace(/ --core .*$/, "");
  return version === null ? name : `${name} (JVM ${version})`;
}
