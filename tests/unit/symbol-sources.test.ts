/**
 * Where symbols are looked for, from the flags and environment a user sets
 * (src/debuggers/symbols/sources.ts), the paths stores file modules under
 * (src/debuggers/symbols/layouts.ts), and the one-line summary (src/debuggers/symbols/summary.ts).
 */
import { describe, expect, it } from "vitest";
import { pdbId, peCodeId } from "../../src/debuggers/dumpfile/pe.js";
import { storePath, unsafeReason } from "../../src/debuggers/symbols/layouts.js";
import type { SymbolResult } from "../../src/debuggers/symbols/server.js";
import { symbolSources, type SymbolSettings } from "../../src/debuggers/symbols/sources.js";
import { symbolsSummary } from "../../src/debuggers/symbols/summary.js";

function settings(over: Partial<SymbolSettings> = {}, env: SymbolSettings["env"] = {}): SymbolSettings {
  return { symbols: [], env, home: "/home/ada", ...over };
}

describe("symbolSources", () => {
  it("keeps --symbols entries in the order given: folders as folders, URLs as servers of any layout", () => {
    const { sources } = symbolSources(settings({ symbols: ["/syms", "https://symbols.example.com/try/", "./more"] }));
    expect(sources).toEqual([
      { kind: "folder", path: "/syms", origin: "--symbols" },
      { kind: "server", url: "https://symbols.example.com/try", protocol: "any", origin: "--symbols" },
      { kind: "folder", path: "./more", origin: "--symbols" },
    ]);
  });

  it("reads _NT_SYMBOL_PATH: srv*CACHE*URL gives the downstream store as a folder before the server, SRV* in any case, plain folders, cache*", () => {
    const env = { _NT_SYMBOL_PATH: "srv*C:\\Symbols*https://msdl.microsoft.com/download/symbols; SRV*https://symbols.mozilla.org/ ;D:\\build\\pdbs;cache*/var/symcache;srv**http://10.0.0.5/syms" };
    expect(symbolSources(settings({}, env)).sources).toEqual([
      { kind: "folder", path: "C:\\Symbols", origin: "_NT_SYMBOL_PATH" },
      { kind: "server", url: "https://msdl.microsoft.com/download/symbols", protocol: "microsoft", origin: "_NT_SYMBOL_PATH" },
      { kind: "server", url: "https://symbols.mozilla.org", protocol: "microsoft", origin: "_NT_SYMBOL_PATH" },
      { kind: "folder", path: "D:\\build\\pdbs", origin: "_NT_SYMBOL_PATH" },
      { kind: "folder", path: "/var/symcache", origin: "_NT_SYMBOL_PATH" },
      { kind: "server", url: "http://10.0.0.5/syms", protocol: "microsoft", origin: "_NT_SYMBOL_PATH" },
    ]);
  });

  it("reads symsrv*symsrv.dll*DIR*URL, skipping the DLL's name", () => {
    const env = { _NT_SYMBOL_PATH: "symsrv*symsrv.dll*/tmp/down*https://msdl.microsoft.com/download/symbols" };
    expect(symbolSources(settings({}, env)).sources).toEqual([
      { kind: "folder", path: "/tmp/down", origin: "_NT_SYMBOL_PATH" },
      { kind: "server", url: "https://msdl.microsoft.com/download/symbols", protocol: "microsoft", origin: "_NT_SYMBOL_PATH" },
    ]);
  });

  it("says which _NT_SYMBOL_PATH elements it cannot read, and skips them", () => {
    const result = symbolSources(settings({}, { _NT_SYMBOL_PATH: "weird*thing;/ok" }));
    expect(result.sources).toEqual([{ kind: "folder", path: "/ok", origin: "_NT_SYMBOL_PATH" }]);
    expect(result.notes).toEqual(["_NT_SYMBOL_PATH element weird*thing is not a form dumpdbg reads (srv*, symsrv*, cache* or a folder)"]);
  });

  it("reads DEBUGINFOD_URLS as space-separated debuginfod servers, after --symbols and _NT_SYMBOL_PATH", () => {
    const result = symbolSources(settings({ symbols: ["/syms"] }, { _NT_SYMBOL_PATH: "srv*https://ms.example", DEBUGINFOD_URLS: "  https://debuginfod.debian.net  http://127.0.0.1:8002/\tftp://nope " }));
    expect(result.sources.map((s) => (s.kind === "server" ? `${s.protocol} ${s.url}` : `folder ${s.path}`))).toEqual([
      "folder /syms",
      "microsoft https://ms.example",
      "debuginfod https://debuginfod.debian.net",
      "debuginfod http://127.0.0.1:8002",
    ]);
    expect(result.notes).toEqual(["DEBUGINFOD_URLS entry ftp://nope is not an http(s) URL"]);
  });

  it("asks a store named twice once, where it was first named", () => {
    const { sources } = symbolSources(settings({ symbols: ["/syms", "/syms"] }, { _NT_SYMBOL_PATH: "/syms", DEBUGINFOD_URLS: "http://a/ http://a" }));
    expect(sources).toEqual([
      { kind: "folder", path: "/syms", origin: "--symbols" },
      { kind: "server", url: "http://a", protocol: "debuginfod", origin: "DEBUGINFOD_URLS" },
    ]);
  });

  it("names nothing to fetch from when the user named nothing", () => {
    expect(symbolSources(settings()).sources).toEqual([]);
  });

  it("caches under --symbols-cache, else $XDG_CACHE_HOME/dumpdbg/symbols, else ~/.cache/dumpdbg/symbols", () => {
    expect(symbolSources(settings({ cacheDir: "/big/disk" }, { XDG_CACHE_HOME: "/xdg" })).cache).toBe("/big/disk");
    expect(symbolSources(settings({}, { XDG_CACHE_HOME: "/xdg" })).cache).toBe("/xdg/dumpdbg/symbols");
    expect(symbolSources(settings()).cache).toBe("/home/ada/.cache/dumpdbg/symbols");
    // The XDG spec: a relative value is invalid and ignored.
    expect(symbolSources(settings({}, { XDG_CACHE_HOME: "rel" })).cache).toBe("/home/ada/.cache/dumpdbg/symbols");
  });
});

