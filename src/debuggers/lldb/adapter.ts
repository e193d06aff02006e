/**
 * Which program serves LLDB over the Debug Adapter Protocol. `--lldb` may name the adapter
 * (lldb-vscode-16, lldb-dap) or lldb's command line (/usr/bin/lldb-16), which does not speak DAP:
 * the adapter of the same version is installed beside it, or beside the file it links to.
 */
import { accessSync, constants, realpathSync } from "node:fs";
import { basename, delimiter, dirname, join } from "node:path";
import { DebuggerMissing } from "../errors.js";

/** What the lookup needs of the file system, so that it can be tested on made-up installs. */
export interface Installed {
  /** The path of the executable of this name on PATH, or null. */
  onPath(name: string): string | null;
  isExecutable(path: string): boolean;
  /** The path with its symbolic links resolved. */
  realpath(path: string): string;
}

/** Debian 12's adapter, then newer LLVM's name, then older LLVM's. */
const DEFAULT_ADAPTERS = ["lldb-vscode-16", "lldb-dap", "lldb-vscode"] as const;
/** lldb's command line, maybe with its version: lldb, lldb-16, lldb-16.0.6. */
const LLDB_COMMAND_LINE = /^lldb(-\d+(?:\.\d+)*)?$/;

/** The adapter to run for `requested` (a name or a path; the default adapter when undefined). */
export function resolveAdapter(requested: string | undefined, installed: Installed = host): string {
  if (requested === undefined) {
    return DEFAULT_ADAPTERS.find((name) => installed.onPath(name) !== null) ?? DEFAULT_ADAPTERS[DEFAULT_ADAPTERS.length - 1]!;
  }
  if (!LLDB_COMMAND_LINE.test(basename(requested))) return requested;
  const path = requested.includes("/") ? requested : installed.onPath(requested);
  // Not there at all: starting it says so.
  if (path === null) return requested;
  const tried: string[] = [];
  for (const place of new Set([path, installed.realpath(path)])) {
    const version = LLDB_COMMAND_LINE.exec(basename(place));
    if (!version) continue;
    for (const name of ["lldb-dap", "lldb-vscode"]) {
      const adapter = join(dirname(place), `${name}${version[1] ?? ""}`);
      if (installed.isExecutable(adapter)) return adapter;
      tried.push(adapter);
    }
  }
  throw new DebuggerMissing(`${requested} is lldb's command line, not its DAP server, and there is no ${tried.join(" or ")}`);
}

const host: Installed = {
  onPath(name) {
    for (const dir of (process.env.PATH ?? "").split(delimiter)) {
      if (dir !== "" && host.isExecutable(join(dir, name))) return join(dir, name);
    }
    return null;
  },
  isExecutable(path) {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
  realpath(path) {
    try {
      return realpathSync(path);
    } catch {
      return path;
    }
  },
};
