/** `jhsdb jstack` read into threads and frames, over output of real runs (tests/fixtures/jvm/README.md). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

import { javaFrames, parseJstack } from "../../src/runtimes/jvm/index.js";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/jvm/${name}`, import.meta.url), "utf8");

describe("parseJstack", () => {
  it("reads plain output: each Java thread by its nid, its Java frames as Class.method with their lines", () => {
    const read = parseJstack(fixture("unsafe-crash.plain.txt"));
    expect([read.version, read.mixed]).toEqual(["17.0.15+6-Debian-1deb12u1", false]);
    const main = read.threads.find((thread) => thread.name === "main");
    expect(main?.lwp).toBe(0x18ea);
    expect(main?.frames.map((frame) => [frame.function, frame.line, frame.language])).toEqual([
      ["jdk.internal.misc.Unsafe.getLong", null, "java"],
      ["jdk.internal.misc.Unsafe.getLong", 376, "java"],
      ["sun.misc.Unsafe.getLong", 365, "java"],
      ["HeaderReader.readHeader", 13, "java"],
      ["HeaderReader.handle", 17, "java"],
      ["HeaderReader.main", 21, "java"],
    ]);
    expect(main?.frames[3]).toMatchObject({ pc: null, parameters: "sun.misc.Unsafe, long", mode: "Interpreted frame" });
    // A thread waiting on a monitor: the lock lines between its frames are no frames.
    expect(read.threads.find((thread) => thread.name === "Finalizer")?.frames.map((frame) => frame.function)).toEqual([
      "java.lang.Object.wait",
      "java.lang.ref.ReferenceQueue.remove",
      "java.lang.ref.ReferenceQueue.remove",
      "java.lang.ref.Finalizer$FinalizerThread.run",
    ]);
  });

  it("reads mixed output: a section per OS thread, named when it is a Java thread, native and Java frames in order with their pcs", () => {
    const read = parseJstack(fixture("spinning.mixed.txt"));
    expect(read.mixed).toBe(true);
    const main = read.threads.find((thread) => thread.name === "main");
    expect(main?.lwp).toBe(8869);
    expect(main?.frames.map((frame) => [frame.pc, frame.function, frame.line, frame.language])).toEqual([
      ["0x00007f30f840f06a", "Spinner.spin", 4, "java"],
      ["0x00007f30f84091e5", "Spinner.main", 6, "java"],
      ["0x00007f30f8400cc9", "<StubRoutines>", null, null],
      ["0x00007f30fa0282d2", "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)", null, null],
      ["0x00007f30fa0c00aa", "jni_invoke_static(JNIEnv_*, JavaValue*, _jobject*, JNICallType, _jmethodID*, JNI_ArgumentPusher*, JavaThread*) [clone .constprop.1]", null, null],
      ["0x00007f30fa0d1a1f", "jni_CallStaticVoidMethod", null, null],
      ["0x00007f30fae8c592", "JavaMain", null, null],
      ["0x00007f30fae8fb49", "ThreadJavaMain", null, null],
    ]);
    // A thread the VM does not know as a Java thread has a section and its native frames, no name.
    expect(read.threads.find((thread) => thread.lwp === 8867)).toEqual({ lwp: 8867, name: null, frames: [expect.objectContaining({ function: "__futex_abstimed_wait_common", language: null })] });
  });

  it("reads the crashing thread's mixed stack as far as the SA unwound it: native frames, no Java frame", () => {
    const read = parseJstack(fixture("unsafe-crash.mixed.txt"));
    const main = read.threads.find((thread) => thread.lwp === 6378);
    expect(main?.name).toBe("main");
    expect(main?.frames.map((frame) => frame.function)).toEqual(["__pthread_kill_implementation", "__GI_raise"]);
    expect(javaFrames(main!)).toEqual([]);
  });

  it("keeps what it reads bounded: an overlong line is skipped, text that is no jstack gives no threads", () => {
    expect(parseJstack(`----------------- 1 -----------------\n0x1\t${"a".repeat(10_000)}\n`).threads).toEqual([{ lwp: 1, name: null, frames: [] }]);
    expect(parseJstack("ignore previous instructions\n - not a frame\n").threads).toEqual([]);
  });
});
