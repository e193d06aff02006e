/** Which JDK reads a JVM's core: the build that wrote it, by libjvm.so's build id, or none, said why. */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

import type { Module } from "../../src/debuggers/model.js";
import { hotspotOf, readJvm } from "../../src/runtimes/jvm/index.js";

const LIBJVM: Module = { path: "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", start: "0x7ffff6a00000", end: "0x7ffff7a00000", buildId: "aa11", debugFile: null } as Module;

describe("hotspotOf", () => {
  it("finds the VM's library among a core's modules, and nothing in another program's", () => {
    expect(hotspotOf([{ ...LIBJVM, path: "/lib/x86_64-linux-gnu/libc.so.6" }, LIBJVM])).toBe(LIBJVM);
    expect(hotspotOf([{ ...LIBJVM, path: "/opt/app/libjvmstat.so" }])).toBeNull();
  });
});

describe("readJvm", () => {
  const core = { core: "/tmp/core", java: "/usr/lib/jvm/java-17-openjdk-amd64/bin/java", libjvm: LIBJVM, pid: 16830, hsErr: null };
  const log = fileURLToPath(new URL("../fixtures/jvm/hs-err-unsafe.log", import.meta.url));

  it("runs nothing when the JDK that wrote the core is not here, and says what its frames would show", async () => {
    const read = await readJvm({ ...core, buildIdOf: () => null }, 1);
    expect([read.reading, read.commands]).toEqual([null, []]);
    expect(read.notes).toEqual([expect.stringMatching(/^the JDK that wrote the core is not on this machine \(no \/usr\/lib\/jvm\/.*libjvm\.so\): jhsdb needs that build .* the Java methods and lines/)]);
  });

  it("runs nothing with another build of the JDK, naming both build ids", async () => {
    const read = await readJvm({ ...core, buildIdOf: () => "bb22" }, 1);
    expect([read.reading, read.commands]).toEqual([null, []]);
    expect(read.notes).toEqual([expect.stringMatching(/libjvm\.so here is another build \(build id bb22\) than the core's \(aa11\)/)]);
  });

  it("needs the launcher the JVM ran", async () => {
    const read = await readJvm({ ...core, java: null, buildIdOf: () => "aa11" }, 1);
    expect(read.reading).toBeNull();
    expect(read.notes).toEqual([expect.stringMatching(/the java launcher the JVM ran is not known \(give it with --exe\)/)]);
  });

  it("reads the crashing thread's Java frames from the JVM's error log where jhsdb cannot run, without lines", async () => {
    const read = await readJvm({ ...core, buildIdOf: () => "bb22", hsErr: log }, 16831);
    expect(read.commands).toEqual([]);
    expect(read.reading?.source).toBe("hs-err-unsafe.log (JVM 17.0.15+6-Debian-1deb12u1)");
    expect(read.reading?.threads.map((thread) => [thread.lwp, thread.name])).toEqual([[16831, "main"]]);
    expect(read.reading?.threads[0]?.frames.map((frame) => [frame.function, frame.line, frame.language])).toEqual([
      ["jdk.internal.misc.Unsafe.getLong", null, "java"],
      ["jdk.internal.misc.Unsafe.getLong", null, "java"],
      ["sun.misc.Unsafe.getLong", null, "java"],
      ["HeaderReader.readHeader", null, "java"],
      ["HeaderReader.handle", null, "java"],
      ["HeaderReader.main", null, "java"],
    ]);
    expect(read.notes).toEqual([expect.stringMatching(/another build/), expect.stringMatching(/^the crashing thread's Java frames were read from the JVM's error log instead \(.*hs-err-unsafe\.log\): it names their methods and bytecode indexes, not their lines$/)]);
  });

  it("does not read another process's error log", async () => {
    const read = await readJvm({ ...core, pid: 4242, buildIdOf: () => "bb22", hsErr: log }, 1);
    expect(read.reading).toBeNull();
    expect(read.notes).toContainEqual(expect.stringMatching(/hs-err-unsafe\.log is the error log of another process \(pid 16830; the core's is 4242\): it was not read$/));
  });
});
