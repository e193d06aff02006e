/**
 * Real programs made to crash for the tests, and their cores: a C source compiled with gcc (or any
 * command), run under gdb to its fatal signal, the core written by gdb there (whatever the kernel's
 * core_pattern); and the offline analysis of such a core through the built CLI.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { runCli } from "./cli.js";

export interface Dumped {
  exe: string;
  core: string;
}

const GDB = ["-nx", "-batch", "-iex", "set debuginfod enabled off"];

/** Runs `argv` under gdb to its fatal signal and writes `core` there. */
export function coreAtCrash(core: string, argv: string[]): string {
  execFileSync("gdb", [...GDB, "-ex", "run", "-ex", `generate-core-file ${core}`, "--args", ...argv], { stdio: "ignore" });
  return core;
}

/** Dumps a live process (a hang) with gdb attached. */
export function coreOfLive(core: string, pid: number): string {
  execFileSync("gdb", [...GDB, "-p", String(pid), "-ex", `generate-core-file ${core}`], { stdio: "ignore" });
  return core;
}

/** Writes `source` as `<name>.c` in `dir`, compiles it with gcc and `flags`, and dumps its crash. */
export function crashC(dir: string, name: string, source: string, flags: string[] = ["-g", "-O0"]): Dumped {
  const file = path.join(dir, `${name}.c`);
  writeFileSync(file, source);
  return crashProgram(dir, name, (exe) => execFileSync("gcc", [...flags, "-o", exe, file]));
}

/** Builds `dir/<name>` with `compile` and dumps its crash. */
export function crashProgram(dir: string, name: string, compile: (exe: string) => void): Dumped {
  const exe = path.join(dir, name);
  compile(exe);
  return { exe, core: coreAtCrash(path.join(dir, `${name}.core`), [exe]) };
}

/** `dumpdbg analyze --provider offline --json` on a core, sessions and reports under `dir`: the JSON report. */
export async function analyzeOffline(dir: string, dumped: Dumped, extra: string[] = []) {
  const run = await runCli(["analyze", dumped.core, "--exe", dumped.exe, "--provider", "offline", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions"), ...extra]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}
