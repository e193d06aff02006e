import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

import { BACKENDS, canRun, chooseBackend, type ChoiceInput } from "../../src/debuggers/backends.js";
import { binaryOf, isNamed } from "../../src/debuggers/binaries.js";
import { architectureSupport } from "../../src/debuggers/architectures.js";
import type { Backend } from "../../src/debuggers/session.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const installed = (...names: Backend[]) => (backend: Backend) => names.includes(backend);

function choose(input: Partial<ChoiceInput>): ReturnType<typeof chooseBackend> {
  return chooseBackend({ format: "elf-core", requested: "auto", host: "linux", installed: installed("gdb", "lldb"), ...input });
}

describe("chooseBackend", () => {
  it("reads an ELF core with gdb when it is installed", () => {
    expect(choose({})).toEqual({ backend: "gdb" });
  });

  it("still chooses gdb for an ELF core when nothing is installed, so its start names the missing binary", () => {
    expect(choose({ installed: installed() })).toEqual({ backend: "gdb" });
  });

  it("falls back from a missing gdb to lldb for an ELF core, saying which and why", () => {
    expect(choose({ installed: installed("lldb") })).toEqual({ backend: "lldb", fallback: "gdb is not installed; reading an ELF core with lldb" });
  });

  it("refuses a gdb the user named that cannot run, rather than switching to lldb", () => {
    const choice = choose({ installed: installed("lldb"), named: (b) => b === "gdb", binary: () => "/no/such/gdb" });
    expect(choice).toEqual({ error: "the gdb you named (/no/such/gdb) cannot be run: no such file, or not executable" });
  });

  it("takes a named gdb that runs, with no fallback line", () => {
    expect(choose({ named: (b) => b === "gdb" })).toEqual({ backend: "gdb" });
  });

  it("honours an explicit gdb", () => {
    expect(choose({ requested: "gdb", installed: installed() })).toEqual({ backend: "gdb" });
  });

  it("refuses a backend this build does not have, naming it", () => {
    // Every backend is built now: each is taken out for the moment, so the refusal is still seen.
    for (const backend of ["lldb", "cdb"] as const) {
      const definition = BACKENDS[backend];
      const { start } = definition;
      delete definition.start;
      try {
        const format = backend === "cdb" ? "minidump" : "elf-core";
        const choice = choose({ requested: backend, format, host: "win32" });
        expect(choice).toEqual({ error: `the ${backend} backend is not in this version of dumpdbg yet` });
      } finally {
        Object.assign(definition, { start });
      }
    }
  });

  it("refuses gdb for a minidump and names who can read one", () => {
    const choice = choose({ requested: "gdb", format: "minidump" });
    expect("error" in choice && choice.error).toMatch(/^gdb cannot read a minidump/);
  });

  it("refuses cdb for an ELF core", () => {
    const choice = choose({ requested: "cdb", format: "elf-core", host: "win32" });
    expect("error" in choice && choice.error).toMatch(/^cdb cannot read an ELF core; use --debugger gdb/);
  });

  it("does not offer cdb off Windows for a minidump", () => {
    const choice = choose({ format: "minidump", host: "linux", installed: installed("cdb", "lldb") });
    if (BACKENDS.lldb.start) expect(choice).toEqual({ backend: "lldb" });
    else expect("error" in choice && choice.error).toBe("reading a minidump needs lldb, and this version of dumpdbg has no lldb backend yet");
  });

  it("refuses cdb off Windows unless its binary is named, and says how to name one", () => {
    const choice = choose({ requested: "cdb", format: "minidump", host: "linux", installed: installed("cdb", "lldb") });
    expect("error" in choice && choice.error).toBe("cdb runs only on win32; name a binary that speaks its protocol with --cdb to use it here");
  });

  it("honours an explicit cdb on any host when the user named its binary (a stand-in, a wrapper)", () => {
    const named = (backend: Backend) => backend === "cdb";
    expect(choose({ requested: "cdb", format: "minidump", host: "linux", named })).toEqual({ backend: "cdb" });
    // auto never picks it off Windows, named or not.
    expect(choose({ format: "minidump", host: "linux", installed: installed("cdb", "lldb"), named })).toEqual({ backend: "lldb" });
  });

  it("says whether a binary was named by its flag or its environment variable", () => {
    expect(isNamed("cdb", { cdb: "/opt/cdb" }, {})).toBe(true);
    expect(isNamed("cdb", {}, { DUMPDBG_CDB: "C:\\Debuggers\\cdb.exe" })).toBe(true);
    expect(isNamed("cdb", { gdb: "/opt/gdb" }, {})).toBe(false);
  });

  it("prefers cdb for a minidump on Windows when it is built and installed", () => {
    const choice = choose({ format: "minidump", host: "win32", installed: installed("cdb", "lldb") });
    const expected = BACKENDS.cdb.start ? "cdb" : BACKENDS.lldb.start ? "lldb" : null;
    if (expected) expect(choice).toEqual({ backend: expected });
    else expect("error" in choice && choice.error).toMatch(/needs cdb or lldb/);
  });
});

