/**
 * Parsers for what LLDB says about the process's modules and address space: `image list`,
 * `image dump sections`, `image lookup --address`, `memory region --all`.
 */
import type { SymbolAt } from "../../model.js";
import { normalizeAddress } from "../../model.js";
import type { Mapping, SharedLibrary, TargetFiles, TargetSection } from "../../probe.js";
import { parseLocation } from "./frames.js";

/** `[  2] 93AC61EC-... 0x00007f213ffbd000 /lib/x86_64-linux-gnu/libc.so.6` and its debug file on the next line. */
export function parseImageList(output: string): SharedLibrary[] {
  const libraries: SharedLibrary[] = [];
  for (const line of output.split("\n")) {
    const row = /^\[\s*(\d+)\]\s+(?:\S+\s+)?(0x[0-9a-f]+)\s+(.+?)\s*(?:\(0x[0-9a-f]+\))?\s*$/.exec(line);
    if (row) {
      // The first image is the program itself; the others are what it loaded.
      if (row[1] === "0") continue;
      libraries.push({ from: normalizeAddress(row[2] ?? "0x0"), to: null, symbolsRead: true, missingDebugInfo: false, path: row[3] ?? "" });
    }
  }
  return libraries;
}

/**
 * `image dump sections`: each module's sections with their load ranges. The first module is the
 * executable (source "exec"); the dump's own segments are not modules' sections and are read from
 * `memory region --all` instead.
 */
export function parseSections(output: string): TargetFiles {
  const sections: TargetSection[] = [];
  let executable: string | null = null;
  let module: string | null = null;
  for (const line of output.split("\n")) {
    // `Sections for '/lib/x86_64-linux-gnu/libc.so.6' (x86_64):`, `Sections for '[vdso](0x00007f9ef7c14000)' (x86_64):`.
    const header = /^Sections for '(.+?)(?:\(0x[0-9a-f]+\))?'(?:\([^)]*\))? \([^)]*\):$/.exec(line);
    if (header) {
      module = header[1] ?? null;
      executable ??= module;
      continue;
    }
    const row = /^\s+0x[0-9a-f]+\s+(\S+)\s+\[(0x[0-9a-f]+)-(0x[0-9a-f]+)\)\s+\S+\s+0x[0-9a-f]+\s+0x[0-9a-f]+\s+0x[0-9a-f]+\s+(\S+)\s*$/.exec(line);
    if (!row || module === null || row[1] === "container") continue;
    // `prog.PT_LOAD[1]..text` → `.text`, `libc.so.6.PT_LOAD[1].__libc_freeres_fn` → `__libc_freeres_fn`; a PE's `prog..text` → `.text`.
    const name = /\.PT_LOAD\[\d+\]\.(\S+)$/.exec(row[4] ?? "")?.[1] ?? /\.(\.[^.]\S*)$/.exec(row[4] ?? "")?.[1] ?? row[4] ?? "";
    // LLDB stands a module whose file it could not find in with one section over its whole image.
    const placeholder = name === ".module_image";
    sections.push({
      start: normalizeAddress(row[2] ?? "0x0"),
      end: normalizeAddress(row[3] ?? "0x0"),
      name,
      source: module === executable ? "exec" : module,
      ...(placeholder ? { loaded: false } : {}),
    });
  }
  return { executable, core: null, sections };
}

/**
 * `image lookup -a ADDR`: `Summary: libc.so.6\`__GI___libc_free + 12 at malloc.c:3350:6`. In code
 * inlined into a function, the summary names the function and the inlined call, then one line per
 * call it was inlined from: `prog\`main + 87 [inlined] log_line_length + 6 at prog.c:16`, and below
 * it `prog\`main + 81 [inlined] log_request + 63 at prog.c:22`, `prog\`main + 18 at prog.c:35`.
 */
