/**
 * Small file systems of their own for fault-injection tests: a tmpfs of a given size mounted in a
 * test's folder, filled to the last byte or remounted read-only. Mounting needs root (the tests
 * run as root here); `mountingAllowed()` says whether it works, for the tests to skip with a
 * message where it does not.
 */
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export function mountingAllowed(): boolean {
  const probe = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-mount-probe-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], { stdio: "ignore" });
    execFileSync("umount", [probe], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** A tmpfs of `size` (as mount takes it: "8m", "512k") at `dir`, made if need be. */
export function mountTmpfs(dir: string, size: string): string {
  mkdirSync(dir, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]);
  return dir;
}

export function unmount(dir: string): void {
  execFileSync("umount", ["-l", dir], { stdio: "ignore" });
}

export function remountReadOnly(dir: string): void {
  execFileSync("mount", ["-o", "remount,ro", dir]);
}

/** Zeros into `file` until the disk refuses one more byte. */
export function fillToTheLastByte(file: string): void {
  const fd = openSync(file, "a");
  const block = Buffer.alloc(64 * 1024);
  try {
    for (let size = block.length; size >= 1; ) {
      try {
        writeSync(fd, block, 0, size);
      } catch {
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
}
