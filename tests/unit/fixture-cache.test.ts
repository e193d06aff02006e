import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pruneFixtureCache } from "../helpers/fixture-cache.js";

const HOUR = 60 * 60 * 1000;
const MB = 1024 * 1024;
const NOW = Date.parse("2026-11-30T12:00:00Z");

let tmp: string;
let root: string;
let checkout: string;

beforeEach(() => {
  // The cache and the checkouts that built into it, in one temporary folder as on a CI machine.
  tmp = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-fixture-cache-"));
  root = path.join(tmp, "dumpdbg-fixtures");
  checkout = path.join(tmp, "clone");
  mkdirSync(path.join(checkout, "programs"), { recursive: true });
  mkdirSync(root);
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

/** One published entry as buildOnce leaves it: its index and its folder with a core of `mb` MB, last used `hoursAgo`. */
function entry(name: string, key: string, options: { mb: number; hoursAgo: number; source?: string; raced?: boolean }): string {
  const stem = `${name}-${key}`;
  const dir = path.join(root, `${stem}-0a1b2c3d`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, "core"), Buffer.alloc(options.mb * MB, 1));
  const index = path.join(root, `${stem}.json`);
  writeFileSync(index, JSON.stringify({ exe: path.join(dir, name), core: path.join(dir, "core"), dir, ...(options.source ? { source: options.source } : {}) }));
  // A build that lost the race to publish it, not yet deleted.
  if (options.raced) mkdirSync(path.join(root, `${stem}-99887766`));
  const at = new Date(NOW - options.hoursAgo * HOUR);
  for (const file of [path.join(dir, "core"), dir, index]) utimesSync(file, at, at);
  if (options.raced) utimesSync(path.join(root, `${stem}-99887766`), at, at);
  return stem;
}

function source(name: string): string {
  const file = path.join(checkout, "programs", `${name}.c`);
  writeFileSync(file, "int main(void) { return *(int *)0; }\n");
  return file;
}

const left = () => readdirSync(root).sort();
const plenty = () => 1000 * 1024 * MB;

describe("pruneFixtureCache", () => {
  it("removes the builds used longest ago until the cache is within its size, index and folders together", () => {
    entry("abort", "0123456789abcdef", { mb: 2, hoursAgo: 50, raced: true });
    entry("div-zero", "1111111111111111", { mb: 2, hoursAgo: 30 });
    const kept = entry("null-deref", "2222222222222222", { mb: 2, hoursAgo: 10 });

    const result = pruneFixtureCache(root, { maxBytes: 3 * MB, freeBytes: plenty, now: NOW });

    expect(result.removed).toEqual(["abort-0123456789abcdef", "div-zero-1111111111111111"]);
    expect(left()).toEqual([`${kept}-0a1b2c3d`, `${kept}.json`]);
    expect(result.freedBytes).toBeGreaterThanOrEqual(4 * MB);
    expect(result.keptBytes).toBeGreaterThanOrEqual(2 * MB);
  });

  it("removes nothing while the cache is within its size and the disk has room", () => {
    entry("abort", "0123456789abcdef", { mb: 1, hoursAgo: 500 });
    const before = left();
    expect(pruneFixtureCache(root, { maxBytes: 10 * MB, freeBytes: plenty, now: NOW }).removed).toEqual([]);
    expect(left()).toEqual(before);
  });

  it("frees the disk for the run about to start, oldest first", () => {
    entry("abort", "0123456789abcdef", { mb: 1, hoursAgo: 40 });
    entry("div-zero", "1111111111111111", { mb: 1, hoursAgo: 20 });
    const kept = entry("null-deref", "2222222222222222", { mb: 1, hoursAgo: 5 });
    // The disk lacks 1.5 MB of the room asked for: two builds of 1 MB go.
    const result = pruneFixtureCache(root, { maxBytes: 100 * MB, minFreeBytes: 10 * MB, freeBytes: () => 8.5 * MB, now: NOW });
    expect(result.removed).toEqual(["abort-0123456789abcdef", "div-zero-1111111111111111"]);
    expect(left()).toEqual([`${kept}-0a1b2c3d`, `${kept}.json`]);
  });

  it("keeps what a run may be reading (used lately) and what the helpers share, whatever the sizes", () => {
    const recent = entry("abort", "0123456789abcdef", { mb: 2, hoursAgo: 1 });
    // A build in progress: its folder, no index yet.
    const building = path.join(root, "div-zero-1111111111111111-0a1b2c3d");
    mkdirSync(building);
    utimesSync(building, new Date(NOW - 0.5 * HOUR), new Date(NOW - 0.5 * HOUR));
    mkdirSync(path.join(root, "wine-prefix"));
    mkdirSync(path.join(root, "go-build-cache"));
    writeFileSync(path.join(root, "wine.lock"), "");
    const old = new Date(NOW - 100 * HOUR);
    for (const name of ["wine-prefix", "go-build-cache", "wine.lock"]) utimesSync(path.join(root, name), old, old);

    const result = pruneFixtureCache(root, { maxBytes: 0, minFreeBytes: Number.MAX_SAFE_INTEGER, freeBytes: () => 0, now: NOW });

    expect(result.removed).toEqual([]);
    expect(left()).toEqual([`${recent}-0a1b2c3d`, `${recent}.json`, "div-zero-1111111111111111-0a1b2c3d", "go-build-cache", "wine-prefix", "wine.lock"]);
  });

  it("removes a build whose source beside the cache is gone (a CI clone's), however lately it was used", () => {
    const gone = entry("abort", "0123456789abcdef", { mb: 1, hoursAgo: 0, source: source("abort") });
    const alive = entry("div-zero", "1111111111111111", { mb: 1, hoursAgo: 0, source: source("div-zero") });
    rmSync(path.join(checkout, "programs", "abort.c"));

    const result = pruneFixtureCache(root, { freeBytes: plenty, now: NOW });

    expect(result.removed).toEqual([gone]);
    expect(left()).toEqual([`${alive}-0a1b2c3d`, `${alive}.json`]);
  });

  it("keeps a build whose source is missing outside the cache's folder: it may be another machine's mount", () => {
    const elsewhere = entry("abort", "0123456789abcdef", { mb: 1, hoursAgo: 300, source: "/nonexistent-checkout/tests/fixtures/programs/abort.c" });
    expect(pruneFixtureCache(root, { freeBytes: plenty, now: NOW }).removed).toEqual([]);
    expect(existsSync(path.join(root, `${elsewhere}.json`))).toBe(true);
  });

  it("takes a folder that is not there for an empty cache", () => {
    expect(pruneFixtureCache(path.join(tmp, "none"), { now: NOW })).toEqual({ removed: [], freedBytes: 0, keptBytes: 0 });
  });
});
