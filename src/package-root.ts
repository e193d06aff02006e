/**
 * dumpdbg's version, from its package.json: the nearest one above this module whose name is
 * dumpdbg's, the same from the sources (tests) and from the bundle in dist/.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let found: string | null = null;

export function packageRoot(): string {
  if (found) return found;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "dumpdbg") return (found = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`dumpdbg's package.json is not above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version: string }).version;
}
