/**
 * Where to look for debug information, in the order the user gave it: `--symbols` entries (a
 * folder or an http(s) URL), `_NT_SYMBOL_PATH` (symsrv's syntax) and `DEBUGINFOD_URLS`, and the
 * one folder dumpdbg caches downloads in. Pure: the caller hands in the flags and environment.
 */
import { join } from "node:path";

/**
 * The layouts a server is asked in: `microsoft` (symsrv: `<name>/<id>/<name>`, `file.ptr`, `.pd_`),
 * `debuginfod` (`buildid/<id>/debuginfo`), or `any` (a plain URL: every layout that fits the module).
 */
export type SymbolProtocol = "microsoft" | "debuginfod" | "any";

export type SymbolSource =
  /** A local store or folder of debug files, read in the same layouts as a server. */
  | { kind: "folder"; path: string; origin: SourceOrigin }
  | { kind: "server"; url: string; protocol: SymbolProtocol; origin: SourceOrigin };

/** Which setting named a source, so a message can point the user at it. */
export type SourceOrigin = "--symbols" | "_NT_SYMBOL_PATH" | "DEBUGINFOD_URLS";

export interface SymbolSettings {
  /** `--symbols` entries (DUMPDBG_SYMBOLS already merged in), in the order given. */
  symbols: string[];
  /** `--symbols-cache DIR`. */
  cacheDir?: string | undefined;
  env: { _NT_SYMBOL_PATH?: string | undefined; DEBUGINFOD_URLS?: string | undefined; XDG_CACHE_HOME?: string | undefined };
  /** The user's home folder, for the default cache. */
  home: string;
}

export interface SymbolSources {
  sources: SymbolSource[];
  /** Downloads land here, in the servers' own layouts; it is read before any server. */
  cache: string;
  /** Entries that could not be used, one line each. */
  notes: string[];
}

export function symbolSources(settings: SymbolSettings): SymbolSources {
  const notes: string[] = [];
  const sources: SymbolSource[] = [
    ...settings.symbols.filter((entry) => entry.trim() !== "").map((entry) => fromSymbolsFlag(entry.trim())),
    ...ntSymbolPath(settings.env._NT_SYMBOL_PATH ?? "", notes),
    ...debuginfodUrls(settings.env.DEBUGINFOD_URLS ?? "", notes),
  ];
  return { sources: withoutRepeats(sources), cache: cacheDir(settings), notes };
}

function cacheDir(settings: SymbolSettings): string {
  if (settings.cacheDir) return settings.cacheDir;
  const xdg = settings.env.XDG_CACHE_HOME;
  // The XDG spec says a relative XDG_CACHE_HOME is invalid and is to be ignored.
  const base = xdg && xdg.startsWith("/") ? xdg : join(settings.home, ".cache");
  return join(base, "dumpdbg", "symbols");
}

function isUrl(entry: string): boolean {
  return /^https?:\/\//i.test(entry);
}

/** A URL without its trailing slashes, so layouts append `/<name>/…` once. */
function serverUrl(url: string): string {
  return url.replace(/\/+$/, "");
}

function fromSymbolsFlag(entry: string): SymbolSource {
  return isUrl(entry) ? { kind: "server", url: serverUrl(entry), protocol: "any", origin: "--symbols" } : { kind: "folder", path: entry, origin: "--symbols" };
}

/**
 * symsrv's path: `;`-separated elements, each `srv*[DOWNSTREAM*]…*UPSTREAM`, `symsrv*symsrv.dll*…`,
 * `cache*DIR` or a plain folder. A downstream store is a Microsoft-layout folder: it is read like
 * one, while downloads go to dumpdbg's own cache.
 */
function ntSymbolPath(value: string, notes: string[]): SymbolSource[] {
  const sources: SymbolSource[] = [];
  for (const element of value.split(";").map((e) => e.trim()).filter(Boolean)) {
    const parts = element.split("*");
    const head = (parts[0] ?? "").toLowerCase();
    const stores = head === "srv" ? parts.slice(1) : head === "symsrv" ? parts.slice(2) : head === "cache" ? parts.slice(1) : null;
    if (stores === null) {
      if (parts.length > 1) notes.push(`_NT_SYMBOL_PATH element ${element} is not a form dumpdbg reads (srv*, symsrv*, cache* or a folder)`);
      else sources.push(isUrl(element) ? { kind: "server", url: serverUrl(element), protocol: "microsoft", origin: "_NT_SYMBOL_PATH" } : { kind: "folder", path: element, origin: "_NT_SYMBOL_PATH" });
      continue;
    }
    // An empty store (`srv**URL`) means symsrv's default downstream store, which dumpdbg's cache stands for.
    for (const store of stores.map((s) => s.trim()).filter(Boolean)) {
      sources.push(isUrl(store) ? { kind: "server", url: serverUrl(store), protocol: "microsoft", origin: "_NT_SYMBOL_PATH" } : { kind: "folder", path: store, origin: "_NT_SYMBOL_PATH" });
    }
  }
  return sources;
}

/** debuginfod's client variable: URLs separated by spaces; anything else in it is said and skipped. */
function debuginfodUrls(value: string, notes: string[]): SymbolSource[] {
  const sources: SymbolSource[] = [];
  for (const word of value.split(/\s+/).filter(Boolean)) {
    if (isUrl(word)) sources.push({ kind: "server", url: serverUrl(word), protocol: "debuginfod", origin: "DEBUGINFOD_URLS" });
    else notes.push(`DEBUGINFOD_URLS entry ${word} is not an http(s) URL`);
  }
  return sources;
}

/** The same folder or server named twice is asked once, where it was first named. */
function withoutRepeats(sources: SymbolSource[]): SymbolSource[] {
  const seen = new Set<string>();
  return sources.filter((source) => {
    const key = source.kind === "folder" ? `folder ${source.path}` : `server ${source.protocol} ${source.url}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
