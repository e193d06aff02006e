/**
 * JVM crashes read with the JDK's own tools, on real crashes made now (tests/helpers/jvm-programs.ts):
 * an Unsafe read near NULL and a JNI library's write through NULL, both caught by the VM's signal
 * handler, and a heap exhausted under -XX:+CrashOnOutOfMemoryError. Each is read with jhsdb, with the
 * VM's error log (hs_err_pid<pid>.log) alone where jhsdb cannot run, and with neither: the verdict
 * gets less specific as the evidence goes, never different.
 */
import { copyFileSync, mkdirSync, renameSync, symlinkSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

import type { Crash, Report } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { HEADER_READER, hasJava } from "../helpers/jvm.js";
import { culpritLineOf, headerReaderCrash, JNI_RECORDS_C, JNI_RECORDS_JAVA, jniRecordsCrash, OOM_JAVA, oomCrash, type JvmCrash } from "../helpers/jvm-programs.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const NO_JHSDB = { DUMPDBG_JHSDB: "/nonexistent/jhsdb" };

/** A crash whose error log is moved out of the core's folder, so that each test says whether it is read. */
function crashWithLogAside(make: (dir: string, options: { core: boolean }) => JvmCrash, prefix: string): { core: string; java: string; log: string } {
  const dir = tempDir(prefix);
  const made = make(dir, { core: true });
  const aside = path.join(dir, "kept");
  mkdirSync(aside);
  const log = path.join(aside, path.basename(made.hsErr));
  renameSync(made.hsErr, log);
  return { core: made.core!, java: made.java, log };
}

async function triage(args: string[], env: Record<string, string> = {}): Promise<Crash> {
  const result = await runCli(["triage", ...args, "--json"], { env });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Crash;
}

/** Lines of a Java source, counted from 1, by a piece of their text. */
function lineOf(source: string, text: string): number {
  return source.split("\n").findIndex((line) => line.includes(text)) + 1;
}

describe.skipIf(!hasJava)("a JVM that crashed in Unsafe.getLong called from the program's readHeader", () => {
  const CULPRIT_LINE = culpritLineOf(HEADER_READER);
  let crash = { core: "", java: "", log: "" };
  beforeAll(() => {
    crash = crashWithLogAside(headerReaderCrash, "dumpdbg-jvm-unsafe-");
  });

  it("blames the program's Java method at its line, read by jhsdb, with the JVM's version", async () => {
    const read = await triage([crash.core, "--exe", crash.java]);
    expect([read.kind, read.signal, read.faultAddress, read.access]).toEqual(["null-dereference", "SIGSEGV", "0x8", "read"]);
    expect(read.culprit).toMatchObject({ function: "HeaderReader.readHeader", file: "HeaderReader.java", line: CULPRIT_LINE, language: "java" });
    expect(read.signature).toBe("null-dereference | HeaderReader.readHeader | HeaderReader.handle | HeaderReader.main");
    expect(read.runtime?.name).toBe("jvm");
    expect(read.runtime?.version).toMatch(/^17\./);
    expect(read.runtime?.source).toMatch(/^jhsdb \(JVM 17\./);
    expect(read.origin?.evidence).toMatch(/\(JVM_handle_linux_signal in libjvm\.so\), which then aborted/);
  });

  it("reads the same through LLDB", async () => {
    const read = await triage([crash.core, "--exe", crash.java, "--debugger", "lldb"]);
    expect([read.kind, read.faultAddress, read.signature, read.culprit.line]).toEqual(["null-dereference", "0x8", "null-dereference | HeaderReader.readHeader | HeaderReader.handle | HeaderReader.main", CULPRIT_LINE]);
  });

  it("shows the stack from the culprit out as the program's Java frames, and what the VM's error log named beside it says", async () => {
    const result = await runCli(["triage", crash.core, "--exe", crash.java, "--hs-err", crash.log]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Where: +HeaderReader\.readHeader at HeaderReader\.java:\d+/m);
    expect(result.stdout).toMatch(new RegExp(`#\\d+ HeaderReader\\.readHeader at HeaderReader\\.java:${CULPRIT_LINE}\\n +#\\d+ HeaderReader\\.handle at HeaderReader\\.java:\\d+\\n +#\\d+ HeaderReader\\.main at HeaderReader\\.java:\\d+`));
    expect(result.stdout).toMatch(/Note: +the JVM's own error log was read with the core: .*hs_err_pid\d+\.log records SIGSEGV SEGV_MAPERR at 0x8, in Unsafe_GetLong \(libjvm\.so\)/);
  });

  it("without jhsdb, takes the Java frames from the error log found beside the core: the same culprit, without its line", async () => {
    const dir = tempDir("dumpdbg-jvm-beside-");
    const core = path.join(dir, path.basename(crash.core));
    symlinkSync(crash.core, core);
    copyFileSync(crash.log, path.join(dir, path.basename(crash.log)));
    const read = await triage([core, "--exe", crash.java], NO_JHSDB);
    expect([read.kind, read.faultAddress, read.signature]).toEqual(["null-dereference", "0x8", "null-dereference | HeaderReader.readHeader | HeaderReader.handle | HeaderReader.main"]);
    expect(read.culprit).toMatchObject({ function: "HeaderReader.readHeader", line: null, language: "java" });
    expect(read.runtime?.source).toMatch(/^hs_err_pid\d+\.log \(JVM 17\./);
  });

  it("without jhsdb or the error log keeps the native verdict, the fault it caught, and says what jhsdb would have shown", async () => {
    const read = await triage([crash.core, "--exe", crash.java], NO_JHSDB);
    expect([read.kind, read.faultAddress, read.culprit.function, read.culprit.language, read.runtime]).toEqual(["null-dereference", "0x8", "Unsafe_GetLong", null, null]);
    expect(read.signature).toBe("null-dereference | Unsafe_GetLong");
    const text = await runCli(["triage", crash.core, "--exe", crash.java], { env: NO_JHSDB });
    expect(text.stdout).toMatch(/Note: +the JVM's Java frames were not read: jhsdb jstack --core .*: \/nonexistent\/jhsdb is not there; the JDK's jhsdb would show the Java methods and lines/);
  });

  it("is explained offline as the address the Java method passed to Unsafe, read where the VM faulted", async () => {
    const out = tempDir("dumpdbg-jvm-unsafe-report-");
    const result = await runCli(["analyze", crash.core, "--exe", crash.java, "--offline", "--out", out, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    const confirmed = report.hypotheses.find((h) => h.status === "confirmed");
    expect(confirmed?.statement).toMatch(/`HeaderReader\.readHeader` .*handed `Unsafe_GetLong` \(libjvm\.so\) an address that maps nothing/);
    expect(report.conclusion.summary).toMatch(/^`HeaderReader\.readHeader` .*called `Unsafe_GetLong` \(libjvm\.so\) with the address 0x8, which maps nothing: reading it faulted \(E\d+\)/);
    // The fault is read in the frame the signal interrupted, not in the handler's abort.
    expect(report.conclusion.rootCause).toMatch(/used %r\w+ = 0x8 \(E\d+\), reading 0x8, the fault address/);
    expect(report.conclusion.rootCause).not.toMatch(/pthread_kill/);
  });
});

describe.skipIf(!hasJava)("a JNI library's write through NULL under three Java callers", () => {
  const CULPRIT_LINE = culpritLineOf(JNI_RECORDS_C);
  let crash = { core: "", java: "", log: "" };
  beforeAll(() => {
    crash = crashWithLogAside(jniRecordsCrash, "dumpdbg-jvm-jni-");
  });

  it("blames the C function at its line, in C, with the Java callers above it at their lines", async () => {
    const read = await triage([crash.core, "--exe", crash.java]);
    expect([read.kind, read.faultAddress, read.access]).toEqual(["null-dereference", "0x8", "write"]);
    expect(read.culprit).toMatchObject({ function: "store_record", line: CULPRIT_LINE, language: "c" });
    expect(read.culprit.file).toMatch(/records\.c$/);
    expect(read.signature).toBe("null-dereference | store_record | Java_RecordLoader_parse | RecordLoader.parse");
    const text = await runCli(["triage", crash.core, "--exe", crash.java]);
    expect(text.stdout).toMatch(new RegExp(`#\\d+ RecordLoader\\.apply at RecordLoader\\.java:${lineOf(JNI_RECORDS_JAVA, "return parse(")}`));
  });

  it("without jhsdb, the error log gives the Java callers; without either, the native frames end the signature", async () => {
    const logged = await triage([crash.core, "--exe", crash.java, "--hs-err", crash.log], NO_JHSDB);
    expect([logged.culprit.function, logged.signature]).toEqual(["store_record", "null-dereference | store_record | Java_RecordLoader_parse | RecordLoader.parse"]);
    const bare = await triage([crash.core, "--exe", crash.java], NO_JHSDB);
    expect([bare.kind, bare.culprit.function, bare.culprit.line, bare.signature]).toEqual(["null-dereference", "store_record", CULPRIT_LINE, "null-dereference | store_record | Java_RecordLoader_parse"]);
  });

  it("is explained offline in the C frame, with its variables, not the handler's", async () => {
    const out = tempDir("dumpdbg-jvm-jni-report-");
    const result = await runCli(["analyze", crash.core, "--exe", crash.java, "--offline", "--out", out, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.hypotheses.find((h) => h.status === "confirmed")?.statement).toMatch(/^`\w+` was NULL when `store_record`/);
    // Read in the C frame the signal interrupted: where the NULL came from, and the JNI caller's variables.
    expect(report.conclusion.rootCause).toMatch(/It was assigned at records\.c:\d+: .*find_field.* \(E\d+\)\. That function can return NULL/);
    expect(report.conclusion.rootCause).toMatch(/In `Java_RecordLoader_parse` \(records\.c:\d+\): chars = 0x[0-9a-f]+ "owner=root"/);
    expect(report.conclusion.summary).toMatch(/^`store_record` \(.*records\.c:\d+\) wrote .* through `\w+`, which was NULL/);
  });
});

describe.skipIf(!hasJava)("a JVM whose heap ran out under -XX:+CrashOnOutOfMemoryError", () => {
  let crash = { core: "", java: "", log: "" };
  beforeAll(() => {
    crash = crashWithLogAside(oomCrash, "dumpdbg-jvm-oom-");
  });

  it("is out-of-memory with the error's text and the allocating Java frame, not an abort in the VM", async () => {
    const read = await triage([crash.core, "--exe", crash.java]);
    expect([read.kind, read.message, read.exploitability?.rating]).toEqual(["out-of-memory", "java.lang.OutOfMemoryError: Java heap space", "not-exploitable"]);
    expect(read.culprit).toMatchObject({ function: "ChunkCache.fill", file: "ChunkCache.java", line: culpritLineOf(OOM_JAVA), language: "java" });
    expect(read.signature).toBe("out-of-memory | ChunkCache.fill | ChunkCache.warm | ChunkCache.main");
  });

  it("reads the same through LLDB, the VM's record of its error found at its loaded address", async () => {
    const read = await triage([crash.core, "--exe", crash.java, "--debugger", "lldb"]);
    expect([read.kind, read.message, read.signature]).toEqual(["out-of-memory", "java.lang.OutOfMemoryError: Java heap space", "out-of-memory | ChunkCache.fill | ChunkCache.warm | ChunkCache.main"]);
  });

  it("keeps the kind and the error's text with neither jhsdb nor the error log: the VM's own record of its fatal error", async () => {
    const read = await triage([crash.core, "--exe", crash.java], NO_JHSDB);
    expect([read.kind, read.message, read.runtime]).toEqual(["out-of-memory", "java.lang.OutOfMemoryError: Java heap space", null]);
    // Not the VM's abort machinery: the allocation that failed.
    expect(read.culprit.function).not.toMatch(/^(os::abort|VMError::|report_)/);
    const logged = await triage([crash.core, "--exe", crash.java, "--hs-err", crash.log], NO_JHSDB);
    expect([logged.kind, logged.culprit.function, logged.culprit.line]).toEqual(["out-of-memory", "ChunkCache.fill", null]);
  });

  it("is explained offline from the heap jhsdb read: full, and one type holding it", async () => {
    const out = tempDir("dumpdbg-jvm-oom-report-");
    const result = await runCli(["analyze", crash.core, "--exe", crash.java, "--offline", "--out", out, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    const status = Object.fromEntries(report.hypotheses.map((h) => [h.statement.slice(0, 30), h.status]));
    expect(Object.values(status)).toEqual(["confirmed", "confirmed"]);
    expect(report.conclusion.rootCause).toMatch(/byte\[\] held [\d.]+ MiB of the [\d.]+ MiB in use, in [\d,]+ objects/);
    expect(report.conclusion.summary).toMatch(/^The JVM ran out of memory \(java\.lang\.OutOfMemoryError: Java heap space\) while `ChunkCache\.fill` \(ChunkCache\.java:\d+\) allocated \(E\d+\), with byte\[\] holding most of the heap/);
  });
});
