/**
 * A Go program that panics on a nil map in `main.(*Cache).Put`, built and crashed at test time
 * (GOTRACEBACK=crash makes the runtime abort with a core), cached under
 * os.tmpdir()/dumpdbg-fixtures/go-dlv-<hash of the source and the Go version>.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const SOURCE = `package main

import (
	"fmt"
	"os"
)

// Cache keeps sessions by name; its map is never made.
type Cache struct {
	name  string
	items map[string]int
}

func (c *Cache) Put(key string, value int) {
	c.items[key] = value // CULPRIT
}

func main() {
	c := &Cache{name: "sessions"}
	fmt.Fprintln(os.Stderr, "putting alice")
	c.Put("alice", 42)
}
`;

export interface GoCore {
  exe: string;
  core: string;
  dir: string;
  source: string;
  /** The line of `c.items[key] = value`. */
  culpritLine: number;
}

export function hasGo(): boolean {
  return spawnSync("go", ["version"], { encoding: "utf8" }).status === 0;
}

export function hasDlv(): boolean {
  return spawnSync("dlv", ["version"], { encoding: "utf8" }).status === 0;
}

export function buildGoCore(): GoCore {
  const goVersion = execFileSync("go", ["version"], { encoding: "utf8" }).trim();
  const hash = createHash("sha256").update(SOURCE).update(goVersion).digest("hex").slice(0, 12);
  const dir = path.join(os.tmpdir(), "dumpdbg-fixtures", `go-dlv-${hash}`);
  const result = { exe: path.join(dir, "cache"), core: path.join(dir, "core"), dir, source: path.join(dir, "main.go"), culpritLine: SOURCE.split("\n").findIndex((l) => l.includes("// CULPRIT")) + 1 };
  if (existsSync(result.core) && existsSync(result.exe)) return result;
  // Built where it stays: the debug information names main.go by the path it was compiled at.
  // The folder is the lock between test files building it at once; `core` appears last.
  mkdirSync(path.dirname(dir), { recursive: true });
  try {
    mkdirSync(dir);
  } catch {
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
      if (existsSync(result.core)) return result;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
    throw new Error(`${dir} is being built by another process, or was left half-built: remove it`);
  }
  writeFileSync(path.join(dir, "main.go"), SOURCE);
  writeFileSync(path.join(dir, "go.mod"), "module example.com/cache\n\ngo 1.19\n");
  const env = { ...process.env, GOCACHE: path.join(os.tmpdir(), "dumpdbg-fixtures", "go-cache"), GOFLAGS: "-mod=mod", GOTRACEBACK: "crash" };
  try {
    // Unoptimised, so the locals are Delve's to read.
    execFileSync("go", ["build", "-gcflags=all=-N -l", "-o", "cache", "."], { cwd: dir, env, stdio: "pipe" });
    // core_pattern here writes `core` (or `core.PID`) in the working directory.
    const crash = path.join(dir, "crash");
    mkdirSync(crash);
    spawnSync("sh", ["-c", "ulimit -c unlimited && exec ../cache"], { cwd: crash, env, stdio: "pipe" });
    const core = readdirSync(crash).find((name) => name === "core" || /^core\.\d+$/.test(name));
    if (!core) throw new Error(`the Go program crashed without a core in ${crash}: check /proc/sys/kernel/core_pattern and ulimit -c`);
    renameSync(path.join(crash, core), result.core);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return result;
}
