/**
 * The real cdb, on Windows only: skipped wherever cdb is not on PATH (or named by DUMPDBG_CDB), so
 * a Windows machine with the Debugging Tools for Windows proves what the stand-in
 * (tests/helpers/fake-cdb.mjs) only replays. The dump is written by MiniDumpWriteDump: config-null
 * (tests/fixtures/windows) built natively and run, its crash reporter writing
 * crash.dmp from its unhandled-exception filter. `dumpdbg triage --debugger cdb` must give the
 * verdict the Wine-built dump gives through LLDB, and exec must run cdb's own commands. cdb reads
 * PDBs, not DWARF: the program is built with MSVC's cl (or clang-cl), from a developer prompt.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { canRun } from "../../src/debuggers/backends.js";
import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { windowsCulpritLine } from "../helpers/windows.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const CDB = process.env.DUMPDBG_CDB ?? "cdb";
const cdbOnPath = process.platform === "win32" && canRun(CDB.endsWith(".exe") || CDB.includes("\\") ? CDB : `${CDB}.exe`);
const COMPILER = ["cl", "clang-cl"].find((cc) => process.platform === "win32" && spawnSync(cc, ["/?"]).error === undefined);
const SOURCES = fileURLToPath(new URL("../fixtures/windows/", import.meta.url));

const skipReason = !cdbOnPath ? " (skipped: cdb is not on PATH; Windows only)" : COMPILER === undefined ? " (skipped: no cl or clang-cl: run from a developer prompt)" : "";

describe.skipIf(skipReason !== "")(`the real cdb on a dump written by MiniDumpWriteDump${skipReason}`, () => {
  let dump = "";

  beforeAll(() => {
    const dir = tempDir("dumpdbg-cdb-real-");
    const exe = path.join(dir, "config-null.exe");
    execFileSync(COMPILER!, ["/nologo", "/Zi", "/Od", `/I${SOURCES}`, `/Fe${exe}`, `/Fd${path.join(dir, "config-null.pdb")}`, path.join(SOURCES, "config-null.c"), path.join(SOURCES, "crash-dump.c"), "dbghelp.lib", "/link", "/DEBUG"], { cwd: dir });
    // The crash reporter writes crash.dmp in the working folder and exits with code 3.
    const run = spawnSync(exe, [], { cwd: dir, timeout: 60_000 });
    expect(run.status, String(run.stderr)).toBe(3);
    dump = path.join(dir, "crash.dmp");
    expect(existsSync(dump)).toBe(true);
  });

  it("triages the crash: a null dereference in listen_port, read from the exception record and cdb's stack", async () => {
    const result = await runCli(["triage", dump, "--json", "--debugger", "cdb", "--timeout", "120"]);
    expect(result.code, result.stderr).toBe(0);
    const crash = JSON.parse(result.stdout) as Crash;
    expect(crash).toMatchObject({ kind: "null-dereference", signal: "EXCEPTION_ACCESS_VIOLATION", faultAddress: "0x20", access: "read" });
    expect(crash.culprit.function).toBe("listen_port");
    expect(crash.culprit.line).toBe(windowsCulpritLine("config-null"));
  });

  it("runs cdb's commands through exec, in the exception context, and refuses .shell", async () => {
    const result = await runCli(["exec", dump, "--debugger", "cdb", "--json", "-c", ".exr -1", "-c", "kn", "-c", "~", "-c", "lm", "-c", ".shell dir"]);
    const [exr, kn, threads, modules, shell] = JSON.parse(result.stdout) as { ok: boolean; output: string; errorType: string | null }[];
    expect(exr?.output).toMatch(/ExceptionCode: c0000005/);
    expect(kn?.output).toMatch(/listen_port/);
    expect(threads?.output).toMatch(/Id: [0-9a-f]+\.[0-9a-f]+ Suspend/);
    expect(modules?.output).toMatch(/config_null/);
    expect(shell?.errorType).toBe("not_allowed");
  });

  it("reads !analyze -v into the exception, the bucket and the culprit", async () => {
    const { parseAnalyze } = await import("../../src/debuggers/cdb/text/exception.js");
    const result = await runCli(["exec", dump, "--debugger", "cdb", "--json", "--timeout", "300", "-c", "!analyze -v"]);
    const [analyze] = JSON.parse(result.stdout) as { ok: boolean; output: string }[];
    const report = parseAnalyze(analyze?.output ?? "");
    expect(report.exception?.code).toBe("0xc0000005");
    expect(report.bucket).toMatch(/c0000005/i);
  });
});
