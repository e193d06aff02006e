/**
 * Dumps read away from the machine that wrote them. A core whose program is given from another
 * path than the core names is that program (its build id says so), not one missing here. And
 * Breakpad minidumps as a crash-reporting service processes them: the dump and the program's
 * symbol file, without the program or its libraries (the paths the dump names do not exist here).
 * A missing file is unknown, never evidence: each memory fault keeps the kind, the access and a
 * rating no higher than with the program at hand, with the symbol file the same culprit and line,
 * and without anything a note that says what is missing instead of a verdict that differs.
 */
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

import type { Crash } from "../../src/report/schema.js";
import { breakpadMinidumpFromCore } from "../helpers/breakpad.js";
import { writeBreakpadSymbols } from "../helpers/breakpad-sym.js";
import { runCli } from "../helpers/cli.js";
import { buildCore, culpritLine, type BuiltCore } from "../helpers/cores.js";
import { movedAway, STREAM, withoutStreams } from "../helpers/dump-edits.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const FAULTS = [
  { name: "null-write", kind: "null-dereference", access: "write", culprit: "cache_store", rating: "probably-exploitable" },
  { name: "null-deref", kind: "null-dereference", access: "read", culprit: "send_to_client", rating: "probably-not-exploitable" },
  { name: "write-rodata", kind: "invalid-memory-access", access: "write", culprit: "normalize_header_name", rating: "exploitable" },
  { name: "wild-pointer", kind: "invalid-memory-access", access: "read", culprit: "buffer_length", rating: "unknown" },
  { name: "bad-jump", kind: "bad-jump", access: "execute", culprit: "dispatch_command", rating: "probably-exploitable" },
] as const;

const RANK = ["not-exploitable", "probably-not-exploitable", "unknown", "probably-exploitable", "exploitable"];

interface Away {
  built: BuiltCore;
  /** The dump as the machine wrote it, read here with the program at hand. */
  dump: string;
  /** The same dump, naming a program and libraries this machine does not have. */
  away: string;
  /** That, also without the Linux maps stream: only the module list says where modules lie. */
  withoutMaps: string;
  symbols: string;
}

const dumps = new Map<string, Away>();

/** Writes `out` as `dump` edited. */
function editDump(dump: string, out: string, edit: (bytes: Buffer) => Buffer): string {
  writeFileSync(out, edit(readFileSync(dump)));
  return out;
}

async function triage(args: string[]): Promise<{ crash: Crash; stderr: string }> {
  const result = await runCli(["triage", ...args, "--json"]);
  expect(result.code, result.stderr).toBe(0);
  return { crash: JSON.parse(result.stdout) as Crash, stderr: result.stderr };
}

async function triageText(args: string[]): Promise<string> {
  const result = await runCli(["triage", ...args]);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

beforeAll(async () => {
  const dir = tempDir("dumpdbg-away-");
  for (const fault of FAULTS) {
    const built = await buildCore(fault.name);
    const dump = path.join(dir, `${fault.name}.dmp`);
    await breakpadMinidumpFromCore(built.core, built.exe, dump);
    // The program's folder and the system's library folders, each moved to a same-length path nobody has.
    const away = editDump(dump, path.join(dir, `${fault.name}.away.dmp`), (bytes) => movedAway(bytes, [path.dirname(built.exe), "/usr/lib/", "/lib/x86_64-linux-gnu/", "/lib64/"]));
    const withoutMaps = editDump(away, path.join(dir, `${fault.name}.no-maps.dmp`), (bytes) => withoutStreams(bytes, [STREAM.linuxMaps]));
    const symbols = path.join(dir, `${fault.name}-symbols`);
    await writeBreakpadSymbols(built.exe, symbols);
    dumps.set(fault.name, { built, dump, away, withoutMaps, symbols });
  }
});

function get(name: string): Away {
  const found = dumps.get(name);
  if (!found) throw new Error(`no dump was made of ${name}`);
  return found;
}

/** What the tests compare: kind, access, culprit, line and rating. */
const verdictOf = (crash: Crash) => [crash.kind, crash.access, crash.culprit.function, crash.culprit.line, crash.exploitability?.rating];
const expectedOf = (fault: (typeof FAULTS)[number]) => [fault.kind, fault.access, fault.culprit, culpritLine(fault.name), fault.rating];

describe.each(FAULTS)("a Breakpad minidump of $name read away from its machine", (fault) => {
  it("with the program at hand, reads the fault the core shows", async () => {
    const { crash } = await triage([get(fault.name).dump, "--exe", get(fault.name).built.exe]);
    expect(verdictOf(crash)).toEqual(expectedOf(fault));
  });

  it("with its symbol file alone, reads the same kind, culprit, line and rating", async () => {
    const { crash } = await triage([get(fault.name).away, "--symbols", get(fault.name).symbols]);
    expect(verdictOf(crash)).toEqual(expectedOf(fault));
    expect((crash.exploitability?.reasons ?? []).join(" ")).not.toMatch(/which is no code/);
  });

  it("with nothing but the dump, keeps the kind and the access, names no culprit, and says the program is not here", async () => {
    const { crash } = await triage([get(fault.name).away]);
    expect([crash.kind, crash.access, crash.culprit.function]).toEqual([fault.kind, fault.access, null]);
    expect(RANK.indexOf(crash.exploitability?.rating ?? "")).toBeLessThanOrEqual(RANK.indexOf(fault.rating));
    const text = await triageText([get(fault.name).away]);
    // A fault through a NULL function pointer stops outside any module: there the pc says nothing of a missing file.
    if (fault.kind !== "bad-jump") expect(text).toMatch(/Note: +the pc lies in the program \(.*\), whose file is not here/);
  });

  it("without the maps stream too, where only the module list places the program, keeps the kind", async () => {
    const { crash } = await triage([get(fault.name).withoutMaps]);
    expect([crash.kind, crash.access]).toEqual([fault.kind, fault.access]);
    expect(RANK.indexOf(crash.exploitability?.rating ?? "")).toBeLessThanOrEqual(RANK.indexOf(fault.rating));
  });
});

describe("a core whose program is given from another folder than the one it ran from", () => {
  it("is read with the program's code: the faulting write and its rating, and no library said missing", async () => {
    const built = await buildCore("null-write");
    const copy = path.join(tempDir("dumpdbg-away-program-"), "null-write");
    copyFileSync(built.exe, copy);
    const { crash } = await triage([built.core, "--exe", copy]);
    expect([crash.kind, crash.access, crash.culprit.function, crash.exploitability?.rating]).toEqual(["null-dereference", "write", "cache_store", "probably-exploitable"]);
    expect(await triageText([built.core, "--exe", copy])).not.toMatch(/another machine|not on this machine/);
  });
});
