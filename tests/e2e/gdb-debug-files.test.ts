/**
 * Separate debug files kept uncompressed for gdb (debuggers/gdb/debug-files.ts), seen from the
 * user's side: a stripped program whose debug information is shipped as distributions ship it (a
 * build-id tree, its sections compressed), triaged with `--debug-file-directory`. The first run's
 * end copies the debug file gdb read, inflated, into the cache; the next run starts gdb with that
 * copy first and says the same; a debug file removed since is never read from the copy.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Crash } from "../../src/report/schema.js";
import { DumpFile, elfSections } from "../../src/debuggers/dumpfile/index.js";
import { fileBuildId } from "../../src/debuggers/dump.js";
import { buildCore, culpritLine, type BuiltCore } from "../helpers/cores.js";
import { runCli } from "../helpers/cli.js";

let dir: string;
let built: BuiltCore;
/** The build-id tree the runs are told to search, its one debug file compressed. */
let tree: string;
let debugFile: string;
let buildId: string;
let xdg: string;
let log: string;
let gdb: string;

/** Whether any of an ELF file's debug sections is compressed. */
function compressed(file: string): boolean {
  const elf = DumpFile.open(file);
  try {
    return elfSections(elf).some((section) => section.name.startsWith(".debug_") && (section.flags & 0x800n) !== 0n);
  } finally {
    elf.close();
  }
}

/** The `set debug-file-directory` each gdb of the runs so far was started with, in order. */
function debugDirectoriesGiven(): string[] {
  return readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => /set debug-file-directory (\S+)/.exec(line)?.[1] ?? "(none)");
}

async function triage(): Promise<Crash> {
  const result = await runCli(["triage", built.core, "--exe", built.exe, "--debug-file-directory", tree, "--json"], { env: { XDG_CACHE_HOME: xdg, DUMPDBG_GDB: gdb } });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Crash;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-debug-files-"));
  built = await buildCore("null-deref", { splitDebug: true });
  buildId = fileBuildId(built.exe)!;
  tree = path.join(dir, "debug");
  debugFile = path.join(tree, ".build-id", buildId.slice(0, 2), `${buildId.slice(2)}.debug`);
  mkdirSync(path.dirname(debugFile), { recursive: true });
  cpSync(path.join(built.symbols!, ".build-id", buildId.slice(0, 2), `${buildId.slice(2)}.debug`), `${debugFile}.plain`);
  execFileSync("objcopy", ["--compress-debug-sections=zlib", `${debugFile}.plain`, debugFile]);
  rmSync(`${debugFile}.plain`);
  xdg = path.join(dir, "xdg");
  log = path.join(dir, "gdb.log");
  // A gdb that notes the arguments it was started with, one line per start.
  gdb = path.join(dir, "recording-gdb");
  writeFileSync(gdb, `#!/bin/sh\necho "$*" >> '${log}'\nexec gdb "$@"\n`);
  chmodSync(gdb, 0o755);
}, 300_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("separate debug files kept uncompressed for gdb", () => {
  const cache = () => path.join(xdg, "dumpdbg", "gdb-debug");
  const copy = () => path.join(cache(), ".build-id", buildId.slice(0, 2), `${buildId.slice(2)}.debug`);

  it("copies the compressed debug file gdb read, inflated, under its build id, as the first run ends", async () => {
    expect(compressed(debugFile)).toBe(true);
    const crash = await triage();
    expect(crash.culprit).toMatchObject({ function: "send_to_client", line: culpritLine("null-deref") });
    expect(debugDirectoriesGiven()).toEqual([tree]);
    expect(existsSync(copy())).toBe(true);
    expect(compressed(copy())).toBe(false);
    expect(fileBuildId(copy())).toBe(buildId);
  });

  it("starts the next gdb with the copy before the directories asked for, and says the same", async () => {
    const first = await triage();
    expect(debugDirectoriesGiven().at(-1)).toBe(`${cache()}:${tree}`);
    expect(first.culprit).toMatchObject({ function: "send_to_client", line: culpritLine("null-deref") });
  });

  it("does not start gdb with the copy once its source changed, and copies it again", async () => {
    const later = new Date(Date.now() + 60_000);
    utimesSync(debugFile, later, later);
    const crash = await triage();
    expect(debugDirectoriesGiven().at(-1)).toBe(tree);
    expect(crash.culprit).toMatchObject({ function: "send_to_client", line: culpritLine("null-deref") });
    // Copied again from the source as it is now: the run after uses it.
    await triage();
    expect(debugDirectoriesGiven().at(-1)).toBe(`${cache()}:${tree}`);
  });

  it("never reads a removed debug file from its copy: the program's functions are then unknown, and the copy goes", async () => {
    rmSync(debugFile);
    const crash = await triage();
    expect(debugDirectoriesGiven().at(-1)).toBe(tree);
    // The program is stripped: without its debug file, gdb has no name for the crashing function.
    expect(crash.culprit.function ?? null).not.toBe("send_to_client");
    expect(crash.culprit.line ?? null).toBeNull();
    expect(existsSync(copy())).toBe(false);
    expect(readdirSync(cache()).filter((name) => name.startsWith("manifest-"))).toEqual([]);
  });
});
