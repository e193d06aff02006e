/**
 * Which installed package a file of the dumped process comes from (Debian's dpkg), so a report can
 * name the exact debug symbols to install for a stripped program. Asked only about a file whose
 * build id is the one the core recorded: then the package here is the build that ran.
 */
import { execFile } from "node:child_process";
import { realpathSync } from "node:fs";
import { promisify } from "node:util";

export interface InstalledPackage {
  name: string;
  version: string;
}

const QUERY_TIMEOUT_MS = 2000;

const run = promisify(execFile);

/** What dpkg said of each file asked about: a batch triages many dumps of the same programs. */
const known = new Map<string, Promise<InstalledPackage | null>>();

/**
 * The package that installed `path`, with its version; null without dpkg or when no package owns it.
 * dpkg is asked without blocking: a batch runs other dumps' triage on the same event loop.
 */
export function packageOf(path: string): Promise<InstalledPackage | null> {
  let owner = known.get(path);
  if (!owner) known.set(path, (owner = ownerOf(path)));
  return owner;
}

async function ownerOf(path: string): Promise<InstalledPackage | null> {
  // dpkg records the path it installed: with a merged /usr, /lib/… is the same file as /usr/lib/….
  for (const candidate of new Set([path, real(path), path.replace(/^\/lib/, "/usr/lib")])) {
    const owner = (await query(["-S", candidate]))?.split("\n")[0]?.match(/^([^:\s,]+(?::[\w-]+)?): /)?.[1];
    if (!owner) continue;
    const version = (await query(["-W", "-f=${Version}", owner]))?.trim();
    if (version) return { name: owner.replace(/:[\w-]+$/, ""), version };
  }
  return null;
}

async function query(args: string[]): Promise<string | null> {
  try {
    return (await run("dpkg-query", args, { encoding: "utf8", timeout: QUERY_TIMEOUT_MS })).stdout;
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
