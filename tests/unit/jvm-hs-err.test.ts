/** HotSpot's hs_err log read into its fields, over logs of real crashes (tests/fixtures/jvm/README.md) and hostile text. */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

import { parseHsErr, readHsErr, type HsErr, type HsErrFrame } from "../../src/runtimes/jvm/index.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const fixturePath = (name: string) => new URL(`../fixtures/jvm/${name}`, import.meta.url).pathname;
const fixture = (name: string) => readFileSync(fixturePath(name), "utf8");

const named = (frames: HsErrFrame[]) => frames.map((frame) => [frame.kind, frame.function, frame.bci]);

/** The log without its lines from the one `first` matches up to (not including) the next blank line. */
function withoutBlock(text: string, first: RegExp): string {
  const lines = text.split("\n");
  const start = lines.findIndex((line) => first.test(line));
  if (start < 0) throw new Error(`no line matches ${first}`);
  const end = lines.findIndex((line, index) => index > start && line.trim() === "");
  lines.splice(start, end - start);
  return lines.join("\n");
}

const withoutLines = (text: string, drop: RegExp) =>
  text
    .split("\n")
    .filter((line) => !drop.test(line))
    .join("\n");

describe("parseHsErr over real logs", () => {
  it("reads Unsafe.getLong(0 + 8): the signal and its address, the VM frame it arrived in, the Java frames in order", async () => {
    const read = await readHsErr(fixturePath("hs-err-unsafe.log"));
    expect(read).not.toBeNull();
    expect(read).toMatchObject({
      version: "17.0.15+6-Debian-1deb12u1",
      vm: "OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1, mixed mode, sharing, tiered, compressed oops, compressed class ptrs, serial gc, linux-amd64)",
      signal: { name: "SIGSEGV", number: 11, code: "SEGV_MAPERR", address: "0x8", sender: null },
      pc: "0x7f9538ad430c",
      pid: 16830,
      tid: 16831,
      error: null,
      errorMessage: null,
      currentThread: { type: "JavaThread", name: "main", state: "_thread_in_vm", lwp: 16831 },
      vmState: "not at safepoint (normal execution)",
      javaCommand: "HeaderReader",
      coreLocation: null,
      cwd: null,
      truncated: false,
    });
    expect(read!.problematicFrame).toEqual({ kind: "vm", function: "Unsafe_GetLong", signature: null, module: "libjvm.so", offset: "0xed430c", functionOffset: "0x12c", bci: null, pc: null, language: null });
    expect(read!.commandLine).toBe(
      "-XX:-CreateCoredumpOnCrash -Xmx32m -Xss512k -XX:ReservedCodeCacheSize=16m -XX:CompressedClassSpaceSize=16m -XX:+UseSerialGC -XX:-UsePerfData -XX:ErrorFile=/tmp/hserr-gen/unsafe/hs_err_pid%p.log HeaderReader",
    );
    expect(named(read!.javaFrames)).toEqual([
      ["java-interpreted", "jdk.internal.misc.Unsafe.getLong", 0],
      ["java-interpreted", "jdk.internal.misc.Unsafe.getLong", 3],
      ["java-interpreted", "sun.misc.Unsafe.getLong", 4],
      ["java-interpreted", "HeaderReader.readHeader", 6],
      ["java-interpreted", "HeaderReader.handle", 2],
      ["java-interpreted", "HeaderReader.main", 7],
      ["stub", "~StubRoutines::call_stub", null],
    ]);
    expect(read!.javaFrames[3]).toEqual({ kind: "java-interpreted", function: "HeaderReader.readHeader", signature: "(Lsun/misc/Unsafe;J)J", module: null, offset: null, functionOffset: null, bci: 6, pc: null, language: "java" });
    expect(read!.javaFrames[2]?.module).toBe("jdk.unsupported@17.0.15");
    // The native stack holds the same Java frames between the VM's: the fault's frame first, the launcher's last.
    expect(read!.nativeFrames.map((frame) => frame.function)).toEqual([
      "Unsafe_GetLong",
      ...read!.javaFrames.map((frame) => frame.function),
      "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)",
      "jni_invoke_static(JNIEnv_*, JavaValue*, _jobject*, JNICallType, _jmethodID*, JNI_ArgumentPusher*, JavaThread*) [clone .constprop.1]",
      "jni_CallStaticVoidMethod",
      "JavaMain",
      "ThreadJavaMain",
    ]);
    expect(read!.nativeFrames.at(-1)).toMatchObject({ kind: "native", module: "libjli.so", offset: "0x7b49", functionOffset: "0x9" });
    expect(read!.heap).toHaveLength(8);
    expect(read!.heap[0]).toBe(" def new generation   total 9792K, used 1052K [0x00000000fe000000, 0x00000000feaa0000, 0x00000000feaa0000)");
  });

  it("reads a JNI library's write through NULL: the C frame it arrived in, the Java methods that called it", () => {
    const read = parseHsErr(fixture("hs-err-jni.log"));
    expect(read.signal).toEqual({ name: "SIGSEGV", number: 11, code: "SEGV_MAPERR", address: "0x8", sender: null });
    expect(read.problematicFrame).toMatchObject({ kind: "native", function: "store_record", module: "librecords.so", offset: "0x1299", functionOffset: "0x61", language: null });
    expect(read.currentThread).toEqual({ type: "JavaThread", name: "main", state: "_thread_in_native", lwp: 16944 });
    expect(named(read.nativeFrames.slice(0, 6))).toEqual([
      ["native", "store_record", null],
      ["native", "Java_RecordLoader_parse", null],
      ["java-interpreted", "RecordLoader.parse", 0],
      ["java-interpreted", "RecordLoader.apply", 1],
      ["java-interpreted", "RecordLoader.load", 25],
      ["java-interpreted", "RecordLoader.main", 22],
    ]);
    expect(read.javaFrames.map((frame) => [frame.function, frame.signature])).toEqual([
      ["RecordLoader.parse", "(Ljava/lang/String;)I"],
      ["RecordLoader.apply", "(Ljava/lang/String;)I"],
      ["RecordLoader.load", "([Ljava/lang/String;)I"],
      ["RecordLoader.main", "([Ljava/lang/String;)V"],
      ["~StubRoutines::call_stub", null],
    ]);
    expect(read.commandLine).toMatch(/ -Djava\.library\.path=\/tmp\/hserr-gen\/jni RecordLoader$/);
  });

  it("reads an OutOfMemoryError made fatal: the VM's error and message, no signal, the Java frame that allocated", () => {
    const read = parseHsErr(fixture("hs-err-oom.log"));
    expect(read).toMatchObject({
      signal: null,
      pc: null,
      pid: 17027,
      tid: 17028,
      problematicFrame: null,
      error: "Internal Error (debug.cpp:362)",
      errorMessage: "fatal error: OutOfMemory encountered: Java heap space",
      currentThread: { type: "JavaThread", name: "main", state: "_thread_in_vm", lwp: 17028 },
      javaCommand: "ChunkCache",
      truncated: false,
    });
    expect(read.commandLine).toMatch(/ -XX:\+CrashOnOutOfMemoryError ChunkCache$/);
    expect(read.nativeFrames[0]).toMatchObject({ kind: "vm", function: "VMError::report_and_die(int, char const*, char const*, __va_list_tag*, Thread*, unsigned char*, void*, void*, char const*, int, unsigned long)" });
    expect(named(read.javaFrames)).toEqual([
      ["java-interpreted", "ChunkCache.fill", 4],
      ["java-interpreted", "ChunkCache.warm", 2],
      ["java-interpreted", "ChunkCache.main", 0],
      ["stub", "~StubRoutines::call_stub", null],
    ]);
    expect(read.heap).toContain("   the space 21888K,  98% used [0x00000000feaa0000, 0x00000000fffa01e8, 0x00000000fffa0200, 0x0000000100000000)");
  });

  it("reads a fault in JIT-compiled code: the compiled frame with its pc and code offset, and no Java frames section", () => {
    const read = parseHsErr(fixture("hs-err-jit.log"));
    const compiled: HsErrFrame = { kind: "java-compiled", function: "HotHeaderReader.handle", signature: "(Lsun/misc/Unsafe;J)J", module: null, offset: null, functionOffset: "0x14", bci: null, pc: "0x7fa2ad31dc14", language: "java" };
    expect(read.problematicFrame).toEqual(compiled);
    expect(read.pc).toBe("0x7fa2ad31dc14");
    expect(read.signal?.address).toBe("0x8");
    expect(read.currentThread?.state).toBe("_thread_in_Java");
    expect(read.nativeFrames.slice(0, 3)).toEqual([compiled, expect.objectContaining({ kind: "java-interpreted", function: "HotHeaderReader.main", bci: 57 }), expect.objectContaining({ kind: "stub" })]);
    // A thread in compiled code has no last Java frame: the VM prints no Java frames, and none are made up.
    expect(read.javaFrames).toEqual([]);
  });

  it("reads a SIGSEGV sent with kill: SI_USER and its sender, a native thread, a frame with no symbol", () => {
    const read = parseHsErr(fixture("hs-err-kill.log"));
    expect(read.signal).toEqual({ name: "SIGSEGV", number: 11, code: "SI_USER", address: null, sender: { pid: 20656, uid: 0 } });
    expect([read.pc, read.pid, read.tid]).toEqual(["0x7f7374895f14", 20683, 20683]);
    expect(read.problematicFrame).toEqual({ kind: "native", function: null, signature: null, module: "libc.so.6", offset: "0x85f14", functionOffset: null, bci: null, pc: null, language: null });
    expect(read.currentThread).toEqual({ type: "native", name: null, state: null, lwp: null });
    expect(read.nativeFrames).toEqual([read.problematicFrame]);
    expect(read.javaFrames).toEqual([]);
  });

  it("reads JDK 25's layout: a padded thread line, a stub's pc, Java frames right after the native ones", () => {
    const read = parseHsErr(fixture("hs-err-jni-jdk25.log"));
    expect([read.version, read.signal?.address, read.problematicFrame?.function]).toEqual(["25.0.3+9-LTS", "0x8", "store_record"]);
    expect(read.currentThread).toEqual({ type: "JavaThread", name: "main", state: "_thread_in_native", lwp: 18486 });
    expect(read.nativeFrames).toHaveLength(13);
    expect(read.nativeFrames[6]).toMatchObject({ kind: "stub", function: "~StubRoutines::call_stub", pc: "0x7f7467938fa6" });
    expect(read.javaFrames.map((frame) => frame.function)).toEqual(["RecordLoader.parse", "RecordLoader.apply", "RecordLoader.load", "RecordLoader.main", "~StubRoutines::call_stub"]);
    expect(read.heap[0]).toBe(" DefNew     total 9792K, used 348K [0x00000000fe000000, 0x00000000feaa0000, 0x00000000feaa0000)");
  });
});

