/**
 * Gives the early gdb (early-debugger.ts) the command's core to load, once the core and its program
 * pass the checks a session makes (debuggers/dump.ts: regular files, an ELF core, the program it
 * names): gdb then loads them while the command's code loads. Anything wrong is left for the
 * session to find and report; a Go program under `auto` is Delve's.
 *
 * Part of dist/early.cjs: bin/dumpdbg.cjs starts the checks before it loads the CLI's bundle, whose
 * evaluation holds the main thread for tens of milliseconds (the checks' stat calls could not
 * answer before it ends), and main() finds them started.
 */
import type { EarlyCore } from "./early-debugger.js";
import { preloadEarly } from "../debuggers/early-start.js";
import { gdbLoadCommands } from "../debuggers/gdb/arguments.js";
import { buildIdMismatch, checkDumpPaths, inspectDump, resolveExecutable } from "../debuggers/dump.js";
import { isGoProgram } from "../debuggers/dumpfile/index.js";

let loading: Promise<void> = Promise.resolve();

/**
 * Starts the checks of `core` and, when they pass, the writing of the load commands; with no core
 * (none, or one already taken: `takeEarlyCore`), the checks already started. See `earlyLoadDecided`.
 */
export function loadCoreEarly(core: EarlyCore | null): Promise<void> {
  if (core !== null) loading = load(core).catch(() => undefined);
  return loading;
}

/**
 * Settles once the early gdb has been given the core to load, or it was decided not to. `analyze`
 * waits for it before it evaluates the analysis's code (~25 ms of one synchronous stretch), so
 * that gdb loads the core meanwhile rather than after.
 */
export function earlyLoadDecided(): Promise<void> {
  return loading;
}

async function load(core: EarlyCore): Promise<void> {
  await checkDumpPaths(core.dump, core.exe);
  const info = inspectDump(core.dump);
  if (info.format !== "elf-core") return;
  const executable = resolveExecutable(info, core.exe);
  // A program of another build: an analysis refuses it, and exec loads it with a warning; either way not now.
  if (executable !== null && buildIdMismatch(info, executable)) return;
  if (core.auto && executable !== null && isGoProgram(executable)) return;
  await preloadEarly(gdbLoadCommands(info.path, executable, info.facts.format === "elf-core" ? (info.facts.cut?.unreadable ?? []) : []));
}
