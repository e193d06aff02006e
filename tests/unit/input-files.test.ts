import { execFileSync } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

import { openRegularFile } from "../../src/debuggers/dumpfile/index.js";
import { checkInputFile, MIN_DUMP_BYTES } from "../../src/debuggers/input-files.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const dir = tempDir("dumpdbg-input-files-");

describe("checkInputFile", () => {
  it("takes a regular file, through a symlink too", async () => {
    writeFileSync(path.join(dir, "core"), Buffer.alloc(4096));
    symlinkSync("core", path.join(dir, "latest"));
    const checked = await checkInputFile(path.join(dir, "latest"), { minBytes: MIN_DUMP_BYTES });
    expect(checked.ok && checked.stats.size).toBe(4096);
  });

  it("names what a path is when it cannot be a dump, without opening it", async () => {
    execFileSync("mkfifo", [path.join(dir, "pipe")]);
    writeFileSync(path.join(dir, "empty"), "");
    writeFileSync(path.join(dir, "short"), "MDMP");
    symlinkSync("nowhere", path.join(dir, "dangling"));
    const reasons = await Promise.all(["pipe", "empty", "short", "dangling", "missing"].map((name) => checkInputFile(path.join(dir, name), { minBytes: MIN_DUMP_BYTES })));
    expect(reasons.map((r) => !r.ok && r.reason)).toEqual(["is a FIFO (named pipe)", "is empty", "is 4 bytes, too small to be a crash dump", "does not exist", "does not exist"]);
    expect(await checkInputFile("/dev/zero")).toEqual({ ok: false, reason: "is a character device" });
    expect(await checkInputFile("/proc/self/status")).toEqual({ ok: false, reason: "is a file of the kernel's /proc filesystem" });
    expect(await checkInputFile(dir)).toEqual({ ok: false, reason: "is a directory" });
  });
});

describe("openRegularFile", () => {
  it("never blocks on a FIFO swapped in for a file: it is opened without waiting and refused", () => {
    const fifo = path.join(dir, "swapped");
    execFileSync("mkfifo", [fifo]);
    expect(() => openRegularFile(fifo)).toThrow(/swapped is a FIFO \(named pipe\)$/);
    expect(() => openRegularFile("/dev/zero")).toThrow(/is a character device$/);
  });
});
