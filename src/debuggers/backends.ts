/**
 * The debugger backends dumpdbg knows, and the choice of one for a dump: by the dump's format, the
 * host, what is installed and what the user asked for (`--debugger auto|gdb|lldb|cdb`). Adding a
 * backend is one entry here (its binary, the formats it reads, how to start its session) and its
 * own folder under `debuggers/`; nothing above `debuggers/` names a debugger.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

import type { ArchitectureSupport } from "./architectures.js";
import type { DumpFormat } from "./dump.js";
import { DebuggerMissing } from "./errors.js";
import { BINARIES, binaryOf, type BackendBinary } from "./binaries.js";
import type { Backend, DebuggerSession } from "./session.js";
import type { NamedModule } from "./symbols/frame-names.js";

export type DebuggerChoice = Backend | "auto";
export const DEBUGGER_CHOICES: readonly DebuggerChoice[] = ["auto", "gdb", "lldb", "cdb", "dlv"];

/** What a backend needs to load a dump. */
export interface SessionOptions {
  dump: string;
  executable: string | null;
  /** The debugger binary. */
  binary: string;
  timeoutMs?: number;
  sysroot?: string;
  solibSearchPath?: string;
  debugFileDirectory?: string;
  /** Folders holding the dump's modules, searched by file name. */
  modulesPath?: string[];
  /** Breakpad `.sym` files matched to the dump's modules (LLDB reads them). */
  symbolFiles?: string[];
  /** cdb's symbol path (`--symbol-path`), which may name a symbol server. */
  symbolPath?: string;
  /** Modules whose Breakpad symbols dumpdbg read: frames the debugger leaves unnamed are named from them. */
  frameNames?: NamedModule[];
  /** Memory a core cut short lost: a debugger that would read a mapped file's bytes in its place is told it is none. */
  unreadable?: { start: bigint; end: bigint }[];
  /** A batch's session: gdb is kept from one dump to the next (gdb/kept-gdb.ts). */
  keep?: boolean;
}

export interface BackendDefinition extends BackendBinary {
  name: Backend;
  /** The dump formats it reads. */
  reads: readonly DumpFormat[];
  /**
   * The hosts `auto` chooses it on (`process.platform` values); all when absent. An explicit
   * `--debugger` with the binary named (a flag or the environment variable) is honoured on any host:
   * the user says that binary speaks this debugger's protocol (a wrapper, a remote bridge, a stand-in).
   */
  hosts?: readonly NodeJS.Platform[];
  /**
   * Starts a session on a dump; absent while this build has no such backend. Each backend's code is
   * loaded only when it starts: a run reads its dump with one debugger.
   */
  start?: (options: SessionOptions) => Promise<DebuggerSession>;
  /** Load warnings of this debugger that say nothing to a user (dumpdbg checks the same more precisely). */
  noise?: RegExp;
}

