/**
 * The dump a `triage` or `analyze` reads: the one named, or with `--pid` a live process dumped with
 * gcore for it (debuggers/live-process.ts), kept at `--keep-dump` when asked and removed otherwise.
 * What happens to the process is said on stderr: dumped, detached, still running.
 */
import { ExitCode, ExitError } from "./exit.js";
import type { LiveFlags } from "./dump-options.js";

export interface DumpToRead {
  path: string;
  /** Set when the dump was taken of a live process now: the removal of our copy of it. */
  live: { pid: number; kept: string | null; remove(): void } | null;
}

/** The dump named, or the live process `--pid` names dumped now; a usage error for both, neither, or `--keep-dump` without `--pid`. */
export async function dumpToRead(dump: string | undefined, flags: LiveFlags): Promise<DumpToRead> {
  if (flags.pid === undefined) {
    if (flags.keepDump !== undefined) throw new ExitError(ExitCode.usage, "--keep-dump keeps the dump --pid takes of a live process; give --pid PID with it");
    if (dump === undefined) throw new ExitError(ExitCode.usage, "missing dump: give a core file or minidump, or --pid PID to dump a live process");
    return { path: dump, live: null };
  }
  if (dump !== undefined) throw new ExitError(ExitCode.usage, `give a dump or --pid ${flags.pid}, not both`);
  const { checkKeepPath, dumpLiveProcess, keepDump } = await import("../debuggers/live-process.js");
  if (flags.keepDump !== undefined) checkKeepPath(flags.keepDump);
  const taken = await dumpLiveProcess(flags.pid, (name) => process.stderr.write(`dumpdbg: dumping process ${flags.pid} (${name}) with gcore, attached only while it writes the dump\n`));
  try {
    const kept = flags.keepDump === undefined ? null : keepDump(taken, flags.keepDump);
    process.stderr.write(`dumpdbg: dumped process ${taken.pid} (${taken.name}, ${megabytes(taken.bytes)}) and detached; it goes on running${kept ? `; the dump is kept at ${kept}` : ""}\n`);
    for (const note of taken.notes) process.stderr.write(`dumpdbg: ${note}\n`);
    return { path: kept ?? taken.core, live: { pid: taken.pid, kept, remove: taken.remove } };
  } catch (error) {
    taken.remove();
    throw error;
  }
}

function megabytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}
