/** Parsers for the address-space views: `info proc mappings` and `info files` (`info target`). */
import type { Mapping, TargetFiles, TargetSection } from "../../probe.js";
import { lines, normalizeAddress } from "./common.js";

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
