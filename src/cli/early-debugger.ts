/**
 * The debugger started first thing for a command that will read a dump with it, so that its own
 * start overlaps the loading of the command's code and the checks of the dump (see
 * debuggers/early-start.ts): gdb for what looks like a core, LLDB's adapter for what looks like a
 * minidump (`.dmp`). Decided from the arguments alone, without touching any file: a guess that
 * turns out wrong (another format, another debugger, other settings) costs a debugger that is ended
 * when the session starts, or the command ends.
 *
 * gdb is then given the core to load while the CLI's code loads, once the core and its program have
 * passed the checks a session makes (debuggers/dump.ts: regular files, an ELF core, the program it
 * names), and only when nothing the arguments say could change how the session loads it.
 */
import { endEarly, preloadEarly, startEarly } from "../debuggers/early-start.js";
import { installSignalHandlers } from "./signals.js";
import { gdbArguments, gdbLoadCommands } from "../debuggers/gdb/arguments.js";
import { binaryOf } from "../debuggers/backends.js";

export { endEarly as endEarlyDebugger };

const OPENS_A_DUMP = new Set(["triage", "analyze", "exec", "symbols"]);
/** Flags that change gdb's arguments, or ask for help. */
const OTHER_SETTINGS = /^--(sysroot|solib-search-path|debug-file-directory|help)(=|$)|^-h$/;
/** Flags and variables that name places for symbols: what is found there may change how gdb loads the core. */
const SYMBOL_PLACES = /^--(symbols|symbols-config|modules-path)(=|$)/;
const MINIDUMP_NAME = /\.(dmp|mdmp)$/i;
/** Whether this command was looked at already (bin/dumpdbg.js, then main()). */
let asked = false;

/**
 * bin/dumpdbg.js calls this before it loads the CLI (dist/early.js is its own small entry), and
 * main() again (then a no-op). The signal handlers go first, so that no debugger started here can
 * outlive a Ctrl+C.
 */
export function startDebuggerEarly(argv: string[], env: NodeJS.ProcessEnv = process.env): void {
  installSignalHandlers();
  if (asked) return;
  asked = true;
  const [command, ...rest] = argv.slice(2);
  if (command === undefined || !OPENS_A_DUMP.has(command) || rest.some((arg) => OTHER_SETTINGS.test(arg))) return;
  const chosen = valueOf(rest, "--debugger") ?? "auto";
  const minidump = rest.some((arg) => MINIDUMP_NAME.test(arg));
  if (minidump && (chosen === "auto" || chosen === "lldb") && process.platform !== "win32") {
    try {
      startEarly(binaryOf("lldb", named("lldb", rest), env), [], "data");
    } catch {
      // A named lldb without its adapter: the session says so.
    }
    return;
  }
  if (!minidump && (chosen === "auto" || chosen === "gdb") && !rest.some((arg) => /^--(lldb|cdb|dlv)(=|$)/.test(arg))) {
    startEarly(binaryOf("gdb", named("gdb", rest), env), gdbArguments(), "lines");
    const dump = rest[0];
    if (dump !== undefined && !dump.startsWith("-") && !rest.some((arg) => SYMBOL_PLACES.test(arg)) && !env.DUMPDBG_SYMBOLS) {
      void preloadCore(dump, valueOf(rest, "--exe"), chosen === "auto").catch(() => undefined);
    }
  }
}

/**
 * Has the early gdb load the core and its program, once both pass a session's checks. Anything
 * wrong is left for the session to find and report; a Go program under `auto` is Delve's.
 */
async function preloadCore(dump: string, exe: string | undefined, auto: boolean): Promise<void> {
  const { checkDumpPaths, inspectDump, resolveExecutable } = await import("../debuggers/dump.js");
  await checkDumpPaths(dump, exe);
  const info = inspectDump(dump);
  if (info.format !== "elf-core") return;
  const executable = resolveExecutable(info, exe);
  if (auto && executable !== null && (await import("../debuggers/dumpfile/index.js")).isGoProgram(executable)) return;
  await preloadEarly(gdbLoadCommands(info.path, executable));
}

/** The binary a flag names, as the session's `binaryOf` takes it (`--gdb PATH`). */
function named(backend: "gdb" | "lldb", args: string[]): Partial<Record<"gdb" | "lldb", string>> {
  const value = valueOf(args, `--${backend}`);
  return value === undefined ? {} : { [backend]: value };
}

function valueOf(args: string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  if (at >= 0) return args[at + 1];
  return args.find((arg) => arg.startsWith(`${flag}=`))?.slice(flag.length + 1);
}
