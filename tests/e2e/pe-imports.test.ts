/**
 * A Windows program's import table, read by `readPeImports` (which names the function a minidump's
 * program called through a slot), against what binutils' objdump reads from the same files: Wine's
 * own DLLs and programs as Debian ships them (PE32+, imports by name and by ordinal), and small
 * programs mingw builds here for 64 and 32 bits.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { readPeImports, type PeImport } from "../../src/debuggers/dumpfile/pe.js";
import { WINE_DLLS } from "../helpers/windows.js";

const run = promisify(execFile);
const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-pe-imports-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The imports `objdump -p` lists: each DLL's block gives its import address table's RVA (First
 * Thunk), then one line per slot, `vma hint name` or `value ordinal <none>`.
 */
async function objdumpImports(objdump: string, file: string): Promise<PeImport[]> {
  const { stdout } = await run(objdump, ["-p", file], { maxBuffer: 64 * 1024 * 1024 });
  const table = stdout.slice(stdout.indexOf("The Import Tables"));
  const wordSize = /pei-x86-64/.test(stdout) ? 8 : 4;
  const imports: PeImport[] = [];
  let firstThunk = 0;
  let dll = "";
  let index = 0;
  for (const line of table.split("\n")) {
    const header = /^ ([0-9a-f]{8})\t([0-9a-f]{8}) [0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8} ([0-9a-f]{8})$/.exec(line);
    if (header) {
      firstThunk = parseInt(header[3]!, 16);
      continue;
    }
    const name = /^\tDLL Name: (.*)$/.exec(line);
    if (name) {
      dll = name[1]!;
      index = 0;
      continue;
    }
    const entry = /^\t([0-9a-f]+)\t\s*([0-9a-f]+)\s+(\S+)/.exec(line);
    if (entry && dll !== "") {
      imports.push({ slot: firstThunk + index * wordSize, dll, name: entry[3] === "<none>" ? `#${parseInt(entry[2]!, 16)}` : entry[3]! });
      index++;
    }
    if (/^The Data Directory|^There is an export table|^PE File Base Relocations/.test(line)) break;
  }
  return imports;
}

describe("readPeImports", () => {
  it("names every import objdump names in Wine's DLLs and programs, by name and by ordinal", async () => {
    // Every seventh, and the ones that import by ordinal.
    const files = readdirSync(WINE_DLLS)
      .filter((name) => /\.(dll|exe)$/.test(name))
      .sort()
      .filter((name, i) => i % 7 === 0 || ["comdlg32.dll", "shell32.dll", "notepad.exe", "kernelbase.dll"].includes(name));
    expect(files.length).toBeGreaterThan(50);
    let ordinals = 0;
    for (const name of files) {
      const file = path.join(WINE_DLLS, name);
      const expected = await objdumpImports("x86_64-w64-mingw32-objdump", file);
      expect(readPeImports(file), name).toEqual(expected);
      ordinals += expected.filter((entry) => entry.name.startsWith("#")).length;
    }
    expect(ordinals).toBeGreaterThan(0);
  });

  it("reads the imports of a program mingw built, PE32+ and PE32", async () => {
    const source = path.join(dir, "imports.c");
    writeFileSync(
      source,
      `#include <windows.h>
#include <stdio.h>
#include <winsock2.h>

int main(int argc, char **argv) {
  WSADATA wsa;
  if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) return 1;
  HANDLE file = CreateFileA(argc > 1 ? argv[1] : "nul", GENERIC_READ, 0, NULL, OPEN_EXISTING, 0, NULL);
  printf("%p %lu\\n", (void *)file, GetLastError());
  CloseHandle(file);
  return WSACleanup();
}
`,
    );
    for (const [gcc, objdump] of [
      ["x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-objdump"],
      ["i686-w64-mingw32-gcc", "i686-w64-mingw32-objdump"],
    ] as const) {
      const exe = path.join(dir, `${gcc}.exe`);
      await run(gcc, ["-O1", "-o", exe, source, "-lws2_32"]);
      const imports = readPeImports(exe);
      expect(imports, gcc).toEqual(await objdumpImports(objdump, exe));
      expect(imports.map((entry) => `${entry.dll.toLowerCase()} ${entry.name}`)).toEqual(expect.arrayContaining(["kernel32.dll CreateFileA", "kernel32.dll CloseHandle", "ws2_32.dll WSAStartup", "ws2_32.dll WSACleanup"]));
    }
  });
});
