/**
 * PDBs on a real build: config-null.c, compiled by clang-16 with CodeView and linked by lld-16
 * into an executable without DWARF and a PDB, crashed under Wine where its crash reporter writes
 * crash.dmp (tests/helpers/windows-pdb.ts). The PDB's identity must be the one the executable's
 * CodeView record gives (which a minidump written on Windows copies into its module list) and the
 * one LLVM's llvm-pdbutil prints; the executable's identity what objdump reads from its headers.
 * And what LLDB 16 on Linux needs to use the PDB: it is read only once `target symbols add`ed.
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { DumpFile, readMinidump, type MinidumpFacts } from "../../src/debuggers/dumpfile/index.js";
import { readPeIdentity } from "../../src/debuggers/dumpfile/pe.js";
import { readPdbIdentity, type PdbIdentity } from "../../src/debuggers/symbols/pdb.js";
import { buildPdbMinidump, missingPdbTools, type BuiltPdbMinidump } from "../helpers/windows-pdb.js";
import { WINE_DLLS, windowsCulpritLine } from "../helpers/windows.js";

const execFileAsync = promisify(execFile);
const OBJDUMP = "x86_64-w64-mingw32-objdump";
const PDBUTIL = "/usr/bin/llvm-pdbutil-16";
const LLDB = "/usr/bin/lldb-16";
const BUILD_TIMEOUT_MS = 300_000;

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const missing = missingPdbTools();
const skipReason = missing.length > 0 ? ` (skipped: ${missing.join(", ")} not installed)` : "";

let built: BuiltPdbMinidump;
let scratch: string;

function pdbIdentity(file: string): PdbIdentity {
  const opened = DumpFile.open(file);
  try {
    return readPdbIdentity(opened);
  } finally {
    opened.close();
  }
}

function minidumpFacts(file: string): MinidumpFacts {
  const opened = DumpFile.open(file);
  try {
    return readMinidump(opened);
  } finally {
    opened.close();
  }
}

async function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { stdout, stderr } = await execFileAsync(command, args, { env, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
  return stdout + stderr;
}

/** The dump with `record` as the CodeView record of its module `index`, where dbghelp on Windows writes one; Wine's leaves them all empty. */
function withCodeViewRecord(dump: Buffer, index: number, record: Buffer): Buffer {
  const copy = Buffer.concat([dump, record]);
  const directory = copy.readUInt32LE(12);
  const MODULE_LIST = 4;
  for (let i = 0; i < copy.readUInt32LE(8); i++) {
    if (copy.readUInt32LE(directory + i * 12) !== MODULE_LIST) continue;
    const module = copy.readUInt32LE(directory + i * 12 + 8) + 4 + index * 108;
    copy.writeUInt32LE(record.length, module + 76);
    copy.writeUInt32LE(dump.length, module + 80);
    return copy;
  }
  throw new Error("the dump has no module list");
}

