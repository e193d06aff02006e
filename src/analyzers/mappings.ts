/** Parsers for the address-space views: `info proc mappings` and `info files` (`info target`). */
import { lines, normalizeAddress } from "./gdb-text.js";

export interface Mapping {
  start: string;
  end: string;
  size: string;
  offset: string;
  /** `r-xp` and the like; gdb prints no permissions for a core file's mappings. */
  permissions: string | null;
  /** The mapped file; null for anonymous memory. */
  objfile: string | null;
}

export function parseMappings(output: string): Mapping[] {
  const mappings: Mapping[] = [];
  for (const line of lines(output)) {
    const row = /^\s*(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)(?:\s+([r-][w-][x-][ps-]))?(?:\s+(\S.*))?$/.exec(line);
    if (!row) continue;
    mappings.push({
      start: normalizeAddress(row[1] ?? "0"),
      end: normalizeAddress(row[2] ?? "0"),
      size: normalizeAddress(row[3] ?? "0"),
      offset: normalizeAddress(row[4] ?? "0"),
      permissions: row[5] ?? null,
      objfile: row[6]?.trim() ?? null,
    });
  }
  return mappings;
}

export interface TargetSection {
  start: string;
  end: string;
  /** `load3` for a core segment, `.text` and the like for a file's sections. */
  name: string;
  /** Which file provides it: "core", "exec", or the path of a shared library. */
  source: string;
}

export interface TargetFiles {
  /** The program gdb read symbols from. */
  executable: string | null;
  core: string | null;
  sections: TargetSection[];
}

/**
 * `info files` is the one view of a core that lists every dumped segment (stacks and heap
 * included) next to the code sections of the program and its libraries.
 */
export function parseTargetFiles(output: string): TargetFiles {
  let executable: string | null = null;
  let core: string | null = null;
  let source = "exec";
  const sections: TargetSection[] = [];
  for (const line of lines(output)) {
    const symbols = /^Symbols from "(.*)"\.$/.exec(line);
    if (symbols) executable = symbols[1] ?? null;
    const heading = /^Local (core dump|exec) file:$/.exec(line.trim());
    if (heading) source = heading[1] === "exec" ? "exec" : "core";
    const file = /^\s+`(.*)', file type /.exec(line);
    if (file) {
      if (source === "core") core = file[1] ?? null;
      else executable ??= file[1] ?? null;
    }
    const row = /^\s+(0x[0-9a-f]+) - (0x[0-9a-f]+) is (\S+)(?: in (.*))?$/.exec(line);
    if (row) {
      sections.push({
        start: normalizeAddress(row[1] ?? "0"),
        end: normalizeAddress(row[2] ?? "0"),
        name: row[3] ?? "",
        source: row[4]?.trim() ?? source,
      });
    }
  }
  return { executable, core, sections };
}

const CODE_SECTIONS = new Set([".text", ".plt", ".plt.got", ".plt.sec", ".init", ".fini", ".iplt"]);

/** Whether an address lies in a code section of the program, a library, or the vDSO. */
export function isCodeAddress(files: TargetFiles, address: bigint): boolean {
  return files.sections.some(
    (section) => CODE_SECTIONS.has(section.name) && BigInt(section.start) <= address && address < BigInt(section.end),
  );
}

/** The core segment that holds an address (e.g. the stack of the crashing thread). */
export function coreSegmentAt(files: TargetFiles, address: bigint): TargetSection | null {
  return (
    files.sections.find(
      (section) => section.source === "core" && BigInt(section.start) <= address && address < BigInt(section.end),
    ) ?? null
  );
}
