/**
 * The folder of uncompressed debug files (debuggers/gdb/debug-files.ts, debug-files-keep.ts): what
 * gdb's list says, which files are worth a copy, and when gdb is given the folder: only with a
 * manifest of ours whose every source is as it was copied, and whose copy is there.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { debugFileCache, debugFileDirectory, readManifest, type DebugFileManifest } from "../../src/debuggers/gdb/debug-files.js";
import { DumpFile, elfSections } from "../../src/debuggers/dumpfile/index.js";
import { forgetAbandonedCopies, keepDebugFiles, LIST_DEBUG_FILES, listedDebugFiles, toCopy } from "../../src/debuggers/gdb/debug-files-keep.js";

const ID = "93ac61ec5a8eb1396f9fbd350e3169a558528a40";

/** What `LIST_DEBUG_FILES` prints for these directories and files. */
function listing(dirs: string, files: string[]): string {
  return [`dumpdbg-debug-dirs ${dirs}`, ...files.map((file) => `dumpdbg-debug-file ${file}`)].join("\n");
}

describe("what gdb lists of the debug files it read", () => {
  it("is one Python line printing the directories and the separate debug objfiles", () => {
    expect(LIST_DEBUG_FILES).toMatch(/^python print\(/);
    expect(LIST_DEBUG_FILES).not.toContain("\n");
    expect(LIST_DEBUG_FILES).toContain('gdb.parameter("debug-file-directory")');
    expect(LIST_DEBUG_FILES).toContain("o.owner is not None");
  });

  it("runs in gdb and reads back as the directories gdb searches", () => {
    const output = execFileSync("gdb", ["-nx", "-q", "-batch", "-iex", "set debug-file-directory /srv/a:/srv/b", "-ex", LIST_DEBUG_FILES], { encoding: "utf8" });
    expect(listedDebugFiles(output, "/c/gdb-debug")).toEqual({ dirs: "/srv/a:/srv/b", files: [] });
    const ours = execFileSync("gdb", ["-nx", "-q", "-batch", "-iex", "set debug-file-directory /c/gdb-debug:/srv/b", "-ex", LIST_DEBUG_FILES], { encoding: "utf8" });
    expect(listedDebugFiles(ours, "/c/gdb-debug")).toEqual({ dirs: "/srv/b", files: [] });
  });

  it("is read with our folder taken off the front of the directories", () => {
    const output = `noise\n${listing("/c/gdb-debug:/usr/lib/debug", [`/c/gdb-debug/.build-id/93/${ID.slice(2)}.debug`])}\n`;
    expect(listedDebugFiles(output, "/c/gdb-debug")).toEqual({ dirs: "/usr/lib/debug", files: [`/c/gdb-debug/.build-id/93/${ID.slice(2)}.debug`] });
    expect(listedDebugFiles(listing("/usr/lib/debug", []), "/c/gdb-debug")).toEqual({ dirs: "/usr/lib/debug", files: [] });
  });

  it("is nothing when its line is missing, empty, too long, or holds a control character", () => {
    for (const output of ["", "Python scripting is not supported in this copy of GDB.", "dumpdbg-debug-dirs ", `${listing("/d", [])}${" ".repeat(1 << 20)}`, listing("/d\tshell id", [])]) {
      expect(listedDebugFiles(output, "/c")).toBeNull();
    }
  });
});

describe("the files worth a copy", () => {
  const file = `/usr/lib/debug/.build-id/93/${ID.slice(2)}.debug`;

  it("are those found by build id under a directory gdb searches", () => {
    expect(toCopy([file], "/usr/lib/debug", null)).toEqual([{ buildId: ID, source: file }]);
    expect(toCopy([file, file], "/opt/debug:/usr/lib/debug", null)).toHaveLength(1);
  });

  it("are not the program's own debug file beside it, one under another directory, nor our own copies", () => {
    expect(toCopy(["/srv/app/.debug/app.debug", "/elsewhere/.build-id/93/abcdef12.debug", `/c/gdb-debug/.build-id/93/${ID.slice(2)}.debug`], "/usr/lib/debug", null)).toEqual([]);
    expect(toCopy(["/usr/lib/debug/.build-id/93/NOTHEX.debug", "/usr/lib/debug/.build-id/9/3ac61ec5.debug"], "/usr/lib/debug", null)).toEqual([]);
  });
});

describe("when gdb is given the folder", () => {
  let root: string;
  let source: string;
  const env = () => ({ XDG_CACHE_HOME: root });

  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-debug-files-unit-"));
    source = path.join(root, "debug", ".build-id", "93", `${ID.slice(2)}.debug`);
    mkdirSync(path.dirname(source), { recursive: true });
    writeFileSync(source, "compressed");
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** A manifest of `source` as it is now, and its copy in the folder. */
  function copied(dirs = path.join(root, "debug"), asked?: string): { folder: string; manifest: string } {
    const cache = debugFileCache(asked, env())!;
    const copy = path.join(cache.folder, ".build-id", "93", `${ID.slice(2)}.debug`);
    mkdirSync(path.dirname(copy), { recursive: true });
    writeFileSync(copy, "inflated");
    const stats = statSync(source, { bigint: true });
    const manifest: DebugFileManifest = { dirs, copies: [{ buildId: ID, source, mtimeNs: stats.mtimeNs.toString(), size: Number(stats.size) }] };
    writeFileSync(cache.manifest, JSON.stringify(manifest));
    return cache;
  }

  it("is when every copy's source is as it was copied: the folder, then the directories they came from", () => {
    const { folder } = copied();
    expect(debugFileDirectory(undefined, env())).toBe(`${folder}:${path.join(root, "debug")}`);
  });

  it("keeps one manifest per list of directories asked for", () => {
    const asked = path.join(root, "debug");
    const { folder } = copied(asked, asked);
    expect(debugFileDirectory(asked, env())).toBe(`${folder}:${asked}`);
    expect(debugFileDirectory(undefined, env())).toBeNull();
    expect(debugFileDirectory("/another/tree", env())).toBeNull();
  });

  it("is not when a source changed, went, or its copy went", () => {
    copied();
    writeFileSync(source, "compressed, rebuilt");
    expect(debugFileDirectory(undefined, env())).toBeNull();
    const cache = copied();
    rmSync(source);
    expect(debugFileDirectory(undefined, env())).toBeNull();
    writeFileSync(source, "compressed");
    copied();
    rmSync(path.join(cache.folder, ".build-id"), { recursive: true });
    expect(debugFileDirectory(undefined, env())).toBeNull();
  });

  it("is not without a manifest of ours, with one too large, or with caches turned off", () => {
    expect(debugFileDirectory(undefined, env())).toBeNull();
    const { manifest } = copied();
    expect(debugFileDirectory(undefined, { ...env(), DUMPDBG_CODE_CACHE: "off" })).toBeNull();
    for (const text of ["{", '{"dirs":"/d","copies":[{"buildId":"../../etc","source":"/x","mtimeNs":"1","size":1}]}', `{"dirs":"/d","copies":[],"pad":"${"x".repeat(1 << 20)}"}`, `{"dirs":"/d\\nshell id","copies":[]}`]) {
      writeFileSync(manifest, text);
      expect(readManifest(manifest)).toBeNull();
      expect(debugFileDirectory(undefined, env())).toBeNull();
    }
  });
});

describe("keeping a copy", () => {
  // libc's debug file as Debian ships it (libc6-dbg): compressed sections, found by build id.
  const libc = existsSync("/usr/lib/debug/.build-id") ? findCompressedDebugFile() : null;
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-debug-keep-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it.runIf(libc !== null)("keeps nothing when the copy does not carry the source's build id, and leaves no file behind", async () => {
    const cache = debugFileCache(undefined, { XDG_CACHE_HOME: root })!;
    // An objcopy that writes something else than the inflated file.
    const objcopy = path.join(root, "objcopy");
    writeFileSync(objcopy, '#!/bin/sh\nfor last; do :; done\necho not-an-elf > "$last"\n');
    chmodSync(objcopy, 0o755);
    await keepDebugFiles(cache, undefined, listing("/usr/lib/debug", [libc!]), objcopy).catch(() => undefined);
    expect(existsSync(cache.manifest)).toBe(false);
    expect(readdirSync(cache.folder, { recursive: true }).filter((name) => String(name).endsWith(".tmp") || String(name).endsWith(".debug"))).toEqual([]);
  });

  it.runIf(libc !== null)("copies again a copy that went while its source stayed, and gdb is given the folder again", async () => {
    const env = { XDG_CACHE_HOME: root };
    const cache = debugFileCache(undefined, env)!;
    const listed = listing("/usr/lib/debug", [libc!]);
    await keepDebugFiles(cache, undefined, listed);
    expect(debugFileDirectory(undefined, env)).toBe(`${cache.folder}:/usr/lib/debug`);
    const copy = path.join(cache.folder, ".build-id", path.basename(path.dirname(libc!)), path.basename(libc!));
    expect(existsSync(copy)).toBe(true);
    // Removed (as a list of other directories may remove a copy of the same build): not given to gdb, then made again.
    rmSync(copy);
    expect(debugFileDirectory(undefined, env)).toBeNull();
    await keepDebugFiles(cache, undefined, listed);
    expect(existsSync(copy)).toBe(true);
    expect(debugFileDirectory(undefined, env)).toBe(`${cache.folder}:/usr/lib/debug`);
  });

  it("keeps nothing when gdb names other directories than the session asked for", async () => {
    const cache = debugFileCache("/srv/debug", { XDG_CACHE_HOME: root })!;
    await keepDebugFiles(cache, "/srv/debug", listing("/usr/lib/debug", ["/usr/lib/debug/.build-id/93/ac61ec5a.debug"]), "/bin/false");
    expect(existsSync(cache.manifest)).toBe(false);
  });
});

describe("half-written copies left behind", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-debug-aside-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("are removed when the dumpdbg that wrote them is gone or they are old; one being written now stays", () => {
    const folder = path.join(root, ".build-id", "93");
    mkdirSync(folder, { recursive: true });
    const target = path.join(folder, `${ID.slice(2)}.debug`);
    // A process that has ended: its pid names a copy nobody will finish.
    const gone = spawnSync("true").pid!;
    const aside = (pid: number, tag: string) => `${target}.${pid}.${tag}.tmp`;
    const files = {
      killed: aside(gone, "0badc0de"),
      writing: aside(process.pid, "1234abcd"),
      stale: aside(process.pid, "deadbeef"),
      otherBuild: path.join(folder, `ac61ec5a.debug.${gone}.0badc0de.tmp`),
      notOurs: `${target}.backup`,
      copy: target,
    };
    for (const file of Object.values(files)) writeFileSync(file, "half an ELF");
    // Written by a live process (its pid reused, or a worker hung) an hour ago: abandoned all the same.
    const hourAgo = new Date(Date.now() - 60 * 60_000);
    utimesSync(files.stale, hourAgo, hourAgo);
    forgetAbandonedCopies(target);
    expect(readdirSync(folder).sort()).toEqual([path.basename(files.otherBuild), path.basename(files.copy), path.basename(files.notOurs), path.basename(files.writing)].sort());
  });

  it("is nothing to do in a folder that is not there yet", () => {
    expect(() => forgetAbandonedCopies(path.join(root, ".build-id", "ff", "00.debug"))).not.toThrow();
  });
});

/** A debug file under /usr/lib/debug/.build-id with compressed debug sections (libc6-dbg's are), or null. */
function findCompressedDebugFile(): string | null {
  for (const entry of readdirSync("/usr/lib/debug/.build-id")) {
    if (!/^[0-9a-f]{2}$/.test(entry)) continue;
    const folder = path.join("/usr/lib/debug/.build-id", entry);
    for (const name of readdirSync(folder).filter((file) => /^[0-9a-f]+\.debug$/.test(file))) {
      const elf = DumpFile.open(path.join(folder, name));
      try {
        if (elfSections(elf).some((section) => section.name.startsWith(".debug_") && (section.flags & 0x800n) !== 0n)) return path.join(folder, name);
      } finally {
        elf.close();
      }
    }
  }
  return null;
}
