/**
 * Ubuntu's apport reports: `.crash` files written in the layout apport's problem_report module
 * writes (text fields sorted after ProblemType, then `CoreDump: base64` whose lines hold the base64
 * of a gzip stream a piece at a time) around a real core of a crashing C program. The core is taken
 * out and triaged, the report's fields shown as evidence; a report that kept only its stack trace
 * is answered from its text, said plainly, with no debugger; batch reads both.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

let built: BuiltCore;
let dir: string;
let tmp: string;
const env = () => ({ TMPDIR: tmp });

/** A report as apport writes one: ASCII fields (ProblemType first, then sorted), then the core. */
function apportReport(fields: Record<string, string>, core: Buffer | null): Buffer {
  const keys = Object.keys(fields).filter((k) => k !== "ProblemType").sort();
  const parts: string[] = [];
  for (const key of ["ProblemType", ...keys]) {
    const value = fields[key] ?? "";
    parts.push(value.includes("\n") ? `${key}:\n ${value.replaceAll("\n", "\n ")}\n` : `${key}: ${value}\n`);
  }
  if (core) {
    const gz = gzipSync(core);
    // apport's own header names the field; then raw deflate in pieces, the last with the crc and size.
    const header = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x08, 0, 0, 0, 0, 0x02, 0xff]), Buffer.from("CoreDump\0")]);
    const deflate = gz.subarray(10, gz.length - 8);
    const pieces = [header];
    for (let at = 0; at < deflate.length; at += 4096) pieces.push(deflate.subarray(at, at + 4096));
    pieces.push(gz.subarray(gz.length - 8));
    parts.push(`CoreDump: base64\n ${pieces.map((p) => p.toString("base64")).join("\n ")}\n`);
  }
  return Buffer.from(parts.join(""));
}

const FIELDS = (exe: string) => ({
  ProblemType: "Crash",
  Date: "Sun Nov 29 10:00:00 2026",
  ExecutablePath: exe,
  Package: "null-deref 1.0-1",
  ProcCmdline: `${exe} --clients 3`,
  ProcMaps: `55d0c0000000-55d0c0001000 r--p 00000000 08:01 42 ${exe}\n7f0000000000-7f0000022000 r--p 00000000 08:01 43 /usr/lib/x86_64-linux-gnu/libc.so.6`,
  Signal: "11",
  Uname: "Linux 6.8.0-45-generic x86_64",
});

beforeAll(async () => {
  built = await buildCore("null-deref");
  dir = tempDir("dumpdbg-apport-");
  tmp = tempDir("dumpdbg-apport-tmp-");
  writeFileSync(path.join(dir, "_usr_bin_null-deref.1000.crash"), apportReport(FIELDS(built.exe), readFileSync(built.core)));
  writeFileSync(
    path.join(dir, "_usr_bin_server.1000.crash"),
    apportReport(
      {
        ...FIELDS("/usr/bin/server"),
        Package: "server 2.4-1ubuntu1",
        Stacktrace: "#0  0x000055d0c0001139 in send_to_client (c=0x0) at server.c:27\n        fd = 4\n#1  0x000055d0c0001170 in broadcast () at server.c:35\n#2  0x000055d0c00011a0 in main () at server.c:50",
        ThreadStacktrace: ".\nThread 1 (Thread 0x7f0000000740 (LWP 4242)):\n#0  0x000055d0c0001139 in send_to_client (c=0x0) at server.c:27",
      },
      null,
    ),
  );
}, 300_000);

describe("apport reports", () => {
  it("triages the core a report carries and shows what apport recorded", async () => {
    const report = path.join(dir, "_usr_bin_null-deref.1000.crash");
    const before = readFileSync(report);
    const result = await runCli(["triage", report, "--json"], { env: env() });
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { kind: string }).kind).toBe("null-dereference");
    expect(result.stderr).toMatch(/_usr_bin_null-deref\.1000\.crash: the core of the apport report, decompressed \(.* to 440 KiB/);
    expect(result.stderr).toContain(`apport recorded program ${built.exe}, package null-deref 1.0-1, signal 11, command line "${built.exe} --clients 3", 2 mappings in ProcMaps`);
    expect(readFileSync(report).equals(before)).toBe(true);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("answers a report without its core from its text, with no debugger", async () => {
    const report = path.join(dir, "_usr_bin_server.1000.crash");
    // A gdb that cannot start proves none is needed.
    const result = await runCli(["triage", report, "--gdb", "/nonexistent/gdb"], { env: env() });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("is an apport report without its core: read from its text, with no debugger");
    expect(result.stdout).toContain("Crash:     invalid-memory-access (SIGSEGV, as apport recorded it; without the core the fault address is unknown)");
    expect(result.stdout).toContain("Program:   /usr/bin/server (package server 2.4-1ubuntu1)");
    expect(result.stdout).toContain("Where:     send_to_client, the first frame of apport's stack trace");
    expect(result.stdout).toContain("  #1  0x000055d0c0001170 in broadcast () at server.c:35");
    const json = await runCli(["analyze", report, "--provider", "offline", "--json"], { env: env(), cwd: tempDir("dumpdbg-apport-run-") });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ core: null, kind: "invalid-memory-access", function: "send_to_client", package: "server 2.4-1ubuntu1" });
    // exec needs a debugger and a dump: one line saying so.
    const exec = await runCli(["exec", report, "-c", "bt"], { env: env() });
    expect(exec.code).toBe(3);
    expect(exec.stderr).toMatch(/^dumpdbg: .*is an apport report without its core \(apport kept its stack trace\): dumpdbg triage shows what it holds\n$/);
  });

  it("refuses a damaged report in one line", async () => {
    const bad = path.join(tempDir("dumpdbg-apport-bad-"), "x.crash");
    writeFileSync(bad, "ProblemType: Crash\nCoreDump: base64\n H4sICAAAAAAC/0NvcmVEdW1wAA==\n !!!not base64\n");
    const result = await runCli(["triage", bad], { env: env() });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^dumpdbg: .*x\.crash is not a readable apport report: a line of its CoreDump is not base64\n$/);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("batch reads reports in a folder with the rest", async () => {
    const folder = tempDir("dumpdbg-apport-batch-");
    for (const name of readdirSync(dir)) copyFileSync(path.join(dir, name), path.join(folder, name));
    copyFileSync(built.core, path.join(folder, "core"));
    const out = tempDir("dumpdbg-apport-out-");
    mkdirSync(path.join(out, "sessions"));
    const result = await runCli(["batch", folder, "--json", "--jobs", "2", "--out", out, "--sessions-dir", path.join(out, "sessions")], { env: env() });
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout) as { groups: { kind: string; count: number }[]; errors: { dump: string; error: string }[] };
    expect(doc.groups).toEqual([expect.objectContaining({ kind: "null-dereference", count: 2 })]);
    expect(JSON.stringify(doc)).toContain("_usr_bin_server.1000.crash is an apport report without its core");
    expect(readdirSync(tmp)).toEqual([]);
  });
});