export const BACKENDS: Record<Backend, BackendDefinition> = {
  gdb: {
    name: "gdb",
    ...BINARIES.gdb,
    reads: ["elf-core"],
    start: async (options) =>
      new (await import("./gdb/gdb-session.js")).GdbSession({
        dump: options.dump,
        executable: options.executable,
        gdbPath: options.binary,
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.sysroot !== undefined ? { sysroot: options.sysroot } : {}),
        ...(searchPath(options) !== undefined ? { solibSearchPath: searchPath(options) } : {}),
        ...(options.debugFileDirectory !== undefined ? { debugFileDirectory: options.debugFileDirectory } : {}),
        ...(options.frameNames ? { frameNames: options.frameNames } : {}),
        ...(options.unreadable?.length ? { unreadable: options.unreadable } : {}),
        ...(options.keep ? { keep: true } : {}),
      }),
    // The kernel's xstate note is larger than gdb 13 expects; the registers dumpdbg reads are intact.
    noise: /reg-xstate.*too small/,
  },
  lldb: {
    name: "lldb",
    ...BINARIES.lldb,
    reads: ["elf-core", "minidump"],
    start: async (options) =>
      new (await import("./lldb/lldb-session.js")).LldbSession({
        dump: options.dump,
        executable: options.executable,
        binary: options.binary,
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.sysroot !== undefined ? { sysroot: options.sysroot } : {}),
        ...(options.debugFileDirectory !== undefined ? { debugFileDirectory: options.debugFileDirectory } : {}),
        ...(options.modulesPath?.length ? { modulesPath: options.modulesPath } : {}),
        ...(options.symbolFiles?.length ? { symbolFiles: options.symbolFiles } : {}),
        ...(options.frameNames ? { frameNames: options.frameNames } : {}),
      }),
  },
  cdb: {
    name: "cdb",
    ...BINARIES.cdb,
    reads: ["minidump"],
    hosts: ["win32"],
    start: async (options) =>
      new (await import("./cdb/cdb-session.js")).CdbSession({
        dump: options.dump,
        executable: options.executable,
        binary: options.binary,
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.symbolPath !== undefined ? { symbolPath: options.symbolPath } : {}),
        ...(options.modulesPath?.length ? { modulesPath: options.modulesPath } : {}),
      }),
  },
  dlv: {
    name: "dlv",
    ...BINARIES.dlv,
    reads: ["elf-core"],
    start: async (options) =>
      new (await import("./dlv/dlv-session.js")).DlvSession({
        dump: options.dump,
        executable: options.executable,
        binary: options.binary,
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      }),
  },
};

/** gdb finds a core's shared libraries on its solib-search-path: the modules path goes there too. */
function searchPath(options: SessionOptions): string | undefined {
  const dirs = [...(options.solibSearchPath ? [options.solibSearchPath] : []), ...(options.modulesPath ?? [])];
  return dirs.length ? dirs.join(":") : undefined;
}

/** Whether a backend's binary can be run here. */
export function isInstalled(backend: Backend, flags: Partial<Record<Backend, string>>): boolean {
  try {
    return canRun(binaryOf(backend, flags));
  } catch {
    return false;
  }
}

export interface ChoiceInput {
  format: DumpFormat;
  /** The dump is a core of a Go program (its executable has Go's sections): Delve reads it best. */
  goProgram?: boolean;
  requested: DebuggerChoice;
  host: NodeJS.Platform;
  /** Whether a backend's binary can be run here. */
  installed(backend: Backend): boolean;
  /** Whether the user named a backend's binary (`--cdb`, `DUMPDBG_CDB`); false when absent. */
  named?(backend: Backend): boolean;
  /** The binary that would run for a backend, for messages. */
  binary?(backend: Backend): string;
  /** The dump's processor as a person names it, and which backends read it here; absent: all do. */
  architecture?: { name: string; support: ArchitectureSupport };
}

/**
 * The backend to use, with the binary that reads the dump's architecture where it is not the
 * backend's usual one (`gdb-multiarch`), and a line saying so when `auto` fell back from the one it
 * prefers; or why none can be.
 */
export type Choice = { backend: Backend; binary?: string; fallback?: string } | { error: string };

const FORMAT_NAMES: Record<DumpFormat, string> = { "elf-core": "an ELF core", minidump: "a minidump" };

/**
 * Which backend reads this dump. `auto` takes, in order of preference for the format (an ELF core:
 * gdb, then lldb, with Delve first for a Go program's; a minidump: cdb on Windows, then lldb), the
 * first that this build has, this machine runs and that reads the dump's architecture (a debugger
 * that cannot read it would show no registers, and a crash would read as nothing). An explicit
 * choice is honoured or refused with the reason; never silently replaced.
 */
export function chooseBackend(input: ChoiceInput): Choice {
  const support = input.architecture?.support;
  const reads = (backend: Backend) => support?.reads(backend) ?? true;
  // gdb-multiarch runs where no plain gdb is installed.
  const runs = (backend: Backend) => input.installed(backend) || support?.binary(backend) !== undefined;
  const chosen = input.requested === "auto" ? chooseAuto({ ...input, installed: runs }, reads) : chooseRequested(input, input.requested);
  if ("error" in chosen) return chosen;
  if (!reads(chosen.backend)) {
    // Only an explicit choice, or `auto` with nothing else installed, gets here.
    const others = preference(input.format).filter((b) => b !== chosen.backend && BACKENDS[b].start && runs(b) && reads(b));
    const install = chosen.backend === "gdb" ? "install gdb-multiarch" : "install gdb-multiarch or LLDB";
    return { error: `${chosen.backend} as installed here cannot read ${input.architecture?.name ?? "the dump's architecture"}: ${others.length ? `use --debugger ${others.join(" or ")}, or ` : ""}${install}, or name a debugger built for it with --${chosen.backend}` };
  }
  const binary = support?.binary(chosen.backend);
  return binary === undefined ? chosen : { ...chosen, binary };
}

