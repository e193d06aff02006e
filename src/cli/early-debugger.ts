/**
 * gdb started first thing for a command that will read an ELF core with it, so that gdb's own
 * start overlaps the loading of the command's code and the checks of the dump (see
 * debuggers/gdb/early-start.ts). Decided from the arguments alone, without touching any file: a
 * guess that turns out wrong (a minidump, another debugger, other gdb settings) costs an idle gdb
 * that is ended at exit.
 */
import { gdbArguments } from "../debuggers/gdb/arguments.js";
import { endEarlyGdb, startGdbEarly } from "../debuggers/gdb/early-start.js";

export { endEarlyGdb as endEarlyDebugger };

const OPENS_A_DUMP = new Set(["triage", "analyze", "exec", "symbols"]);
/** Flags that change gdb's arguments or send the dump to another debugger. */
const OTHER_SETTINGS = /^--(sysroot|solib-search-path|debug-file-directory|help|lldb|cdb|dlv)(=|$)|^-h$/;
const MINIDUMP_NAME = /\.(dmp|mdmp)$/i;

export function startDebuggerEarly(argv: string[], env: NodeJS.ProcessEnv = process.env): void {
  const [command, ...rest] = argv.slice(2);
  if (command === undefined || !OPENS_A_DUMP.has(command)) return;
  if (rest.some((arg) => OTHER_SETTINGS.test(arg) || MINIDUMP_NAME.test(arg))) return;
  const chosen = valueOf(rest, "--debugger");
  if (chosen !== undefined && chosen !== "gdb" && chosen !== "auto") return;
  startGdbEarly(valueOf(rest, "--gdb") ?? env.DUMPDBG_GDB ?? "gdb", gdbArguments());
}

function valueOf(args: string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  if (at >= 0) return args[at + 1];
  return args.find((arg) => arg.startsWith(`${flag}=`))?.slice(flag.length + 1);
}
