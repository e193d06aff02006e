/**
 * Which installed package a file of the dumped process comes from (Debian's dpkg), so a report can
 * name the exact debug symbols to install for a stripped program. Asked only about a file whose
 * build id is the one the core recorded: then the package here is the build that ran.
 */
import { execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";

export interface InstalledPackage {
  name: string;
  version: string;
}

const QUERY_TIMEOUT_MS = 2000;

/** What dpkg said of each file asked about: a batch triages many dumps of the same programs. */
const known = new Map<string, InstalledPackage | null>();

/** The package that installed `path`, with its version; null without dpkg or when no package owns it. */
export function packageOf(path: string): InstalledPackage | null {
  if (!known.has(path)) known.set(path, ownerOf(path));
  return known.get(path) ?? null;
}

function ownerOf(path: string): InstalledPackage | null {
  // dpkg records the path it installed: with a merged /usr, /lib/… is the same file as /usr/lib/….
  for (const candidate of new Set([path, real(path), path.replace(/^\/lib/, "/usr/lib")])) {
    const owner = query(["-S", candidate])?.split("\n")[0]?.match(/^([^:\s,]+(?::[\w-]+)?): /)?.[1];
    if (!owner) continue;
    const version = query(["-W", "-f=${Version}", owner])?.trim();
    if (version) return { name: owner.replace(/:[\w-]+$/, ""), version };
  }
  return null;
}

function query(args: string[]): string | null {
  try {
    return execFileSync("dpkg-query", args, { encoding: "utf8", timeout: QUERY_TIMEOUT_MS, stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return null;
  }
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