describe.skipIf(missing.length > 0)(`a program whose debug information is a PDB${skipReason}`, () => {
  beforeAll(async () => {
    built = await buildPdbMinidump("config-null");
    scratch = await mkdtemp(path.join(os.tmpdir(), "dumpdbg-pdb-"));
  }, BUILD_TIMEOUT_MS);
  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it("is built without DWARF in the executable, and crashed under Wine", async () => {
    expect(await run(OBJDUMP, ["-h", built.exe])).not.toMatch(/\.debug_/);
    expect(built.output).toMatch(/unhandled exception 0xc0000005: writing crash\.dmp/);
  });

  it("reads the executable's identity as objdump reads its headers: CodeView GUID, age and PDB path, TimeDateStamp, SizeOfImage", async () => {
    const headers = await run(OBJDUMP, ["-p", built.exe], { ...process.env, TZ: "UTC" });
    const format = /\(format RSDS signature ([0-9a-f]{32}) age (\d+) pdb (.+)\)$/m.exec(headers);
    const stamp = /^Time\/Date\s+\w{3} (\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{4})$/m.exec(headers);
    const size = /^SizeOfImage\s+([0-9a-f]+)$/m.exec(headers);
    if (!format || !stamp || !size) throw new Error(`objdump -p shows no CodeView record, Time/Date or SizeOfImage:\n${headers}`);
    const [, month = "", day, hours, minutes, seconds, year] = stamp;
    const timeDateStamp = Date.UTC(Number(year), "JanFebMarAprMayJunJulAugSepOctNovDec".indexOf(month) / 3, Number(day), Number(hours), Number(minutes), Number(seconds)) / 1000;
    const sizeOfImage = Number.parseInt(size[1] ?? "", 16);

    const identity = readPeIdentity(built.exe);
    expect(identity).toEqual({
      codeId: `${timeDateStamp.toString(16).padStart(8, "0").toUpperCase()}${sizeOfImage.toString(16)}`,
      timeDateStamp,
      sizeOfImage,
      codeView: { id: `${format[1]}${Number(format[2]).toString(16)}`.toUpperCase(), debugFile: format[3] },
    });
    expect(identity.codeView?.debugFile).toBe(built.pdbPath);
  });

  it("reads the PDB's identity: the id the executable's CodeView record gives", () => {
    const pdb = pdbIdentity(built.pdb);
    expect(pdb.id).toMatch(/^[0-9A-F]{33,40}$/);
    expect(pdb.id).toBe(readPeIdentity(built.exe).codeView?.id);
    // lld writes the same age, 1, in the info stream, the DBI stream and the executable.
    expect([pdb.age, pdb.infoAge]).toEqual([1, 1]);
  });

  it.skipIf(!executable(PDBUTIL))("reads the GUID, age and signature llvm-pdbutil prints", async () => {
    const summary = await run(PDBUTIL, ["dump", "--summary", built.pdb]);
    const pdb = pdbIdentity(built.pdb);
    expect(/^\s*GUID: \{([0-9A-F-]+)\}$/m.exec(summary)?.[1]).toBe(pdb.guid);
    expect(Number(/^\s*Age: (\d+)$/m.exec(summary)?.[1])).toBe(pdb.age);
    expect(Number(/^\s*Signature: (\d+)$/m.exec(summary)?.[1])).toBe(pdb.signature);
  });

  it("gives the dump's executable module its code id, and with its CodeView record (Wine writes none) the PDB's id and path", async () => {
    const facts = minidumpFacts(built.dump);
    const index = facts.modules.findIndex((m) => m.path.toLowerCase().endsWith("\\config-null.exe"));
    const module = facts.modules[index];
    const exe = readPeIdentity(built.exe);
    expect(module?.codeId).toBe(exe.codeId);
    expect(facts.modules.every((m) => m.codeId !== null)).toBe(true);

    // The record as the linker wrote it in the executable, where dbghelp on Windows copies it from.
    const headers = await run(OBJDUMP, ["-p", built.exe]);
    const entry = /^\s*2\s+CodeView\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s*$/m.exec(headers);
    if (!entry) throw new Error(`objdump -p shows no CodeView debug entry:\n${headers}`);
    const offset = Number.parseInt(entry[2] ?? "", 16);
    const record = (await readFile(built.exe)).subarray(offset, offset + Number.parseInt(entry[1] ?? "", 16));
    const dump = module?.buildId ? built.dump : path.join(scratch, "with-codeview.dmp");
    if (!module?.buildId) await writeFile(dump, withCodeViewRecord(await readFile(built.dump), index, record));
    const written = minidumpFacts(dump).modules[index];
    expect(written?.buildId).toBe(pdbIdentity(built.pdb).id);
    expect(written?.debugFile).toBe(built.pdbPath);
  });

  describe.skipIf(!executable(LLDB))("in LLDB 16", () => {
    /** `bt` of the crashing thread, with Wine's DLLs to unwind msvcrt's atoi; the PDB lies beside the executable. */
    const backtrace = (...commands: string[]) =>
      run(LLDB, ["--batch", "-o", `settings set target.exec-search-paths ${path.dirname(built.exe)} ${WINE_DLLS}`, "-o", `target create --core ${built.dump} ${built.exe}`, ...commands.flatMap((c) => ["-o", c]), "-o", "bt"]);

    it("names the culprit function and line once the PDB is added with `target symbols add`", async () => {
      const trace = await backtrace(`target symbols add ${built.pdb}`);
      expect(trace).toMatch(new RegExp(`config-null\\.exe\`listen_port\\(config=0x[0-9a-f]+\\) at config-null\\.c:${windowsCulpritLine("config-null")}\\n`));
    });

    it("finds no PDB beside the executable by itself: it looks for the record's Windows path whole", async () => {
      const trace = await backtrace();
      expect(trace).toMatch(/frame #\d+: 0x[0-9a-f]+ config-null\.exe\n/);
      expect(trace).not.toMatch(/listen_port/);
    });
  });
});