/** An explicit `--debugger`: honoured, or refused with the reason. */
function chooseRequested(input: ChoiceInput, requested: Backend): Choice {
  const definition = BACKENDS[requested];
  if (!definition.reads.includes(input.format)) {
    const readers = preference(input.format).filter((b) => BACKENDS[b].start).join(" or ");
    return { error: `${requested} cannot read ${FORMAT_NAMES[input.format]}${readers ? `; use --debugger ${readers}` : ""}` };
  }
  if (!definition.start) return { error: notBuilt(requested) };
  if (definition.hosts && !definition.hosts.includes(input.host) && !input.named?.(requested)) {
    return { error: `${requested} runs only on ${definition.hosts.join(", ")}; name a binary that speaks its protocol with --${requested} to use it here` };
  }
  return { backend: requested };
}

/** `auto`: the first backend that this build has, this machine runs and `reads` the dump's architecture. */
function chooseAuto(input: ChoiceInput, reads: (backend: Backend) => boolean): Choice {
  const candidates = preference(input.format, input.goProgram ?? false).filter((b) => !BACKENDS[b].hosts || BACKENDS[b].hosts?.includes(input.host));
  const built = candidates.filter((b) => BACKENDS[b].start);
  // A binary the user named is what they want run: one that cannot run is an error, not a reason to switch.
  const broken = built.find((b) => input.named?.(b) && !input.installed(b));
  if (broken) {
    const binary = input.binary?.(broken);
    return { error: `the ${broken} you named${binary ? ` (${binary})` : ""} cannot be run: no such file, or not executable` };
  }
  const backend = built.find((b) => input.installed(b) && reads(b)) ?? built.find((b) => input.installed(b));
  // None installed: the first built one, whose start then says which binary it could not run.
  // (Delve is only the first choice for a Go program's core: gdb reads one too, and says it is missing better.)
  const usual = built.find((b) => b !== "dlv");
  if (!backend) return usual ? { backend: usual } : { error: `reading ${FORMAT_NAMES[input.format]} needs ${candidates.join(" or ")}, and this version of dumpdbg has no ${candidates.join(" or ")} backend yet` };
  const preferred = built[0];
  const what = input.goProgram && input.format === "elf-core" ? "a Go program's core" : FORMAT_NAMES[input.format];
  if (preferred && preferred !== backend) {
    const why = input.installed(preferred) ? `${preferred} as installed here cannot read ${input.architecture?.name ?? "its architecture"}` : `${preferred} is not installed`;
    return { backend, fallback: `${why}; reading ${what} with ${backend}` };
  }
  return { backend };
}


function preference(format: DumpFormat, goProgram = false): Backend[] {
  if (format === "minidump") return ["cdb", "lldb"];
  return goProgram ? ["dlv", "gdb", "lldb"] : ["gdb", "lldb"];
}

function notBuilt(backend: Backend): string {
  return `the ${backend} backend is not in this version of dumpdbg yet`;
}

/** Starts the chosen backend's session (not yet opened). */
export async function startSession(backend: Backend, options: SessionOptions): Promise<DebuggerSession> {
  const start = BACKENDS[backend].start;
  if (!start) throw new DebuggerMissing(notBuilt(backend));
  return start(options);
}

/** Whether `binary` can be run: a path that is executable, or a name found on PATH. */
export function canRun(binary: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const executable = (path: string) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (binary.includes("/") || isAbsolute(binary)) return executable(binary);
  return (env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && executable(join(dir, binary)));
}