describe("binaryOf", () => {
  it("takes the flag, then the environment variable, then the usual name", () => {
    expect(binaryOf("gdb", { gdb: "/opt/gdb" }, { DUMPDBG_GDB: "/env/gdb" })).toBe("/opt/gdb");
    expect(binaryOf("gdb", {}, { DUMPDBG_GDB: "/env/gdb" })).toBe("/env/gdb");
    expect(binaryOf("lldb", { gdb: "/opt/gdb" }, { DUMPDBG_LLDB: "/env/lldb-dap" })).toBe("/env/lldb-dap");
    expect(binaryOf("cdb", {}, {})).toBe("cdb");
  });
});

describe("canRun", () => {
  const dir = tempDir("dumpdbg-backends-");
  const tool = join(dir, "fakedbg");
  writeFileSync(tool, "#!/bin/sh\n");
  chmodSync(tool, 0o755);
  const plain = join(dir, "plain");
  writeFileSync(plain, "");

  it("finds an executable path, or a name on PATH, and nothing else", () => {
    expect(canRun(tool)).toBe(true);
    expect(canRun(plain)).toBe(false);
    expect(canRun(join(dir, "missing"))).toBe(false);
    expect(canRun("fakedbg", { PATH: `/nonexistent:${dir}` })).toBe(true);
    expect(canRun("fakedbg", { PATH: "/nonexistent" })).toBe(false);
  });
});

describe("chooseBackend for a Go program's core", () => {
  it("takes Delve when it is installed", () => {
    expect(choose({ goProgram: true, installed: installed("gdb", "lldb", "dlv") })).toEqual({ backend: "dlv" });
  });

  it("reads it with gdb, saying so, when Delve is not installed", () => {
    expect(choose({ goProgram: true })).toEqual({ backend: "gdb", fallback: "dlv is not installed; reading a Go program's core with gdb" });
  });

  it("still names gdb when nothing is installed", () => {
    expect(choose({ goProgram: true, installed: installed() })).toEqual({ backend: "gdb" });
  });

  it("refuses a dlv the user named that cannot run", () => {
    const choice = choose({ goProgram: true, named: (b) => b === "dlv", binary: () => "/no/such/dlv" });
    expect(choice).toEqual({ error: "the dlv you named (/no/such/dlv) cannot be run: no such file, or not executable" });
  });

  it("keeps gdb for any other core, and honours an explicit dlv on one", () => {
    expect(choose({ installed: installed("gdb", "dlv") })).toEqual({ backend: "gdb" });
    expect(choose({ requested: "dlv", installed: installed() })).toEqual({ backend: "dlv" });
    expect(choose({ requested: "dlv", format: "minidump" })).toMatchObject({ error: expect.stringMatching(/^dlv cannot read a minidump/) });
  });
});

describe("chooseBackend for a core of another processor", () => {
  const arm64 = (runs: string[], options: { gdbReads?: boolean; named?: Backend[] } = {}) => ({
    name: "arm64 (AArch64)",
    support: architectureSupport("arm64", {
      host: "x86_64",
      named: (backend) => options.named?.includes(backend) ?? false,
      canRun: (binary) => runs.includes(binary),
      gdbReads: () => options.gdbReads ?? false,
    }),
  });

  it("reads an arm64 core with gdb-multiarch where it is installed", () => {
    expect(choose({ architecture: arm64(["gdb", "gdb-multiarch"]) })).toEqual({ backend: "gdb", binary: "gdb-multiarch" });
  });

  it("takes the plain gdb when it was built for the dump's processor", () => {
    expect(choose({ architecture: arm64(["gdb"], { gdbReads: true }) })).toEqual({ backend: "gdb", binary: "gdb" });
  });

  it("falls back to LLDB from a gdb that reads only its host's registers, saying why", () => {
    expect(choose({ architecture: arm64(["gdb"]) })).toEqual({ backend: "lldb", fallback: "gdb as installed here cannot read arm64 (AArch64); reading an ELF core with lldb" });
  });

  it("says in one line when no installed debugger reads it, instead of reading nothing", () => {
    const choice = choose({ installed: installed("gdb"), architecture: arm64(["gdb"]) });
    expect(choice).toEqual({ error: "gdb as installed here cannot read arm64 (AArch64): install gdb-multiarch, or name a debugger built for it with --gdb" });
  });

  it("refuses an explicit gdb that cannot read it, naming the debugger that can", () => {
    const choice = choose({ requested: "gdb", architecture: arm64(["gdb"]) });
    expect(choice).toEqual({ error: "gdb as installed here cannot read arm64 (AArch64): use --debugger lldb, or install gdb-multiarch, or name a debugger built for it with --gdb" });
  });

  it("takes a gdb the user named at their word", () => {
    expect(choose({ named: (b) => b === "gdb", architecture: arm64([], { named: ["gdb"] }) })).toEqual({ backend: "gdb" });
  });

  it("leaves the host's own architecture to the usual choice", () => {
    const support = architectureSupport("x86_64", { host: "x86_64", named: () => false, canRun: () => false });
    expect(choose({ architecture: { name: "x86-64", support } })).toEqual({ backend: "gdb" });
  });
});
