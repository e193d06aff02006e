/**
 * Gives the early gdb (early-debugger.ts) the command's core to load, once the core and its program
 * pass the checks a session makes (debuggers/dump.ts: regular files, an ELF core, the program it
 * names): gdb then loads them while the command's code loads. Anything wrong is left for the
 * session to find and report; a Go program under `auto` is Delve's.
 */
import type { EarlyCore } from "./early-debugger.js";
import { preloadEarly } from "../debuggers/early-start.js";
import { gdbLoadCommands } from "../debuggers/gdb/arguments.js";

let loading: Promise<void> = Promise.resolve();

/** Starts the checks and, when they pass, the writing of the load commands; see `earlyLoadDecided`. */
export function loadCoreEarly(core: EarlyCore | null): Promise<void> {
  loading = core ? load(core).catch(() => undefined) : Promise.resolve();
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
  const { buildIdMismatch, checkDumpPaths, inspectDump, resolveExecutable } = await import("../debuggers/dump.js");
  await checkDumpPaths(core.dump, core.exe);
  const info = inspectDump(core.dump);
  if (info.format !== "elf-core") return;
  const executable = resolveExecutable(info, core.exe);
  // A program of another build: an analysis refuses it, and exec loads it with a warning; either way not now.
  if (executable !== null && buildIdMismatch(info, executable)) return;
  if (core.auto && executable !== null && (await import("../debuggers/dumpfile/index.js")).isGoProgram(executable)) return;
  await preloadEarly(gdbLoadCommands(info.path, executable, info.facts.format === "elf-core" ? (info.facts.cut?.unreadable ?? []) : []));
}
