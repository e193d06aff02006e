import { codeCacheDir } from "../../cache-dir.js";
import { debugFileDirectory } from "./debug-files.js";
import { DebuggerError } from "../errors.js";

/**
 * How gdb is started for a session: MI, no init files, and the settings every session needs, with
 * the options' paths. A command may start gdb early with the same arguments (`../early-start.ts`).
 */
export function gdbArguments(options: { sysroot?: string; solibSearchPath?: string; debugFileDirectory?: string } = {}, env: NodeJS.ProcessEnv = process.env): string[] {
  const settings = [
    "set pagination off",
    "set confirm off",
    "set width 0",
    "set height 0",
    "set print pretty off",
    "set style enabled off",
    "set print thread-events off",
    "set print inferior-events off",
    // Dumps are often analysed on air-gapped machines, and dump contents are untrusted: no
    // network lookups, no scripts auto-loaded from next to the program, and no code of the
    // program run by an expression (C++ operators, xmethods) should a live target ever appear.
    "set debuginfod enabled off",
    "set auto-load gdb-scripts off",
    "set auto-load python-scripts off",
    "set auto-load local-gdbinit off",
    "set may-call-functions off",
  ];
  // gdb's index of each program's and library's debug information, kept by build-id: indexing
  // libc's alone is most of a core's load (about 90 ms of a small program's 130), and it is the same
  // every time. Lookups through the index find what the full read would.
  const cache = codeCacheDir("gdb-index", env);
  if (cache !== null) settings.push(`set index-cache directory ${cache}`, "set index-cache enabled on");
  if (options.sysroot) settings.push(`set sysroot ${options.sysroot}`);
  if (options.solibSearchPath) settings.push(`set solib-search-path ${options.solibSearchPath}`);
  // Separate debug files kept uncompressed (debug-files.ts) before the directories gdb searches.
  const debugFiles = debugFileDirectory(options.debugFileDirectory, env);
  if (debugFiles !== null) settings.push(`set debug-file-directory ${debugFiles}`);
  else if (options.debugFileDirectory) settings.push(`set debug-file-directory ${options.debugFileDirectory}`);
  return ["--interpreter=mi3", "-nx", "-q", ...settings.flatMap((setting) => ["-iex", setting])];
}

/**
 * The MI commands that load a dump, in order (tokens 1, 2, …): gdb's version first (the session
 * checks it is gdb), the program, the memory a core cut short lost, then the core. An early start may write them before the session
 * exists (`../early-start.ts`); the session then awaits their answers instead of sending them.
 */
export function gdbLoadCommands(dump: string, executable: string | null, unreadable: readonly { start: bigint; end: bigint }[] = []): string[] {
  return [
    "-gdb-version",
    ...(executable ? [`-file-exec-and-symbols ${miQuote(executable)}`] : []),
    // Before the core: gdb reads the libraries' list from its memory as it loads it.
    ...gdbMemoryCommands(unreadable),
    // gdb 13's core-file takes the rest of the line as the name, quotes included.
    `-interpreter-exec console ${miQuote(`core-file ${dump}`)}`,
  ];
}

/**
 * The MI commands that make gdb refuse to read `unreadable` memory (a core cut short lost it): gdb
 * reads a core's lost bytes from the mapped program or library on disk, whose bytes a written page
 * no longer held. Every other address is declared readable and, with inaccessible-by-default on,
 * the lost ranges are none; none at all for a whole core. `mem … 0` runs to the top of memory.
 */
export function gdbMemoryCommands(unreadable: readonly { start: bigint; end: bigint }[]): string[] {
  if (unreadable.length === 0) return [];
  const readable: string[] = [];
  let from = 0n;
  for (const range of unreadable) {
    if (range.start > from) readable.push(`mem 0x${from.toString(16)} 0x${range.start.toString(16)} rw`);
    from = range.end;
  }
  if (from < 1n << 64n) readable.push(`mem 0x${from.toString(16)} 0 rw`);
  return ["set mem inaccessible-by-default on", ...readable].map((command) => `-interpreter-exec console ${miQuote(command)}`);
}

/**
 * Quotes a string as an MI c-string argument. A control character would end the MI line and start
 * another command: it is refused (the runner and the input checks refuse such commands and paths
 * first; this is the last guard).
 */
export function miQuote(text: string): string {
  if (/[\u0000-\u001f\u007f]/.test(text)) throw new DebuggerError("a command or path with a control character cannot be given to gdb");
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}
