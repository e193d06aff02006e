/**
 * A JVM's crash read with the JDK's own tool: the core of a Java program whose Unsafe read near NULL
 * faulted under the VM's signal handler (tests/helpers/jvm.ts). jhsdb's Java frames take the place
 * of the code the VM generated, and the culprit is the program's own Java method at its line; without
 * jhsdb the verdict is the native frames', and a note says what was missing and what it would show.
 */
import { beforeAll, describe, expect, it } from "vitest";

import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { HEADER_READER, hasJava, headerReaderCore } from "../helpers/jvm.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const CULPRIT_LINE = HEADER_READER.split("\n").findIndex((line) => line.includes("// CULPRIT")) + 1;

describe.skipIf(!hasJava)("a JVM that crashed in Unsafe.getLong called from the program's readHeader", () => {
  let core = "";
  let java = "";
  beforeAll(() => {
    ({ core, java } = headerReaderCore(tempDir("dumpdbg-jvm-")));
  });

  it("blames the program's Java method at its line, read by jhsdb, with the JVM's version", async () => {
    const result = await runCli(["triage", core, "--exe", java, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const crash = JSON.parse(result.stdout) as Crash;
    expect([crash.kind, crash.signal, crash.faultAddress, crash.access]).toEqual(["null-dereference", "SIGSEGV", "0x8", "read"]);
    expect(crash.culprit).toMatchObject({ function: "HeaderReader.readHeader", file: "HeaderReader.java", line: CULPRIT_LINE, language: "java" });
    expect(crash.signature).toBe("null-dereference | HeaderReader.readHeader | HeaderReader.handle | HeaderReader.main");
    expect(crash.runtime?.name).toBe("jvm");
    expect(crash.runtime?.version).toMatch(/^17\./);
    expect(crash.runtime?.source).toMatch(/^jhsdb clhsdb \(JVM 17\./);
    expect(crash.origin?.evidence).toMatch(/\(JVM_handle_linux_signal in libjvm\.so\), which then aborted/);
  });

  it("shows the stack from the culprit out as the program's Java frames", async () => {
    const result = await runCli(["triage", core, "--exe", java]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Where: +HeaderReader\.readHeader\b/m);
    expect(result.stdout).toMatch(new RegExp(`#\\d+ HeaderReader\\.readHeader at HeaderReader\\.java:${CULPRIT_LINE}\\n +#\\d+ HeaderReader\\.handle at HeaderReader\\.java:\\d+\\n +#\\d+ HeaderReader\\.main at HeaderReader\\.java:\\d+`));
  });

  it("without jhsdb keeps the native verdict, the fault it caught, and says what jhsdb would have shown", async () => {
    const env = { DUMPDBG_JHSDB: "/nonexistent/jhsdb" };
    const json = await runCli(["triage", core, "--exe", java, "--json"], { env });
    expect(json.code, json.stderr).toBe(0);
    const crash = JSON.parse(json.stdout) as Crash;
    expect([crash.kind, crash.faultAddress, crash.culprit.function, crash.culprit.language, crash.runtime]).toEqual(["null-dereference", "0x8", "Unsafe_GetLong", null, null]);
    expect(crash.signature).toBe("null-dereference | Unsafe_GetLong");
    const text = await runCli(["triage", core, "--exe", java], { env });
    expect(text.stdout).toMatch(/Note: +the JVM's Java frames were not read: jhsdb clhsdb --core .*: \/nonexistent\/jhsdb is not there; the JDK's jhsdb would show the Java methods and lines/);
  });
});