describe("parseHsErr over cut and hostile text", () => {
  const unsafe = fixture("hs-err-unsafe.log");
  const whole = parseHsErr(unsafe);

  it("reads a log cut in the middle of its native frames up to the last whole line, and says it was cut", () => {
    const cut = unsafe.slice(0, unsafe.indexOf("j  HeaderReader.handle(") + 10);
    const read = parseHsErr(cut);
    expect(read.truncated).toBe(true);
    expect(read.signal).toEqual({ name: "SIGSEGV", number: 11, code: null, address: null, sender: null });
    expect(read.commandLine).toBe(whole.commandLine);
    expect(read.nativeFrames.map((frame) => frame.function)).toEqual(["Unsafe_GetLong", "jdk.internal.misc.Unsafe.getLong", "jdk.internal.misc.Unsafe.getLong", "sun.misc.Unsafe.getLong", "HeaderReader.readHeader"]);
    expect([read.javaFrames, read.heap, read.vmState, read.javaCommand]).toEqual([[], [], null, null]);
  });

  it("cuts a value on its line only where the line is whole: a Command Line cut short is not read", () => {
    const read = parseHsErr(unsafe.slice(0, unsafe.indexOf("-XX:+UseSerialGC")));
    expect([read.commandLine, read.truncated, read.problematicFrame?.function]).toEqual([null, true, "Unsafe_GetLong"]);
  });

  it("bounds a 10 MB line: the text past the bound is not read, what came before is", () => {
    const huge = unsafe.replace(/^Command Line: .*$/m, `Command Line: ${"-Dx=y ".repeat(2 * 1024 * 1024)}`);
    const read = parseHsErr(huge);
    expect([read.commandLine, read.currentThread, read.truncated]).toEqual([null, null, true]);
    // siginfo comes after the line: the header's signal alone, without the address.
    expect(read.signal).toEqual({ name: "SIGSEGV", number: 11, code: null, address: null, sender: null });
    expect([read.pc, read.problematicFrame]).toEqual([whole.pc, whole.problematicFrame]);
  });

  it("ends a stack at an overlong line in it: the frames before it are kept, none after it is taken for its caller", () => {
    const long = unsafe.replace("j  HeaderReader.handle(", `j  ${"A".repeat(100_000)}(`);
    const read = parseHsErr(long);
    expect(read.nativeFrames.map((frame) => frame.function)).toEqual(["Unsafe_GetLong", "jdk.internal.misc.Unsafe.getLong", "jdk.internal.misc.Unsafe.getLong", "sun.misc.Unsafe.getLong", "HeaderReader.readHeader"]);
    expect([read.javaFrames, read.vmState]).toEqual([whole.javaFrames, whole.vmState]);
  });

  it("reads nothing from garbage, and says the log did not end", () => {
    const bytes = Buffer.alloc(256 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919 + (i >> 5)) % 256;
    for (const text of [bytes.toString("latin1"), "", "\n\n\n", "#\n# \n#  (\nj  \nJ 1 c2 \nV  [\n"]) {
      expect(parseHsErr(text)).toEqual({
        version: null,
        vm: null,
        signal: null,
        pc: null,
        pid: null,
        tid: null,
        problematicFrame: null,
        error: null,
        errorMessage: null,
        currentThread: null,
        nativeFrames: [],
        javaFrames: [],
        vmState: null,
        commandLine: null,
        javaCommand: null,
        heap: [],
        coreLocation: null,
        cwd: null,
        truncated: true,
      } satisfies HsErr);
    }
  });

  it("reads CRLF line endings as the VM's own", () => {
    expect(parseHsErr(unsafe.replace(/\n/g, "\r\n"))).toEqual(whole);
  });

  it("keeps its work bounded on lines made to make a pattern backtrack", () => {
    const header = ["#  SIGSEGV (0xb) at pc=" + "0".repeat(8000), "# Core dump will be written. Default location: " + '"'.repeat(8000)];
    const thread = ["Current thread (0x1):  T \"" + '" '.repeat(4000), "siginfo: si_signo: 11 (" + "S".repeat(8000), "Native frames: (J=compiled Java code)"];
    const frames = ["V  [" + "lib+".repeat(2000), "C  [a+0x1]  " + "f+0x".repeat(2000), "j  a" + "(".repeat(8000), "J 1 c2 " + "a(".repeat(4000), "v  ~" + "~ ".repeat(4000)];
    const nasty = [...header, "---------------  T H R E A D  ---------------", ...thread, ...Array(50).fill(frames.join("\n"))].join("\n");
    const started = Date.now();
    expect(parseHsErr(`${nasty}\n`).nativeFrames).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("keeps at most 20 heap lines and 1,000 frames", () => {
    const many = unsafe.replace("Heap:\n", `Heap:\n${" space 1K\n".repeat(100)}`).replace("Java frames: (J=compiled Java code, j=interpreted, Vv=VM code)\n", (header) => header + "j  A.b()V+1\n".repeat(5_000));
    const read = parseHsErr(many);
    expect(read.heap).toHaveLength(20);
    expect(read.javaFrames).toHaveLength(1_000);
  });

  it("leaves a field unknown where its part of the log is missing, the others as they were", () => {
    const cases: [string, string, Partial<HsErr>][] = [
      [
        "the # header",
        withoutLines(unsafe, /^#/),
        { version: "17.0.15+6-Debian-1deb12u1", vm: null, pc: null, pid: null, tid: null, problematicFrame: null, signal: { name: "SIGSEGV", number: 11, code: "SEGV_MAPERR", address: "0x8", sender: null } },
      ],
      ["the JRE version line", withoutLines(unsafe, /^# JRE version:/), { version: "17.0.15+6-Debian-1deb12u1", vm: whole.vm }],
      ["the problematic frame", withoutLines(unsafe, /^# (Problematic frame:|V {2}\[)/), { problematicFrame: null, nativeFrames: whole.nativeFrames }],
      ["siginfo", withoutLines(unsafe, /^siginfo:/), { signal: { name: "SIGSEGV", number: 11, code: null, address: null, sender: null }, pc: whole.pc }],
      ["the current thread", withoutLines(unsafe, /^Current thread/), { currentThread: null, tid: 16831 }],
      ["the native frames", withoutBlock(unsafe, /^Native frames:/), { nativeFrames: [], javaFrames: whole.javaFrames }],
      ["the Java frames", withoutBlock(unsafe, /^Java frames:/), { javaFrames: [], nativeFrames: whole.nativeFrames }],
      ["the Command Line", withoutLines(unsafe, /^Command Line:/), { commandLine: null, javaCommand: "HeaderReader" }],
      ["java_command", withoutLines(unsafe, /^java_command:/), { javaCommand: null, commandLine: whole.commandLine }],
      ["the VM state", withoutLines(unsafe, /^VM state:/), { vmState: null, heap: whole.heap }],
      ["the heap", withoutBlock(unsafe, /^Heap:/), { heap: [], vmState: whole.vmState }],
      [
        "the T H R E A D divider",
        withoutLines(unsafe, /T H R E A D/),
        { currentThread: null, nativeFrames: [], javaFrames: [], signal: { name: "SIGSEGV", number: 11, code: null, address: null, sender: null }, commandLine: whole.commandLine, vmState: whole.vmState },
      ],
      ["END.", withoutLines(unsafe, /^END\.$/), { truncated: true, heap: whole.heap }],
    ];
    for (const [part, text, expected] of cases) expect(parseHsErr(text), part).toEqual({ ...whole, ...expected });
  });

  it("reads the core's location the VM names, and the working directory only where a piped core pattern spells it out", () => {
    const header = (location: string) => parseHsErr(unsafe.replace("# CreateCoredumpOnCrash turned off, no core file dumped", `# Core dump will be written. Default location: ${location}`));
    // As this machine's JDK wrote it with `ulimit -c 1024` and core_pattern `core`: a path, which could as well come from an absolute pattern.
    expect(header('/tmp/hserr-gen/cwdtest/core (max size 1024 kB). To ensure a full core dump, try "ulimit -c unlimited" before starting Java again')).toMatchObject({ coreLocation: "/tmp/hserr-gen/cwdtest/core", cwd: null });
    expect(header('"/usr/share/apport/apport -p%p -s%s -c%c -d%d -P%P -u%u -g%g -- %E" (or dumping to /srv/app/core.4242)')).toMatchObject({
      coreLocation: '"/usr/share/apport/apport -p%p -s%s -c%c -d%d -P%P -u%u -g%g -- %E" (or dumping to /srv/app/core.4242)',
      cwd: "/srv/app",
    });
  });
});

describe("readHsErr", () => {
  it("is null for what is not a readable regular file: an absent path, a folder, a FIFO (never waiting for a writer)", async () => {
    const dir = tempDir("dumpdbg-hs-err-");
    const fifo = path.join(dir, "hs_err_pid1.log");
    execFileSync("mkfifo", [fifo]);
    expect(await readHsErr(path.join(dir, "absent.log"))).toBeNull();
    expect(await readHsErr(dir)).toBeNull();
    expect(await readHsErr(fifo)).toBeNull();
  });

  it("reads at most 4 MiB of a huge log and says it was cut", async () => {
    const dir = tempDir("dumpdbg-hs-err-");
    const file = path.join(dir, "hs_err_pid1.log");
    writeFileSync(file, fixture("hs-err-unsafe.log").replace(/^Heap:$/m, `Heap:\n${`${"x".repeat(99)}\n`.repeat(100_000)}`));
    const read = await readHsErr(file);
    expect(read?.truncated).toBe(true);
    expect(read?.signal?.address).toBe("0x8");
    expect([read?.heap, read?.javaCommand]).toEqual([[], null]);
  });
});
