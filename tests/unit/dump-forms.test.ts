/**
 * The pure readers of dumps as Linux keeps them: compression recognised by content with the sizes
 * the formats declare (files written by the real zstd, lz4, xz and gzip tools), apport's report
 * format, systemd-coredump's names, attributes and coredumpctl's JSON, and the verdict of a report
 * that kept no core.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";

import { textVerdict } from "../../src/analyzers/report-text.js";
import { ApportReader, apportFacts, isApportReport, readApportText } from "../../src/debuggers/dumpfile/apport.js";
import { parseCoredumpAttributes, parseCoredumpctlJson, parseCoredumpName } from "../../src/debuggers/dumpfile/coredump-name.js";
import { DumpFile } from "../../src/debuggers/dumpfile/file.js";
import { declaredBytes, packingOf, zstdContentSize } from "../../src/debuggers/dumpfile/packed.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

describe("compressed dumps by content", () => {
  const dir = tempDir("dumpdbg-packed-");
  const plain = path.join(dir, "plain");
  // Not a core, but bytes of a known size: what matters here is what the formats declare.
  writeFileSync(plain, Buffer.alloc(300_000, "core data "));
  const made = (tool: string, args: string[], name: string) => {
    const out = path.join(dir, name);
    writeFileSync(out, execFileSync(tool, [...args, plain]));
    return out;
  };
  const declared = (file: string) => {
    const dump = DumpFile.open(file);
    try {
      const head = dump.read(0, 16, "head");
      const packing = packingOf(head);
      return { packing, bytes: packing ? declaredBytes(packing, dump) : null };
    } finally {
      dump.close();
    }
  };

  it("reads zstd's frame content size", () => {
    expect(declared(made("zstd", ["-q", "-c"], "a.zst"))).toEqual({ packing: "zstd", bytes: 300_000 });
  });

  it("reads lz4's content size when the frame carries one, and none otherwise", () => {
    expect(declared(made("lz4", ["-q", "-c", "--content-size"], "a.lz4"))).toEqual({ packing: "lz4", bytes: 300_000 });
    expect(declared(made("lz4", ["-q", "-c"], "b.lz4"))).toEqual({ packing: "lz4", bytes: null });
    expect(declared(made("lz4", ["-q", "-c", "-l"], "legacy.lz4"))).toEqual({ packing: "lz4", bytes: null });
  });

  it("reads xz's index of a single stream, and declines two streams", () => {
    const one = made("xz", ["-q", "-c"], "a.xz");
    expect(declared(one)).toEqual({ packing: "xz", bytes: 300_000 });
    const two = path.join(dir, "two.xz");
    writeFileSync(two, Buffer.concat([readFileSync(one), readFileSync(one)]));
    expect(declared(two)).toEqual({ packing: "xz", bytes: null });
  });

  it("recognises gzip, which declares no usable size, and nothing else", () => {
    expect(declared(made("gzip", ["-c"], "a.gz"))).toEqual({ packing: "gzip", bytes: null });
    expect(packingOf(Buffer.from("\x7fELF\x02\x01\x01\0\0\0", "latin1"))).toBeNull();
    expect(packingOf(Buffer.from("MDMP\x93\xa7\0\0", "latin1"))).toBeNull();
  });

  it("reads the one-, two- and eight-byte forms of zstd's size", () => {
    const frame = (descriptor: number, size: Buffer) => Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, descriptor]), size]);
    // Single segment, one-byte size.
    expect(zstdContentSize(frame(0x20, Buffer.from([200])))).toBe(200);
    // Two bytes, stored less 256, after the window descriptor.
    expect(zstdContentSize(frame(0x40, Buffer.from([0x00, 0x00, 0x10])))).toBe(0x1000 + 256);
    const eight = Buffer.alloc(9);
    eight.writeBigUInt64LE(5n * 2n ** 32n, 1);
    expect(zstdContentSize(frame(0xc0, eight))).toBe(5 * 2 ** 32);
    // No size field at all.
    expect(zstdContentSize(frame(0x00, Buffer.from([0x00])))).toBeNull();
  });
});

/** A report written as apport's problem_report writes one, core and all. */
function apportText(fields: Record<string, string>, core: Buffer | null): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    lines.push(value.includes("\n") ? `${key}:\n ${value.replaceAll("\n", "\n ")}` : `${key}: ${value}`);
  }
  if (core) {
    const gz = gzipSync(core);
    lines.push("CoreDump: base64");
    // The gzip header on its line, then the data a piece a line.
    for (let at = 0; at < gz.length; at += 57) lines.push(` ${gz.subarray(at, Math.min(gz.length, at + 57)).toString("base64")}`);
  }
  return `${lines.join("\n")}\n`;
}

