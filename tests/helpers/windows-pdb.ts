/**
 * Builds a Windows fixture program (tests/fixtures/windows) as most Windows builds ship: its debug
 * information in a PDB, none in the executable. clang-16 compiles for the mingw-w64 target with
 * CodeView, lld-16 links against mingw-w64's runtime and writes the PDB, and the executable's DWARF
 * (the mingw runtime's own) is stripped. The program is then crashed under Wine as the other
 * fixtures are (windows.ts: same cache folder, same Wine lock), writing crash.dmp beside it.
 *
 * The executable's CodeView record names `C:\build\<name>.pdb`, as a Windows build machine's would.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { CACHE_ROOT, crashAndPublish, missingWindowsTools, windowsFixtureSource } from "./windows.js";

const execFileAsync = promisify(execFile);
const SOURCES = fileURLToPath(new URL("../fixtures/windows/", import.meta.url));
const CLANG = "/usr/bin/clang-16";
const LLD = "/usr/bin/ld.lld-16";
const STRIP = "x86_64-w64-mingw32-strip";

export interface BuiltPdbMinidump {
  name: string;
  /** The executable, without DWARF: its debug information is only in `pdb`. */
  exe: string;
  /** The PDB lld wrote, beside the executable. */
  pdb: string;
  /** The PDB path the executable's CodeView record names. */
  pdbPath: string;
  dump: string;
  dir: string;
  source: string;
  /** What the program printed, including the crash reporter's line. */
  output: string;
}

/** The tools these fixtures need that this machine lacks: Debian's clang-16 and lld-16 besides mingw-w64 and Wine. */
export function missingPdbTools(): string[] {
  const missing = missingWindowsTools();
  for (const tool of [CLANG, LLD]) {
    try {
      accessSync(tool, constants.X_OK);
    } catch {
      missing.push(tool);
    }
  }
  return missing;
}

const pending = new Map<string, Promise<BuiltPdbMinidump>>();

/** Builds tests/fixtures/windows/<name>.c with a PDB and crashes it under Wine, once per version of its sources. */
export function buildPdbMinidump(name: string): Promise<BuiltPdbMinidump> {
  const known = pending.get(name);
  if (known) return known;
  const built = build(name);
  pending.set(name, built);
  built.catch(() => pending.delete(name));
  return built;
}

async function build(name: string): Promise<BuiltPdbMinidump> {
  const source = windowsFixtureSource(name);
  const reporter = path.join(SOURCES, "crash-dump.c");
  const helpers = [fileURLToPath(import.meta.url), fileURLToPath(new URL("./windows.ts", import.meta.url))];
  const key = createHash("sha256")
    .update([source, reporter, path.join(SOURCES, "crash-dump.h"), ...helpers].map((file) => readFileSync(file, "utf8")).join("\0"))
    .digest("hex")
    .slice(0, 16);
  const dir = path.join(CACHE_ROOT, `windows-pdb-${name}-${key}`);
  const pdbPath = `C:\\build\\${name}.pdb`;
  const result = (output: string): BuiltPdbMinidump => ({
    name,
    exe: path.join(dir, `${name}.exe`),
    pdb: path.join(dir, `${name}.pdb`),
    pdbPath,
    dump: path.join(dir, "crash.dmp"),
    dir,
    source,
    output,
  });
  const done = path.join(dir, "output.txt");
  if (existsSync(done) && existsSync(path.join(dir, "crash.dmp"))) return result(await readFile(done, "utf8"));

  const scratch = `${dir}.${process.pid}.${Date.now()}`;
  await mkdir(scratch, { recursive: true });
  try {
    const exe = path.join(scratch, `${name}.exe`);
    // clang finds mingw-w64's sysroot (/usr/x86_64-w64-mingw32) itself, but not its libgcc.
    const { stdout: libgcc } = await execFileAsync("x86_64-w64-mingw32-gcc", ["-print-libgcc-file-name"]);
    await execFileAsync(
      CLANG,
      [
        "--target=x86_64-w64-windows-gnu",
        "-g",
        "-gcodeview",
        "-O0",
        "-I",
        SOURCES,
        "-fuse-ld=lld",
        `--ld-path=${LLD}`,
        `-L${path.dirname(libgcc.trim())}`,
        `-Wl,--pdb=${name}.pdb`,
        `-Wl,-Xlink=-pdbaltpath:${pdbPath}`,
        "-o",
        exe,
        source,
        reporter,
        "-ldbghelp",
      ],
      { cwd: scratch },
    );
    await execFileAsync(STRIP, ["--strip-debug", exe]);
    await crashAndPublish(exe, scratch, dir);
    return result(await readFile(done, "utf8"));
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  }
}
