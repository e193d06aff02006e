/** Parser for `info sharedlibrary`. */
import type { SharedLibrary } from "../../probe.js";
import { lines, normalizeAddress } from "./common.js";

export function parseSharedLibraries(output: string): SharedLibrary[] {
  const libraries: SharedLibrary[] = [];
  for (const line of lines(output)) {
    const row = /^(?:(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+)?\s*(Yes|No)( \(\*\))?\s+(\/\S.*|\S+\.so\S*)$/.exec(line.trim());
    if (!row) continue;
    libraries.push({
      from: row[1] ? normalizeAddress(row[1]) : null,
      to: row[2] ? normalizeAddress(row[2]) : null,
      symbolsRead: row[3] === "Yes",
      missingDebugInfo: Boolean(row[4]),
      path: (row[5] ?? "").trim(),
    });
  }
  return libraries;
}
