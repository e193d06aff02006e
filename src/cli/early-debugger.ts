/**
 * The debugger started first thing for a command that will read a dump with it, so that its own
 * start overlaps the loading of the command's code and the checks of the dump (see
 * debuggers/early-start.ts): gdb for what looks like a core, LLDB's adapter for what looks like a
 * minidump (`.dmp`). Decided from the arguments alone, without touching any file: a guess that
 * turns out wrong (another format, another debugger, other settings) costs a debugger that is ended
 * when the session starts, or the command ends.
 *
 * This module and the few it imports are built apart as dist/early.cjs, one small file that
 * bin/dumpdbg.cjs loads before anything else (build.mjs); the CLI's bundle imports them from there
 * (`#early`), so that the debugger started here, the live debuggers and the signal handlers exist
 * once. What gdb is then given to load is decided by the CLI (early-load.ts), once the core and its
 * program have passed the session's checks.
 */
import { endEarly, startEarly } from "../debuggers/early-start.js";
import { installSignalHandlers } from "./signals.js";
import { gdbArguments } from "../debuggers/gdb/arguments.js";
import { binaryOf } from "../debuggers/binaries.js";
import { pythonCacheEnv } from "../debuggers/lldb/python-cache.js";

export { endEarly as endEarlyDebugger };

/** A core the early gdb may be given to load, as the arguments name it. */
export interface EarlyCore {
  dump: string;
  exe: string | undefined;
  /** `--debugger auto`: a Go program is then Delve's, not gdb's. */
  auto: boolean;
}

const OPENS_A_DUMP = new Set(["triage", "analyze", "exec", "symbols"]);
/** Flags that change gdb's arguments, or ask for help. */
const OTHER_SETTINGS = /^--(sysroot|solib-search-path|debug-file-directory|help)(=|$)|^-h$/;
/** Flags and variables that name places for symbols: what is found there may change how gdb loads the core. */
const SYMBOL_PLACES = /^--(symbols|symbols-config|modules-path)(=|$)/;
const MINIDUMP_NAME = /\.(dmp|mdmp)$/i;
/** Whether this command was looked at already (bin/dumpdbg.cjs, then main()). */
let asked = false;
let core: EarlyCore | null = null;

/**
 * bin/dumpdbg.cjs calls this before it loads the CLI (dist/early.cjs is its own small entry), and
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
      const adapter = binaryOf("lldb", named("lldb", rest), env);
      startEarly(adapter, [], "data", pythonCacheEnv(adapter, env));
    } catch {
      // A named lldb without its adapter: the session says so.
    }
    return;
  }
  if (!minidump && (chosen === "auto" || chosen === "gdb") && !rest.some((arg) => /^--(lldb|cdb|dlv)(=|$)/.test(arg))) {
    startEarly(binaryOf("gdb", named("gdb", rest), env), gdbArguments(), "lines");
    const dump = rest[0];
    if (dump !== undefined && !dump.startsWith("-") && !rest.some((arg) => SYMBOL_PLACES.test(arg)) && !env.DUMPDBG_SYMBOLS) {
      core = { dump, exe: valueOf(rest, "--exe"), auto: chosen === "auto" };
    }
  }
}

/**
 * The core the early gdb may load: the command's dump (its first argument) and `--exe`, when gdb
 * was started early and nothing in the arguments (a place for symbols) could change how the
 * session loads it; null otherwise.
 */
export function earlyCore(): EarlyCore | null {
  return core;
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
