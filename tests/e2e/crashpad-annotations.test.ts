/**
 * Crashpad's own stream in a minidump (MINIDUMP_CRASHPAD_INFO): the report and client ids, the
 * process's simple annotations, and each module's list annotations, key-value pairs and annotation
 * objects. A real abort() of a fixture program, written in Breakpad's layout, with the stream
 * Crashpad's client adds (libc's "abort() called", the product's keys): triage and the reports
 * carry them, and the abort's message comes from them when glibc left none.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DumpFile, readMinidump } from "../../src/debuggers/dumpfile/index.js";
import type { Crash } from "../../src/report/schema.js";
import { breakpadMinidumpFromCore } from "../helpers/breakpad.js";
import { runCli } from "../helpers/cli.js";
import { buildCore, culpritLine, type BuiltCore } from "../helpers/cores.js";
import { withCrashpadInfo } from "../helpers/crashpad-info.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const dir = tempDir("dumpdbg-crashpad-");
const REPORT_ID = Buffer.from("00112233445566778899aabbccddeeff", "hex");
let built: BuiltCore;
let dump: string;

function modulesOf(file: string): string[] {
  const opened = DumpFile.open(file);
  try {
    return readMinidump(opened).modules.map((module) => module.path);
  } finally {
    opened.close();
  }
}

beforeAll(async () => {
  built = await buildCore("abort");
  const plain = path.join(dir, "abort.dmp");
  await breakpadMinidumpFromCore(built.core, built.exe, plain);
  const modules = modulesOf(plain);
  const libc = modules.findIndex((module) => /\/libc\.so\.6$/.test(module));
  expect(libc).toBeGreaterThan(0);
  dump = path.join(dir, "abort-crashpad.dmp");
  writeFileSync(
    dump,
    withCrashpadInfo(readFileSync(plain), {
      reportId: REPORT_ID,
      simple: { prod: "config-service", ver: "4.2.1", channel: "beta" },
      modules: [
        { index: libc, list: ["abort() called"] },
        { index: 0, simple: { build: "release" }, objects: { last_request: "GET /config" } },
      ],
    }),
  );
}, 120_000);

describe("a minidump with Crashpad's annotations", () => {
  it("is read by dumpdbg's reader: ids, the process's pairs, each module's annotations", () => {
    const file = DumpFile.open(dump);
    try {
      const facts = readMinidump(file);
      expect(facts.problems).toEqual([]);
      expect(facts.streams).toContain("CrashpadInfo");
      expect(facts.crashpad).toMatchObject({ reportId: "33221100-5544-7766-8899-aabbccddeeff", clientId: null, simple: { prod: "config-service", ver: "4.2.1", channel: "beta" } });
      expect(facts.crashpad?.modules).toEqual([
        { module: expect.stringMatching(/\/libc\.so\.6$/), list: ["abort() called"], simple: {}, objects: {} },
        { module: facts.modules[0]?.path, list: [], simple: { build: "release" }, objects: { last_request: "GET /config" } },
      ]);
    } finally {
      file.close();
    }
  });

  it("triage carries them, and the abort's message is libc's last words from them", async () => {
    const run = await runCli(["triage", dump, "--exe", built.exe, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout) as Crash;
    expect(crash).toMatchObject({ kind: "abort", culprit: { function: "validate_config", line: culpritLine("abort") }, message: "abort() called", origin: { type: "raised" } });
    expect(crash.annotations?.simple).toEqual({ prod: "config-service", ver: "4.2.1", channel: "beta" });
    const text = await runCli(["triage", dump, "--exe", built.exe]);
    expect(text.stdout).toMatch(/^Annotated: report 33221100-5544-7766-8899-aabbccddeeff; prod = config-service; ver = 4\.2\.1; channel = beta; libc\.so\.6: "abort\(\) called"; abort: build = release; abort: last_request = GET \/config$/m);
  }, 60_000);

  it("the analysis's report shows them", async () => {
    const run = await runCli(["analyze", dump, "--exe", built.exe, "--provider", "offline", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { session: { id: string }; crash: Crash };
    expect(report.crash.annotations?.modules[0]?.list).toEqual(["abort() called"]);
    const markdown = readFileSync(path.join(dir, "reports", `${report.session.id}.md`), "utf8");
    expect(markdown).toMatch(/\| Annotations \| report 33221100-5544-7766-8899-aabbccddeeff; prod = config-service;/);
  }, 120_000);
});
