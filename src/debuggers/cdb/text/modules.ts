/**
 * Readers of cdb's module lists: `lm` (each module's range, name and symbol state) and `lmf` (its
 * range and the image's full path). Both stop at the list of unloaded modules.
 */
import type { SharedLibrary, TargetFiles } from "../../probe.js";
import { bounded, cdbAddress, lines } from "./common.js";

/** Modules read from one list. */
const MAX_MODULES = 10_000;

/** `00007ff6`1a2b0000 00007ff6`1a2c5000   prog C (private pdb symbols)  C:\build\prog.pdb`. */
const LM_ROW = /^([0-9a-f`]{8,17})\s+([0-9a-f`]{8,17})\s+(\S+)\s+(?:[A-Z#]{1,3}\s+)?\(([^)]*)\)/i;
/** `00007ff6`1a2b0000 00007ff6`1a2c5000   prog C:\app\prog.exe`. */
const LMF_ROW = /^([0-9a-f`]{8,17})\s+([0-9a-f`]{8,17})\s+(\S+)\s+(.+?)\s*$/i;

function loadedRows(output: string): string[] {
  const rows: string[] = [];
  for (const line of lines(output)) {
    if (/^Unloaded modules:/i.test(line.trim()) || rows.length >= MAX_MODULES) break;
    rows.push(line);
  }
  return rows;
}

/** `lm`: modules by name, whether cdb has their symbols (`(deferred)`: not yet asked). */
export function parseModuleList(output: string): SharedLibrary[] {
  const libraries: SharedLibrary[] = [];
  for (const line of loadedRows(output)) {
    const row = LM_ROW.exec(line.trim());
    if (!row) continue;
    const state = (row[4] ?? "").toLowerCase();
    libraries.push({
      from: cdbAddress(row[1]),
      to: cdbAddress(row[2]),
      symbolsRead: /pdb symbols|codeview symbols|sym file|dia/.test(state),
      missingDebugInfo: /no symbols|export symbols/.test(state),
      path: bounded(row[3] ?? ""),
    });
  }
  return libraries;
}

/**
 * `lmf`: the images, each as one section spanning it (cdb lists no sections without `!dh`); the
 * program is the `.exe`. A section named `.text` is what the model's readers take for a module's code.
 */
export function parseModuleFiles(output: string): TargetFiles {
  let executable: string | null = null;
  const sections: TargetFiles["sections"] = [];
  for (const line of loadedRows(output)) {
    const row = LMF_ROW.exec(line.trim());
    const [start, end] = [cdbAddress(row?.[1]), cdbAddress(row?.[2])];
    if (!row || start === null || end === null) continue;
    const path = bounded(row[4] ?? "");
    const isProgram = executable === null && /\.exe$/i.test(path);
    if (isProgram) executable = path;
    sections.push({ start, end, name: ".text", source: isProgram ? "exec" : path, loaded: true });
  }
  return { executable, core: null, sections };
}

/** Whether the process ran .NET: the CLR of .NET Core and .NET 5+ (`coreclr`) or of .NET Framework (`clr`, `mscorwks`). */
export function clrModule(libraries: SharedLibrary[]): "coreclr" | "clr" | "mscorwks" | null {
  const names = new Set(libraries.map((library) => library.path.toLowerCase()));
  for (const name of ["coreclr", "clr", "mscorwks"] as const) if (names.has(name)) return name;
  return null;
}
