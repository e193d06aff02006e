/**
 * Real arm64 cores on an x86-64 machine: a fixture program of tests/fixtures/programs built with
 * Debian's aarch64 cross compiler (non-PIE: qemu's cores carry no auxv to relocate a PIE) and run
 * under qemu-user, which writes an aarch64 ELF core of its guest (`qemu_<prog>_<time>_<pid>.core`)
 * in the working directory. The host kernel may dump qemu itself beside it (`core`): removed.
 * Cached per source, flags and this recipe under os.tmpdir(), as tests/helpers/cores.ts caches.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { readdir, rename, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildOnce } from "./cores.js";

/** Where the cross libraries qemu runs the guest with, and the sysroot a debugger reads them from. */
export const AARCH64_SYSROOT = "/usr/aarch64-linux-gnu";

const PROGRAMS_DIR = fileURLToPath(new URL("../fixtures/programs/", import.meta.url));
/** Programs that only the arm64 tests run (a handler's caught fault, a division by zero that does not trap): not among the x86-64 fixtures every core test walks. */
const AARCH64_PROGRAMS_DIR = fileURLToPath(new URL("../fixtures/aarch64/", import.meta.url));
const CACHE_ROOT = path.join(os.tmpdir(), "dumpdbg-aarch64-fixtures");
const RECIPE_HASH = createHash("sha256").update(readFileSync(fileURLToPath(import.meta.url))).digest("hex");

export interface Aarch64Core {
  exe: string;
  core: string;
  source: string;
}

/** Whether this machine can build and run arm64 programs (the cross compilers and qemu-user). */
export function canBuildAarch64(): boolean {
  const onPath = (name: string) => (process.env.PATH ?? "").split(path.delimiter).some((dir) => dir !== "" && existsSync(path.join(dir, name)));
  return ["aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "qemu-aarch64"].every(onPath) && existsSync(AARCH64_SYSROOT);
}

/** Builds the fixture program `name` for arm64, crashes it under qemu, and returns its core. */
export function buildAarch64Core(name: string): Promise<Aarch64Core> {
  const source = [PROGRAMS_DIR, AARCH64_PROGRAMS_DIR].flatMap((dir) => [".c", ".cpp"].map((ext) => path.join(dir, name + ext))).find((file) => existsSync(file));
  if (!source) throw new Error(`no C or C++ fixture program named ${name}`);
  const text = readFileSync(source, "utf8");
  const declared = /^\/\/ flags:\s*(.*)$/m.exec(text.split("\n").slice(0, 3).join("\n"))?.[1];
  const flags = [...(declared ? declared.split(/\s+/) : ["-g", "-O0", "-pthread"]), "-no-pie"];
  const key = createHash("sha256").update(JSON.stringify([RECIPE_HASH, name, text, flags])).digest("hex").slice(0, 16);
  // The source is this checkout's: the same text may have been built from another one, since removed.
  return buildOnce(`${name}-${key}`, (dir) => build(name, source, flags, dir), CACHE_ROOT).then((built) => ({ ...built, source }));
}

async function build(name: string, source: string, flags: string[], dir: string): Promise<Aarch64Core> {
  const exe = path.join(dir, name);
  const compiler = source.endsWith(".cpp") ? "aarch64-linux-gnu-g++" : "aarch64-linux-gnu-gcc";
  await run(compiler, [...flags, "-o", exe, source], dir);
  await run("sh", ["-c", `ulimit -c unlimited; exec qemu-aarch64 -L ${AARCH64_SYSROOT} "./$0"`, name], dir, true);
  const written = (await readdir(dir)).find((file) => file.startsWith(`qemu_${name}_`) && file.endsWith(".core"));
  await rm(path.join(dir, "core"), { force: true });
  if (!written) throw new Error(`qemu left no core of ${name} in ${dir}`);
  const core = path.join(dir, `${name}.core`);
  await rename(path.join(dir, written), core);
  return { exe, core, source };
}

function run(command: string, args: string[], cwd: string, mayFail = false): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile(command, args, { cwd, timeout: 120_000, env: { ...process.env, LC_ALL: "C", QEMU_LD_PREFIX: AARCH64_SYSROOT } }, (error, _stdout, stderr) => {
      if (error && (!mayFail || error.killed)) reject(new Error(`${command} ${args.join(" ")} failed: ${stderr}`));
      else resolve();
    }),
  );
}