describe("store layouts", () => {
  it("indexes a PDB by GUID (32 upper hex) and age (hex, unpadded), an executable by timestamp (8 upper hex) and image size (hex)", () => {
    // GUID {3f2504e0-4f89-11d3-9a0c-0305e82c3301} as a CodeView record holds it: Data1..3 little-endian, Data4 as it is.
    const guid = Buffer.from("e004253f894fd3119a0c0305e82c3301", "hex");
    expect(pdbId(guid, 26)).toBe("3F2504E04F8911D39A0C0305E82C33011A");
    expect(peCodeId(0x5b6dbd7, 0x196000)).toBe("05B6DBD7196000");
    expect(storePath({ kind: "pdb", name: "kernel32.pdb", id: "3F2504E04F8911D39A0C0305E82C33011" })).toEqual(["kernel32.pdb", "3F2504E04F8911D39A0C0305E82C33011", "kernel32.pdb"]);
  });

  it("files a Breakpad .sym under its debug file's name, without .pdb in the .sym's name", () => {
    expect(storePath({ kind: "sym", module: "crash.pdb", id: "ABC0" })).toEqual(["crash.pdb", "ABC0", "crash.sym"]);
    expect(storePath({ kind: "sym", module: "libfoo.so", id: "ABC0" })).toEqual(["libfoo.so", "ABC0", "libfoo.so.sym"]);
  });

  it("files debuginfod's files under the build id in lower case", () => {
    expect(storePath({ kind: "debuginfo", buildId: "FD2BB1BA" })).toEqual(["buildid", "fd2bb1ba", "debuginfo"]);
  });

  it("refuses a name from a dump that would leave the store", () => {
    expect(unsafeReason({ kind: "pdb", name: "../../etc/passwd", id: "AB" })).toMatch(/not a plain file name/);
    expect(unsafeReason({ kind: "sym", module: "..", id: "AB" })).toMatch(/not a plain file name/);
    expect(unsafeReason({ kind: "pdb", name: "ok.pdb", id: "../AB" })).toMatch(/not hex/);
    expect(unsafeReason({ kind: "debuginfo", buildId: "zz" })).toMatch(/not hex/);
    expect(unsafeReason({ kind: "pe", name: "C:\\app.exe", id: "AB" })).toMatch(/not a plain file name/);
  });
});

describe("symbolsSummary", () => {
  const file = { kind: "pdb", name: "app.pdb", id: "A1" } as const;
  it("counts modules by where they came from and names the missing ones with what the servers said", () => {
    const results: SymbolResult[] = [
      { module: "a.pdb", outcome: { status: "fetched", path: "/c/a", from: "https://s1", file, bytes: 1, ms: 1 } },
      { module: "b.pdb", outcome: { status: "fetched", path: "/c/b", from: "https://s1", file, bytes: 1, ms: 1 } },
      { module: "c.pdb", outcome: { status: "fetched", path: "/c/c", from: "https://s2", file, bytes: 1, ms: 1 } },
      { module: "d.pdb", outcome: { status: "found", path: "/c/d", from: "/c", file } },
      { module: "kernel32.pdb", outcome: { status: "missing", tried: [{ url: "https://s1/k", outcome: "404" }, { url: "https://s2/k", outcome: "404" }] } },
      { module: "ntdll.pdb", outcome: { status: "missing", tried: [{ url: "https://s1/n", outcome: "timeout" }, { url: "https://s2/n", outcome: "404" }] } },
      { module: "old.sym", outcome: { status: "refused", reason: "its MODULE id is X, not Y", tried: [] } },
    ];
    expect(symbolsSummary(results)).toBe(
      "symbols: 2 modules from https://s1, 1 from https://s2, 1 already here, 2 missing: kernel32.pdb (404), ntdll.pdb (timeout, 404), 1 refused, another build's file: old.sym",
    );
  });

  it("says no server was asked when none was, and nothing at all for no modules", () => {
    expect(symbolsSummary([{ module: "libc.so.6", outcome: { status: "missing", tried: [] } }])).toBe("symbols: 1 module missing: libc.so.6 (no server asked)");
    expect(symbolsSummary([])).toBeNull();
    expect(symbolsSummary([{ module: "evil\x1b[2J.pdb", outcome: { status: "missing", tried: [] } }])).toBe("symbols: 1 module missing: evil?[2J.pdb (no server asked)");
  });
});
