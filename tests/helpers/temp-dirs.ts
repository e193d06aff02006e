/**
 * Temporary folders for a test file, removed when the file's tests are done. Call `tempDirs()` once
 * at the top of the file, where vitest lets it register the removal; each call of the function it
 * returns makes a folder under the system's temporary folder. (A helper that registered the removal
 * while a test runs would attach it to whichever test is current, in a file of concurrent tests.)
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

export function tempDirs(): (prefix: string) => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  return (prefix) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}