describe("apport reports", () => {
  const fields = {
    ProblemType: "Crash",
    Date: "Mon Nov 23 10:00:00 2026",
    ExecutablePath: "/usr/bin/server",
    Package: "server 1.2-3",
    ProcCmdline: "/usr/bin/server --port 8080",
    ProcMaps: "55d0c0000000-55d0c0001000 r--p 00000000 08:01 42 /usr/bin/server\n7f0000000000-7f0000022000 r--p 00000000 08:01 43 /usr/lib/x86_64-linux-gnu/libc.so.6",
    Signal: "11",
    Stacktrace: "#0  0x000055d0c0001139 in send_to_client (c=0x0) at server.c:27\n        fd = 4\n#1  0x000055d0c0001170 in broadcast () at server.c:35",
  };

  it("reads fields, continuation lines and the core's base64 a line at a time", () => {
    const core = Buffer.from("\x7fELF pretend core".repeat(50), "latin1");
    const reader = new ApportReader();
    const pieces: Buffer[] = [];
    for (const line of apportText(fields, core).split("\n")) {
      const bytes = reader.line(line);
      if (bytes) pieces.push(bytes);
    }
    const report = reader.report();
    expect(report.hasCore).toBe(true);
    expect(report.fields.get("ProcCmdline")).toBe("/usr/bin/server --port 8080");
    expect(report.fields.get("Stacktrace")?.split("\n")).toHaveLength(3);
    expect(gzipSync(core).equals(Buffer.concat(pieces))).toBe(true);
    const facts = apportFacts(report);
    expect(facts).toMatchObject({ executablePath: "/usr/bin/server", signal: 11, package: "server 1.2-3", mappings: { count: 2, program: [fields.ProcMaps.split("\n")[0]] } });
  });

  it("bounds every field, and refuses what is not a report", () => {
    const report = readApportText(`ProblemType: Crash\nStacktrace:\n${" x".repeat(1)}\n${` ${"y".repeat(200_000)}`}\n`);
    expect(report.fields.get("Stacktrace")!.length).toBeLessThanOrEqual(64 * 1024);
    expect(report.cut).toEqual(["Stacktrace"]);
    expect(isApportReport(Buffer.from("ProblemType: Crash\n"))).toBe(true);
    expect(isApportReport(Buffer.from("Package: x\n"))).toBe(false);
    expect(() => readApportText("ProblemType: Crash\nnot a field line\n")).toThrow(/neither a field/);
    expect(() => readApportText("ProblemType: Crash\nCoreDump: base64\n not*base64\n")).toThrow(/not base64/);
  });

  it("gives a report without a core its verdict from the signal and the stack trace", () => {
    const facts = apportFacts(readApportText(apportText(fields, null)));
    expect(textVerdict(facts)).toMatchObject({ kind: "invalid-memory-access", signal: "SIGSEGV", program: "/usr/bin/server", package: "server 1.2-3", function: "send_to_client" });
    const aborted = apportFacts(readApportText(apportText({ ...fields, Signal: "6", AssertionMessage: "server: server.c:27: send: Assertion `c' failed." }, null)));
    expect(textVerdict(aborted).kind).toBe("assertion-failure");
    expect(textVerdict(apportFacts(readApportText("ProblemType: Crash\n"))).kind).toBe("unknown");
  });
});

describe("systemd-coredump", () => {
  it("reads its file names, with comm's escaped dots", () => {
    expect(parseCoredumpName("core.server.1000.0123456789abcdef0123456789abcdef.4242.1764410000000000.zst")).toEqual({ comm: "server", uid: 1000, bootId: "0123456789abcdef0123456789abcdef", pid: 4242, timestampUs: 1764410000000000 });
    expect(parseCoredumpName("core.my\\x2eapp.0.0123456789abcdef0123456789abcdef.7.1764410000000000")?.comm).toBe("my.app");
    expect(parseCoredumpName("core.1234")).toBeNull();
  });

  it("reads getfattr's hex dump of its attributes, leaving out what it cannot trust", () => {
    const hex = (text: string) => `0x${Buffer.from(text).toString("hex")}`;
    const output = [
      "# file: /var/lib/systemd/coredump/core.server.1000.x.4242.1.zst",
      `user.coredump.exe=${hex("/usr/bin/server")}`,
      `user.coredump.pid=${hex("4242")}`,
      `user.coredump.signal=${hex("11")}`,
      `user.coredump.timestamp=${hex("1764410000000000")}`,
      `user.coredump.hostname=${hex("build\nbox")}`,
      `user.coredump.uid=${hex("not a number")}`,
    ].join("\n");
    expect(parseCoredumpAttributes(output)).toEqual({ exe: "/usr/bin/server", pid: 4242, uid: null, signal: 11, timestampUs: 1764410000000000, comm: null, hostname: null });
  });

  it("reads coredumpctl's JSON list", () => {
    const json = JSON.stringify([{ time: 1764410000000000, pid: 4242, uid: 1000, gid: 1000, sig: 11, corefile: "present", exe: "/usr/bin/server", size: 1000 }, { pid: "x" }]);
    expect(parseCoredumpctlJson(json)).toEqual([{ pid: 4242, exe: "/usr/bin/server", signal: 11, timestampUs: 1764410000000000, corefile: "present" }]);
    expect(parseCoredumpctlJson("No coredumps found.")).toEqual([]);
  });
});
