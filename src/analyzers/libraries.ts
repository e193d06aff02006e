/**
 * Whether the libraries the debugger loaded are the ones the dumped process ran: each module the
 * core maps, with the build id from the core's copy of its first page, against the file the
 * debugger found for it. A core from another machine (production, a container) names libraries
 * this machine lacks, or has in another build: the debugger then cannot read their code or unwind
 * through them, and what it shows there is not what ran. Pure.
 */
import type { Module } from "../debuggers/model.js";
import type { SharedLibrary } from "../debuggers/probe.js";
import { isRuntimeModule } from "./culprit.js";

export interface ForeignLibrary {
  /** The library's path on the machine that wrote the core. */
  path: string;
  /** Not found here, or found in another build. */
  status: "missing" | "different";
  /** The file the debugger loaded instead (`different`). */
  found: string | null;
  /** The build id in the core, and the one of the file found here. */
  coreId: string | null;
  foundId: string | null;
  start: bigint | null;
  end: bigint | null;
  /** Where its code lies, as the dump says (its program headers); empty where it does not. */
  code: { start: bigint; end: bigint }[];
}

/** Reads a local file's build id; null when it has none or cannot be read. */
export type BuildIdReader = (path: string) => string | null;

const VDSO = /^\[vdso\]$|linux-vdso|linux-gate/;

/**
 * The core's libraries that are not here as they were: missing (the debugger read no symbols and
 * has no address range for them) or different (the file found has another build id). The program
 * itself is checked elsewhere (its own mismatch is an input error).
 */
export function foreignLibraries(modules: Module[], loaded: SharedLibrary[], program: string | null, buildIdOf: BuildIdReader): ForeignLibrary[] {
  const foreign: ForeignLibrary[] = [];
  // The program given with --exe may lie at another path than the core names: its build id says it is the same file.
  const programId = program === null ? null : buildIdOf(program);
  for (const module of modules) {
    if (module.path === program || (programId !== null && module.buildId === programId) || VDSO.test(module.path) || module.path.endsWith(" (deleted)")) continue;
    const range = {
      start: module.start === null ? null : BigInt(module.start),
      end: module.end === null ? null : BigInt(module.end),
      code: (module.code ?? []).map((code) => ({ start: BigInt(code.start), end: BigInt(code.end) })),
    };
    // The core names the file (`libffi.so.8.1.2`), the debugger often the link it was loaded by (`libffi.so.8`): the address decides.
    const library =
      loaded.find((lib) => lib.from !== null && range.start !== null && range.end !== null && range.start <= BigInt(lib.from) && BigInt(lib.from) < range.end) ??
      loaded.find((lib) => lib.path === module.path) ??
      loaded.find((lib) => baseName(lib.path) === baseName(module.path));
    // gdb lists a library it could not find without an address range; LLDB leaves it out.
    if (!library || (!library.symbolsRead && library.from === null)) {
      // A debugger that lists no library at all found no dynamic linker's list to read (a Go PIE has
      // no DT_DEBUG for ld.so to fill): the file at the path the core names, with the core's build id, is this machine's own.
      if (loaded.length === 0 && module.buildId !== null && buildIdOf(module.path) === module.buildId) continue;
      foreign.push({ path: module.path, status: "missing", found: null, coreId: module.buildId, foundId: null, ...range });
      continue;
    }
    const foundId = module.buildId === null ? null : buildIdOf(library.path);
    if (module.buildId !== null && foundId !== null && foundId !== module.buildId) {
      foreign.push({ path: module.path, status: "different", found: library.path, coreId: module.buildId, foundId, ...range });
    }
  }
  return foreign;
}

/** The foreign library whose image holds an address. */
export function foreignAt(libraries: ForeignLibrary[], address: bigint | null): ForeignLibrary | null {
  if (address === null) return null;
  return libraries.find((lib) => lib.start !== null && lib.end !== null && lib.start <= address && address < lib.end) ?? null;
}

/** One note for the report: which libraries, what that costs, and what to do. */
export function foreignNote(libraries: ForeignLibrary[]): string | null {
  if (libraries.length === 0) return null;
  const said = libraries.slice(0, 4).map((lib) =>
    lib.status === "missing"
      ? `${lib.path}${lib.coreId ? ` (build id ${lib.coreId.slice(0, 12)}…)` : ""} is not on this machine`
      : `${lib.found} here is another build than the ${baseName(lib.path)} the process ran (build id ${lib.foundId?.slice(0, 12)}…, the core's ${lib.coreId?.slice(0, 12)}…)`,
  );
  const more = libraries.length > 4 ? `, and ${libraries.length - 4} more` : "";
  const system = libraries.some((lib) => isRuntimeModule(lib.path));
  return (
    `the core comes from another machine: ${said.join("; ")}${more}. ` +
    `The debugger cannot read ${libraries.length === 1 ? "that library's" : "those libraries'"} code or unwind through ${libraries.length === 1 ? "it" : "them"}, so frames and instructions inside ${libraries.length === 1 ? "it" : "them"} are not trusted here. ` +
    `Copy ${system ? "that machine's /lib and /usr/lib" : "those libraries"} into a folder and pass --solib-search-path DIR (or the whole root as --sysroot DIR), or their debug files with --debug-file-directory DIR`
  );
}

function baseName(path: string): string {
  return path.split("/").at(-1) ?? path;
}
