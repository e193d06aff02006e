/**
 * How gdb is started for a session: MI, no init files, and the settings every session needs, with
 * the options' paths. A command may start gdb early with the same arguments (`../early-start.ts`).
 */
export function gdbArguments(options: { sysroot?: string; solibSearchPath?: string; debugFileDirectory?: string } = {}): string[] {
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
  if (options.sysroot) settings.push(`set sysroot ${options.sysroot}`);
  if (options.solibSearchPath) settings.push(`set solib-search-path ${options.solibSearchPath}`);
  if (options.debugFileDirectory) settings.push(`set debug-file-directory ${options.debugFileDirectory}`);
  return ["--interpreter=mi3", "-nx", "-q", ...settings.flatMap((setting) => ["-iex", setting])];
}

/**
 * The MI commands that load a dump, in order (tokens 1, 2, …): gdb's version first (the session
 * checks it is gdb), the program, then the core. An early start may write them before the session
 * exists (`../early-start.ts`); the session then awaits their answers instead of sending them.
 */
export function gdbLoadCommands(dump: string, executable: string | null): string[] {
  return [
    "-gdb-version",
    ...(executable ? [`-file-exec-and-symbols ${miQuote(executable)}`] : []),
    // gdb 13's core-file takes the rest of the line as the name, quotes included.
    `-interpreter-exec console ${miQuote(`core-file ${dump}`)}`,
  ];
}

/** Quotes a string as an MI c-string argument. */
export function miQuote(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}
