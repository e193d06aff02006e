/** LLDB's Python bytecode folder: when a start may use it, and what a fill's printed list is taken for. */
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fillCommand, manifestOf, pythonCache, pythonCacheEnv, readManifest, writeManifest, type CompiledModule } from "../../src/debuggers/lldb/python-cache.js";

let home: string;
let env: NodeJS.ProcessEnv;
let folder: string;
let manifest: string;

/** A source file and its bytecode in the folder, as a fill would have left them. */
function compiled(name: string, text = "x = 1\n", sources = "python"): CompiledModule {
  const source = join(home, sources, `${name}.py`);
  mkdirSync(join(home, sources), { recursive: true });
  writeFileSync(source, text);
  const bytecode = join(folder, home, sources, `${name}.cpython-311.pyc`);
  mkdirSync(join(folder, home, sources), { recursive: true });
  writeFileSync(bytecode, "bytecode");
  const stats = statSync(source, { bigint: true });
  return { source, mtimeNs: stats.mtimeNs.toString(), size: Number(stats.size), bytecode };
}

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "dumpdbg-pycache-"));
  env = { XDG_CACHE_HOME: join(home, "cache") };
  const cache = pythonCache("lldb-vscode-16", env);
  expect(cache).not.toBeNull();
  ({ folder, manifest } = cache!);
});

afterEach(() => rmSync(home, { recursive: true, force: true }));

describe("pythonCacheEnv", () => {
  it("names the folder when every module of the manifest is as it was compiled", () => {
    writeManifest(manifest, [compiled("lldb"), compiled("enum")]);
    expect(pythonCacheEnv("lldb-vscode-16", env)).toEqual({ PYTHONPYCACHEPREFIX: folder });
  });

  it("keeps a manifest per lldb: another adapter's is not this one's", () => {
    writeManifest(manifest, [compiled("lldb")]);
    expect(pythonCacheEnv("lldb-dap", env)).toEqual({});
    expect(pythonCache("/opt/llvm/bin/lldb-vscode-16", env)!.manifest).not.toBe(manifest);
  });

  it("is not used without a manifest, or with an empty, malformed or oversized one", () => {
    expect(pythonCacheEnv("lldb-vscode-16", env)).toEqual({});
    writeManifest(manifest, []);
    expect(pythonCacheEnv("lldb-vscode-16", env)).toEqual({});
    writeFileSync(manifest, "{not json");
    expect(pythonCacheEnv("lldb-vscode-16", env)).toEqual({});
    writeFileSync(manifest, JSON.stringify([{ source: "/usr/lib/x.py", mtimeNs: 12, size: 1, bytecode: "/x.pyc" }]));
    expect(readManifest(manifest)).toBeNull();
    writeFileSync(manifest, JSON.stringify([compiled("lldb")]) + " ".repeat(1 << 20));
    expect(readManifest(manifest)).toBeNull();
    expect(pythonCacheEnv("lldb-vscode-16", env)).toEqual({});
  });

  it("is not used once a source changed: its size, or only its time", () => {
    const lldb = compiled("lldb");
    writeManifest(manifest, [lldb, compiled("enum")]);
    writeFileSync(lldb.source, "x = 22\n");
    expect(pythonCacheEnv("lldb-vscode-16", env)).toEqual({});

    const again = compiled("lldb");
    writeManifest(manifest, [again]);
    expect(pythonCacheEnv("lldb-vscode-16", env)).toEqual({ PYTHONPYCACHEPREFIX: folder });
    utimesSync(again.source, new Date(2020, 0, 1), new Date(2020, 0, 1));
    expect(pythonCacheEnv("lldb-vscode-16", env)).toEqual({});
  });

  it("is not used when a source or a bytecode file is gone: what cannot be checked is not taken as current", () => {
    const lldb = compiled("lldb");
    writeManifest(manifest, [lldb, compiled("enum")]);
    rmSync(lldb.bytecode);
    expect(pythonCacheEnv("lldb-vscode-16", env)).toEqual({});

    const again = compiled("lldb");
    writeManifest(manifest, [again]);
    rmSync(again.source);
    expect(pythonCacheEnv("lldb-vscode-16", env)).toEqual({});
  });

  it("checks the first module of each folder of sources: an upgrade of one package is seen", () => {
    const modules = [compiled("enum"), compiled("re"), compiled("__init__", "x = 1\n", "python/lldb"), compiled("embedded_interpreter", "x = 1\n", "python/lldb")];
    writeManifest(manifest, modules);
    expect(pythonCacheEnv("lldb-vscode-16", env)).toEqual({ PYTHONPYCACHEPREFIX: folder });
    // LLDB upgraded: its package's files are all rewritten.
    writeFileSync(modules[2]!.source, "x = 333\n");
    writeFileSync(modules[3]!.source, "x = 333\n");
    expect(pythonCacheEnv("lldb-vscode-16", env)).toEqual({});
  });

  it("is never used with the code cache turned off", () => {
    writeManifest(manifest, [compiled("lldb")]);
    expect(pythonCache("lldb-vscode-16", { ...env, DUMPDBG_CODE_CACHE: "off" })).toBeNull();
    expect(pythonCacheEnv("lldb-vscode-16", { ...env, DUMPDBG_CODE_CACHE: "off" })).toEqual({});
  });
});

describe("the fill", () => {
  it("is one lldb `script` line that compiles into the folder and prints its list", () => {
    const command = fillCommand(folder);
    expect(command).toMatch(/^script import sys, os, json, py_compile; /);
    expect(command).not.toContain("\n");
    expect(command).toContain(`sys.pycache_prefix = ${JSON.stringify(folder)}`);
    expect(command).toContain("PycInvalidationMode.TIMESTAMP");
    expect(command).toContain("sys.pycache_prefix = None");
  });

  it("takes the printed list as the manifest", () => {
    const row = [`/usr/lib/python3.11/enum.py`, "1697462050000000000", 81234, `${folder}/usr/lib/python3.11/enum.cpython-311.pyc`];
    const output = `some warning\ndumpdbg-python-cache ${JSON.stringify([row])}\n`;
    expect(manifestOf(output, folder)).toEqual([{ source: row[0], mtimeNs: row[1], size: row[2], bytecode: row[3] }]);
  });

  it("takes no manifest from a failed fill: no line, a traceback, an empty list, bytecode outside the folder, a malformed row", () => {
    expect(manifestOf("", folder)).toBeNull();
    expect(manifestOf('Traceback (most recent call last):\n  File "<string>", line 1\nNameError: name \'py_compile\' is not defined', folder)).toBeNull();
    expect(manifestOf("dumpdbg-python-cache []", folder)).toBeNull();
    expect(manifestOf(`dumpdbg-python-cache ${JSON.stringify([["/usr/lib/a.py", "1", 1, "/usr/lib/__pycache__/a.cpython-311.pyc"]])}`, folder)).toBeNull();
    expect(manifestOf(`dumpdbg-python-cache ${JSON.stringify([["/usr/lib/a.py", 1, 1, `${folder}/a.pyc`]])}`, folder)).toBeNull();
    expect(manifestOf(`dumpdbg-python-cache ${JSON.stringify(["/usr/lib/a.py"])}`, folder)).toBeNull();
    expect(manifestOf("dumpdbg-python-cache {", folder)).toBeNull();
  });

  it("writes the manifest whole, replacing the old one", () => {
    writeManifest(manifest, [compiled("lldb")]);
    writeManifest(manifest, [compiled("enum"), compiled("re")]);
    expect(readManifest(manifest)?.map((module) => module.source.split("/").pop())).toEqual(["enum.py", "re.py"]);
  });
});