export function parseLookup(output: string): SymbolAt | null {
  const summary = /^\s*Summary: (?:(\S+?)`)?(.*?)(?: \+ (\d+))?(?: at (\S+))?\s*$/m.exec(output);
  if (!summary || !summary[2]) return null;
  const location = summary[4] ? parseLocation(summary[4]) : null;
  const inlined = / \[inlined\] /.test(summary[2]) ? inlinedChain(output, summary.index + summary[0].length) : null;
  if (inlined) return { ...inlined.compiled, section: null, module: summary[1] ?? null, file: location?.file ?? null, line: location?.line ?? null, inlined: inlined.frames };
  const section = /^\s*Address: \S+ \((?:\S+?\.)?(?:PT_LOAD\[\d+\])?\.?(\.[^ +)]+)/m.exec(output)?.[1] ?? null;
  // Summarised as its section, a variable is named by the verbose lookup's Variable line, its offset from the symbol's range.
  const variable = summary[2].startsWith(".") ? /^\s*Variable: .*\bname = "([^"]+)"/m.exec(output)?.[1] : undefined;
  const address = /^\s*Address: \S+?\[(0x[0-9a-f]+)\]/m.exec(output)?.[1];
  const start = /^\s*Symbol: .*\brange = \[(0x[0-9a-f]+)-/m.exec(output)?.[1];
  return {
    symbol: variable ?? summary[2],
    offset: variable && address && start ? Number(BigInt(address) - BigInt(start)) : Number(summary[3] ?? 0),
    section,
    module: summary[1] ?? null,
    file: location?.file ?? null,
    line: location?.line ?? null,
  };
}

/**
 * The frames at the address a summary names in inlined code: its first line's inlined call, then
 * the lines below it (indented, each naming the module) that carry the chain out to the function
 * compiled, innermost first; and that function with its offset.
 */
function inlinedChain(output: string, firstLineEnd: number): { compiled: { symbol: string; offset: number }; frames: NonNullable<SymbolAt["inlined"]> } | null {
  const first = /^\s*Summary: (.*)$/m.exec(output)?.[1] ?? "";
  const below = output.slice(firstLineEnd).split("\n").slice(1);
  const end = below.findIndex((line) => !/^\s+[^\s:]+`/.test(line));
  const frames: NonNullable<SymbolAt["inlined"]> = [];
  let compiled: { symbol: string; offset: number } | null = null;
  for (const line of [first, ...below.slice(0, end < 0 ? below.length : end)]) {
    const entry = /^\s*(?:\S+?`)?(.+?) \+ (\d+)(?: \[inlined\] (.+?)(?: \+ \d+)?)?(?: at (\S+))?\s*$/.exec(line);
    if (!entry?.[1]) return null;
    compiled ??= { symbol: entry[1], offset: Number(entry[2]) };
    const place = entry[4] ? parseLocation(entry[4]) : null;
    frames.push({ function: entry[3] ?? entry[1], file: place?.file ?? null, line: place?.line ?? null });
    if (!entry[3]) break;
  }
  return compiled && frames.length > 1 ? { compiled, frames } : null;
}

/** `memory region --all`: `[0x...-0x...) rw- /path PT_LOAD[3]` per region, unmapped gaps (`---`) left out. */
export function parseRegions(output: string): Mapping[] {
  const mappings: Mapping[] = [];
  for (const line of output.split("\n")) {
    const row = /^\[(0x[0-9a-f]+)-(0x[0-9a-f]+)\)\s+([r-][w-][x-])(?:\s+(.*))?$/.exec(line.trim());
    if (!row || row[3] === "---") continue;
    const start = BigInt(row[1] ?? "0");
    const end = BigInt(row[2] ?? "0");
    const named = (row[4] ?? "").trim().split(/\s+/).filter((word) => !/^PT_LOAD\[\d+\]$/.test(word) && word !== "");
    mappings.push({
      start: normalizeAddress(row[1] ?? "0x0"),
      end: normalizeAddress(row[2] ?? "0x0"),
      size: normalizeAddress(`0x${(end - start).toString(16)}`),
      offset: "0x0",
      permissions: `${row[3]}p`,
      objfile: named.length ? named.join(" ") : null,
    });
  }
  return mappings;
}
