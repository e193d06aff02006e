/**
 * `jhsdb jstack` output read into threads and frames: plain (Java frames only, with their lines) or
 * `--mixed` (native and Java frames interleaved, each with its pc). Pure; the text is untrusted (it
 * comes from a core), so it is read bounded: at most so many threads, frames and characters a line.
 */

/** A frame the Serviceability Agent printed, in the shape triage's frames take. */
export interface JstackFrame {
  /** The frame's pc (`--mixed` and clhsdb's `jstack -v` print one for every frame); null in plain output. */
  pc: string | null;
  /** `Class.method` for a Java frame, the native symbol (without its offset) for another; null where the SA names none. */
  function: string | null;
  /** The Java method's parameter types as printed (`sun.misc.Unsafe, long`); null for native frames. */
  parameters: string | null;
  line: number | null;
  /** A Java frame's source file as its class records it (`Records.java`); null where not read, and for native frames. */
  file?: string | null;
  /** "java" for a Java frame; null for a native one (its language is the debugger's to say). */
  language: "java" | null;
  /** How the VM ran a Java frame: "Interpreted frame", "Compiled frame"; a native frame's null. */
  mode: string | null;
}

export interface JstackThread {
  /** The OS thread id: `--mixed`'s section header, or the Java thread's `nid=`. */
  lwp: number | null;
  /** The Java thread's name; null for a thread the VM does not know as a Java thread. */
  name: string | null;
  frames: JstackFrame[];
}

export interface Jstack {
  /** As the SA printed it: `17.0.15+6-Debian-1deb12u1`. */
  version: string | null;
  mixed: boolean;
  threads: JstackThread[];
}

const MAX_THREADS = 10_000;
const MAX_FRAMES = 1_000;
const MAX_LINE = 4_096;

const VERSION = /^JVM version is (\S{1,100})$/;
const MIXED_SECTION = /^-{5,} (\d{1,10}) -{5,}$/;
const THREAD_HEADER = /^"(.{0,500})" .*?\bnid=(0x[0-9a-f]{1,16}|\d{1,10})\b/;
/** `0x00007f30f840f06a	* Spinner.spin(long) bci:5 line:4 (Interpreted frame)` */
const MIXED_JAVA = /^(0x[0-9a-f]{1,16})\s+\* ([\w$.<>]+)\(([^()]*)\)(?: bci:\d+)?(?: line:(\d+))?(?: \(([^()]+)\))?$/;
/** `0x00007f30fa0282d2	JavaCalls::call_helper(JavaValue*, …) + 0x302`, `0x00007f30f8400cc9	<StubRoutines>` */
const MIXED_NATIVE = /^(0x[0-9a-f]{1,16})\s+(.*?)(?: \+ 0x[0-9a-f]+)?$/;
/**
 * ` - HeaderReader.readHeader(sun.misc.Unsafe, long) @bci=6, line=13 (Interpreted frame)`, and with
 * clhsdb's `jstack -v` the frame's pc and method: `…, line=4, pc=0x00007ffff5609374, Method*=0x00007fffe2400408 (Interpreted frame)`.
 */
const PLAIN_JAVA = /^ - ([\w$.<>+/]+)\(([^()]*)\)(?: @bci=\d+)?(?:, line=(-?\d+))?(?:, pc=(0x[0-9a-f]{1,16}))?(?:, Method\*=0x[0-9a-f]{1,16})?(?: \(([^()]+)\))?$/;

/**
 * One line of the output as a record: a thread's header, mixed output's section of an OS thread, a
 * frame, or any other text (lock lines, states), which readers of their own take up. Lines longer
 * than a jstack line are skipped.
 */
export type JstackLine =
  | { kind: "version"; version: string }
  | { kind: "section"; lwp: number }
  | { kind: "thread"; lwp: number; name: string }
  | { kind: "frame"; frame: JstackFrame }
  | { kind: "text"; line: string };

/** The output's lines as records, in order; frames are read as mixed once a mixed section has begun. */
export function* jstackLines(text: string): Generator<JstackLine> {
  let mixed = false;
  for (const raw of text.split("\n")) {
    if (raw.length > MAX_LINE) continue;
    const line = raw.replace(/\r$/, "");
    const versioned = VERSION.exec(line);
    if (versioned) {
      yield { kind: "version", version: versioned[1]! };
      continue;
    }
    const section = MIXED_SECTION.exec(line);
    if (section) {
      mixed = true;
      yield { kind: "section", lwp: Number(section[1]) };
      continue;
    }
    const header = THREAD_HEADER.exec(line);
    if (header) {
      yield { kind: "thread", lwp: Number(header[2]), name: header[1]! };
      continue;
    }
    const java = mixed ? MIXED_JAVA.exec(line) : PLAIN_JAVA.exec(line);
    if (java) {
      const [, pc, method, parameters, number, mode] = mixed ? java : [null, java[4], java[1], java[2], java[3], java[5]];
      const lineNumber = number === undefined || number === null ? null : Number(number);
      yield { kind: "frame", frame: { pc: pc ?? null, function: method ?? null, parameters: parameters ?? null, line: lineNumber !== null && lineNumber > 0 ? lineNumber : null, language: "java", mode: mode ?? null } };
      continue;
    }
    const native = mixed ? MIXED_NATIVE.exec(line) : null;
    if (native) yield { kind: "frame", frame: { pc: native[1] ?? null, function: native[2] ? native[2] : null, parameters: null, line: null, language: null, mode: null } };
    else yield { kind: "text", line };
  }
}

export function parseJstack(text: string): Jstack {
  const threads: JstackThread[] = [];
  let version: string | null = null;
  let mixed = false;
  let current: JstackThread | null = null;
  const open = (thread: JstackThread) => {
    current = threads.length < MAX_THREADS ? thread : null;
    if (current) threads.push(current);
  };
  for (const record of jstackLines(text)) {
    if (record.kind === "version") version = record.version;
    else if (record.kind === "section") {
      mixed = true;
      open({ lwp: record.lwp, name: null, frames: [] });
    } else if (record.kind === "thread") {
      // In mixed output the header names the Java thread of the section it opens.
      if (mixed && current !== null && (current as JstackThread).frames.length === 0) (current as JstackThread).name = record.name;
      else open({ lwp: record.lwp, name: record.name, frames: [] });
    } else if (record.kind === "frame" && current !== null && (current as JstackThread).frames.length < MAX_FRAMES) (current as JstackThread).frames.push(record.frame);
  }
  return { version, mixed, threads };
}

/** A thread's Java frames in order, innermost first. */
export function javaFrames(thread: JstackThread): JstackFrame[] {
  return thread.frames.filter((frame) => frame.language === "java");
}
