/**
 * Which debugger reads a dump of which processor. A core from an arm64 machine analysed on an
 * x86-64 one needs a debugger built for arm64: Debian's gdb reads only its host's registers (it
 * says "Couldn't find general-purpose registers in core file" and shows no thread's state), while
 * `gdb-multiarch` and LLDB read every architecture they were built with. The dump says its
 * machine (ELF e_machine, the minidump's processor); this module says who can read it.
 */
import { execFileSync } from "node:child_process";

import type { Platform } from "./model.js";
import type { Backend } from "./session.js";

export type Architecture = Platform["arch"];

/** The gdb built for every target Debian packages, beside the host-only `gdb`. */
export const MULTIARCH_GDB = "gdb-multiarch";

/** gdb's name for each architecture (`set architecture NAME`). */
const GDB_ARCHITECTURES: Partial<Record<Architecture, string>> = { x86_64: "i386:x86-64", x86: "i386", arm64: "aarch64", arm: "arm" };

/** How a person calls each architecture in a message. */
const ARCHITECTURE_NAMES: Record<Architecture, string> = { x86_64: "x86-64", x86: "x86", arm64: "arm64 (AArch64)", arm: "32-bit ARM", other: "another architecture" };

/** The architecture this machine runs (Node's `process.arch`), in the dump model's names. */
export function hostArchitecture(arch: string = process.arch): Architecture {
  const known: Record<string, Architecture> = { x64: "x86_64", ia32: "x86", arm64: "arm64", arm: "arm" };
  return known[arch] ?? "other";
}

export function architectureName(arch: Architecture): string {
  return ARCHITECTURE_NAMES[arch];
}

/**
 * Whether a dump of `arch` is foreign here: its processor is another than this machine's. A dump
 * whose architecture the file does not say is taken as the host's (nothing better is known).
 */
export function isForeign(arch: Architecture, host: Architecture = hostArchitecture()): boolean {
  return arch !== "other" && arch !== host;
}

/** What the choice of a backend needs to know of a dump's architecture on this machine. */
export interface ArchitectureSupport {
  /** Whether the backend, as installed here, reads the architecture's registers and code. */
  reads(backend: Backend): boolean;
  /** The binary that does, where it is another than the backend's usual one (`gdb-multiarch`). */
  binary(backend: Backend): string | undefined;
}

/**
 * Who reads a dump of `arch` here. The host's own architecture: every backend. A foreign one:
 * gdb through `gdb-multiarch` when installed, else the plain gdb only if it was built for that
 * target (asked once, `set architecture`); LLDB reads all the architectures dumpdbg knows; Delve
 * only its host's. A binary the user named is taken at their word: they know what they built.
 */
export function architectureSupport(arch: Architecture, input: { host?: Architecture; named(backend: Backend): boolean; canRun(binary: string): boolean; gdbReads?: (gdb: string, arch: string) => boolean }): ArchitectureSupport {
  const host = input.host ?? hostArchitecture();
  if (!isForeign(arch, host)) return { reads: () => true, binary: () => undefined };
  const gdbName = GDB_ARCHITECTURES[arch];
  const gdbReads = input.gdbReads ?? gdbBuiltFor;
  let gdb: string | null | undefined;
  const foreignGdb = (): string | null => {
    if (gdb !== undefined) return gdb;
    gdb = gdbName === undefined ? null : input.canRun(MULTIARCH_GDB) ? MULTIARCH_GDB : input.canRun("gdb") && gdbReads("gdb", gdbName) ? "gdb" : null;
    return gdb;
  };
  return {
    reads: (backend) => {
      if (input.named(backend)) return true;
      if (backend === "gdb") return foreignGdb() !== null;
      if (backend === "dlv") return false;
      return arch !== "other";
    },
    binary: (backend) => (backend === "gdb" && !input.named(backend) ? (foreignGdb() ?? undefined) : undefined),
  };
}

/** Whether a gdb binary was built for an architecture: it accepts `set architecture NAME` (~80 ms, asked only for a foreign dump without gdb-multiarch). */
function gdbBuiltFor(gdb: string, name: string): boolean {
  try {
    execFileSync(gdb, ["-nx", "-batch", "-ex", `set architecture ${name}`], { stdio: "ignore", timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}
