/**
 * `dumpdbg symbols`: what a person setting up symbols needs to see, as `symchk` and a stack
 * walker's verbose mode show it: every module of the dump with its ids (build id, PDB GUID and age,
 * Breakpad id, image id), where dumpdbg found or fetched its symbols or why it found none, and what
 * the debugger then had for it.
 */
import { askSession } from "../debuggers/inspector.js";
import { openDump, openingLines } from "../debuggers/open.js";
import type { SharedLibrary } from "../debuggers/probe.js";
import type { ModuleSymbols } from "../debuggers/symbols/locate.js";
import { openOptions, type DumpFlags } from "./dump-options.js";

export interface SymbolsFlags extends DumpFlags {
  json?: boolean;
}

interface Row extends ModuleSymbols {
  /** What the debugger had for the module once loaded: `debug info`, `symbol table only`, `not loaded`. */
  debugger: string;
}

export async function symbols(dumpPath: string, flags: SymbolsFlags): Promise<void> {
  const opened = await openDump({ ...openOptions(dumpPath, flags), onMismatch: "warn", listSymbols: true });
  try {
    for (const line of openingLines(opened)) process.stderr.write(`dumpdbg: ${line}\n`);
    const libraries = await askSession(opened.session)({ kind: "shared-libraries" });
    const loaded = libraries.reading ?? [];
    const rows: Row[] = (opened.symbols?.modules ?? []).map((module) => ({ ...module, debugger: debuggerView(module, loaded) }));
    if (flags.json) process.stdout.write(`${JSON.stringify({ dump: opened.dump.path, debugger: opened.session.backend, modules: rows }, null, 2)}\n`);
    else process.stdout.write(table(rows));
  } finally {
    await opened.session.close({ wait: false });
  }
}

function debuggerView(module: ModuleSymbols, loaded: SharedLibrary[]): string {
  const name = module.module.toLowerCase();
  const library = loaded.find((l) => (l.path.split(/[\\/]/).at(-1) ?? "").toLowerCase() === name);
  if (!library) return "not listed";
  if (library.from === null) return "not loaded (the module's file is not here)";
  if (library.missingDebugInfo) return "symbol table only";
  return library.symbolsRead ? "debug info" : "not read";
}

function idsText(module: ModuleSymbols): string {
  const { ids } = module;
  const parts = [ids.debugFile ? `pdb ${ids.debugFile.split(/[\\/]/).at(-1)} ${ids.buildId ?? "?"}` : ids.buildId ? `build id ${ids.buildId}` : null, ids.breakpadId && ids.breakpadId !== ids.buildId ? `breakpad ${ids.breakpadId}` : null, ids.codeId ? `image ${ids.codeId}` : null];
  return parts.filter(Boolean).join(", ") || "no id";
}

function sourceText(module: ModuleSymbols): string {
  switch (module.status) {
    case "found":
      return `found: ${module.file}`;
    case "fetched":
      return `fetched from ${module.from}: ${module.file}`;
    case "missing":
      return `missing (${module.detail})`;
    case "refused":
      return `refused: ${module.detail}`;
    case "unidentified":
      return "no id in the dump to look it up by";
    case "not looked for":
      return "no symbol place named (--symbols)";
  }
}

function table(rows: Row[]): string {
  const lines = rows.map((row) => `${row.module}\n  ids:      ${idsText(row)}\n  symbols:  ${sourceText(row)}${row.image ? `\n  image:    ${row.image}` : ""}\n  debugger: ${row.debugger}`);
  const missing = rows.filter((r) => r.status === "missing" || r.status === "refused").length;
  const found = rows.filter((r) => r.status === "found" || r.status === "fetched").length;
  return `${lines.join("\n")}\n\n${rows.length} modules: ${found} with symbols from dumpdbg's search, ${missing} missing or refused\n`;
}
