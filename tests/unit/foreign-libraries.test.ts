import { describe, expect, it } from "vitest";
import { foreignAt, foreignLibraries, foreignNote } from "../../src/analyzers/libraries.js";
import { libraryFunctionName } from "../../src/analyzers/triage/fault.js";
import type { Module } from "../../src/debuggers/model.js";
import type { SharedLibrary } from "../../src/debuggers/probe.js";

const module = (path: string, buildId: string | null, start: string, end: string): Module => ({ path, buildId, start, end, debugFile: null, codeId: null, symbolsLoaded: null });
const library = (path: string, from: string | null, symbolsRead = from !== null): SharedLibrary => ({ path, from, to: from, symbolsRead, missingDebugInfo: false });

const MODULES = [
  module("/srv/app/server", "aa", "0x555555554000", "0x555555559000"),
  module("/opt/rt/lib/libc.so.6", "c0ffee", "0x7ffff7d80000", "0x7ffff7f90000"),
  module("/opt/rt/lib/libz.so.1", "5eed", "0x7ffff7fa0000", "0x7ffff7fc0000"),
  module("/usr/lib/x86_64-linux-gnu/libm.so.6", "0a0a", "0x7ffff7c00000", "0x7ffff7c80000"),
  module("[vdso]", null, "0x7ffff7fc8000", "0x7ffff7fca000"),
];
const IDS: Record<string, string> = { "/opt/rt/lib/libz.so.1": "5eed", "/usr/lib/x86_64-linux-gnu/libm.so.6": "0b0b" };

describe("libraries of a core from another machine", () => {
  it("are missing (gdb lists them unloaded, LLDB not at all) or another build (by build id); the program and the vDSO are not checked", () => {
    const loaded = [library("/opt/rt/lib/libc.so.6", null), library("/usr/lib/x86_64-linux-gnu/libm.so.6", "0x7ffff7c01000")];
    const foreign = foreignLibraries(MODULES, loaded, "/srv/app/server", (path) => IDS[path] ?? null);
    expect(foreign.map((lib) => [lib.path, lib.status])).toEqual([
      ["/opt/rt/lib/libc.so.6", "missing"],
      ["/opt/rt/lib/libz.so.1", "missing"],
      ["/usr/lib/x86_64-linux-gnu/libm.so.6", "different"],
    ]);
    expect(foreign[2]).toMatchObject({ found: "/usr/lib/x86_64-linux-gnu/libm.so.6", coreId: "0a0a", foundId: "0b0b" });
    expect(foreignAt(foreign, 0x7ffff7d91234n)?.path).toBe("/opt/rt/lib/libc.so.6");
    expect(foreignAt(foreign, 0x555555555000n)).toBeNull();
  });

  it("do not include the program given from another path than the core names: its build id says it is the same file", () => {
    const loaded = MODULES.slice(1, 4).map((m) => library(m.path, m.start));
    const ids: Record<string, string | null> = { ...Object.fromEntries(MODULES.map((m) => [m.path, m.buildId])), "/home/me/build/server": "aa", "/home/me/old/server": "ab" };
    expect(foreignLibraries(MODULES, loaded, "/home/me/build/server", (path) => ids[path] ?? null)).toEqual([]);
    // Another build of it at that path is no copy of the program: it stays where the core names it, not here.
    expect(foreignLibraries(MODULES, loaded, "/home/me/old/server", (path) => ids[path] ?? null).map((lib) => lib.path)).toEqual(["/srv/app/server"]);
  });

  it("found where the debugger loaded them, by name, with the same build: nothing to say", () => {
    const loaded = MODULES.slice(1, 4).map((m) => library(`/sysroot${m.path}`, m.start));
    const ids = Object.fromEntries(MODULES.map((m) => [`/sysroot${m.path}`, m.buildId]));
    expect(foreignLibraries(MODULES, loaded, "/srv/app/server", (path) => ids[path] ?? null)).toEqual([]);
    expect(foreignNote([])).toBeNull();
  });

  it("a debugger that lists no library (a Go PIE, which has no list for ld.so to fill) leaves the core's own files here unflagged", () => {
    const ids = { "/opt/rt/lib/libc.so.6": "c0ffee", "/opt/rt/lib/libz.so.1": "0ther" };
    expect(foreignLibraries(MODULES.slice(1, 3), [], null, (path) => ids[path as keyof typeof ids] ?? null).map((lib) => [lib.path, lib.status])).toEqual([["/opt/rt/lib/libz.so.1", "missing"]]);
  });

  it("a library whose id cannot be read here is not called another build", () => {
    const loaded = [library("/usr/lib/x86_64-linux-gnu/libm.so.6", "0x7ffff7c01000")];
    expect(foreignLibraries(MODULES.slice(3, 4), loaded, null, () => null)).toEqual([]);
  });

  it("the note says which, what it costs and what to do", () => {
    const note = foreignNote(foreignLibraries(MODULES.slice(1, 2), [], null, () => null)) ?? "";
    expect(note).toContain("/opt/rt/lib/libc.so.6 (build id c0ffee…) is not on this machine");
    expect(note).toMatch(/--solib-search-path DIR/);
  });
});

describe("glibc's names for the functions a program called", () => {
  it.each([
    ["__strlen_evex", "strlen"],
    ["__memmove_avx_unaligned_erms", "memmove"],
    ["__GI___libc_free", "free"],
    ["__strcmp_sse2_unaligned", "strcmp"],
    ["strlen", "strlen"],
    ["__memcpy_chk", "memcpy_chk"],
  ])("%s is %s", (name, plain) => expect(libraryFunctionName(name)).toBe(plain));
});
