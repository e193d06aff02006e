/**
 * A Breakpad minidump of a real crash, rewritten as the dump Breakpad's or Crashpad's Mac client
 * writes: macOS system info, the Mach exception (type as the code, its first code as the flags,
 * the subcode as the address), modules named and identified as Mach-O images are (a CodeView
 * PDB70 record holding the image's UUID, age 0), and no Linux streams. The process's memory,
 * threads and registers stay the real ones. Also the Breakpad .sym of a module under that UUID.
 */
import { DumpFile, readMinidump } from "../../src/debuggers/dumpfile/index.js";
import { breakpadSymbols, type BreakpadSymbolsOptions } from "./breakpad-sym.js";
import { Writer } from "./dump-writers.js";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

const MODULE_LIST = 4;
const EXCEPTION = 6;
const SYSTEM_INFO = 7;
const MAC_OS_X = 0x8101;

export interface MacModule {
  /** Index in the dump's module list. */
  index: number;
  /** Where the image lived on the Mac: `/Applications/Billing.app/Contents/MacOS/Billing`. */
  path: string;
  /** The image's LC_UUID. */
  uuid: Buffer;
}

/** Where each Linux library of the dump lived on the Mac. */
const MAC_PATHS: [RegExp, string][] = [
  [/\/libc\.so\.6$/, "/usr/lib/system/libsystem_c.dylib"],
  [/\/ld-linux[^/]*$/, "/usr/lib/dyld"],
  [/linux-gate|linux-vdso/, "/usr/lib/system/libsystem_kernel.dylib"],
  [/\/libstdc\+\+[^/]*$/, "/usr/lib/libc++.1.dylib"],
  [/\/libgcc_s[^/]*$/, "/usr/lib/libc++abi.dylib"],
  [/\/libm\.so\.6$/, "/usr/lib/system/libsystem_m.dylib"],
];

/**
 * The modules of a Linux Breakpad dump as the Mac would have had them (the program in its app
 * bundle, each library as its macOS counterpart, the build id as the image's UUID), and the fault
 * address its signal record holds (0 where none).
 */
export function macModulesOf(linuxDump: string, name: string): { modules: MacModule[]; faultAddress: bigint } {
  const file = DumpFile.open(linuxDump);
  const facts = (() => {
    try {
      return readMinidump(file);
    } finally {
      file.close();
    }
  })();
  const stop = facts.stopReason;
  const faultAddress = stop?.type === "signal" && stop.address ? BigInt(stop.address) : 0n;
  const modules = facts.modules.map((module, index) => ({
    index,
    path: index === 0 ? `/Applications/${name}.app/Contents/MacOS/${name}` : (MAC_PATHS.find(([pattern]) => pattern.test(module.path))?.[1] ?? `/usr/lib/${path.basename(module.path)}.dylib`),
    uuid: Buffer.from((module.buildId ?? "").padEnd(32, "0").slice(0, 32), "hex"),
  }));
  return { modules, faultAddress };
}

export interface MachException {
  type: number;
  code: number;
  /** The subcode (a bad access's address); the dump's own address when absent. */
  address?: bigint;
  /** The exception's codes, as Crashpad keeps them in ExceptionInformation. */
  codes?: bigint[];
}

export function asMacMinidump(dump: Buffer, modules: MacModule[], exception: MachException): Buffer {
  const out = Buffer.from(dump);
  const writer = new Writer();
  writer.append(out);
  const place = (bytes: Buffer): number => writer.append(bytes, 8);
  const count = out.readUInt32LE(8);
  const directory = out.readUInt32LE(12);
  for (let i = 0; i < count; i++) {
    const entry = directory + i * 12;
    const type = out.readUInt32LE(entry);
    const rva = out.readUInt32LE(entry + 8);
    if (type === SYSTEM_INFO) out.writeUInt32LE(MAC_OS_X, rva + 20);
    if (type === EXCEPTION) {
      out.writeUInt32LE(exception.type >>> 0, rva + 8);
      out.writeUInt32LE(exception.code >>> 0, rva + 12);
      if (exception.address !== undefined) out.writeBigUInt64LE(exception.address, rva + 24);
      const codes = exception.codes ?? [];
      out.writeUInt32LE(codes.length, rva + 32);
      codes.forEach((code, j) => out.writeBigUInt64LE(BigInt.asUintN(64, code), rva + 40 + j * 8));
    }
    if (type === MODULE_LIST) {
      for (const module of modules) {
        const at = rva + 4 + module.index * 108;
        const name = Buffer.from(module.path, "utf16le");
        const nameRva = place(Buffer.concat([u32(name.length), name, Buffer.alloc(2)]));
        const base = path.posix.basename(module.path);
        const cv = Buffer.concat([Buffer.from("RSDS", "latin1"), module.uuid, u32(0), Buffer.from(`${base}\0`, "latin1")]);
        const cvRva = place(cv);
        out.writeUInt32LE(nameRva, at + 20);
        out.writeUInt32LE(cv.length, at + 76);
        out.writeUInt32LE(cvRva, at + 80);
      }
    }
  }
  // The Linux streams (cpu info, /proc copies, maps, auxv) are no Mac writer's: the directory drops them.
  const kept = Array.from({ length: count }, (_, i) => Buffer.from(out.subarray(directory + i * 12, directory + i * 12 + 12))).filter((entry) => {
    const type = entry.readUInt32LE(0);
    return type < 0x47670003 || type > 0x4767000a;
  });
  kept.forEach((entry, i) => entry.copy(out, directory + i * 12));
  out.fill(0, directory + kept.length * 12, directory + count * 12);
  out.writeUInt32LE(kept.length, 8);
  return writer.bytes();
}

/** The Breakpad id of a Mach-O image: its UUID as a GUID (first three fields little-endian) and age 0. */
export function macModuleId(uuid: Buffer): string {
  const fields = [uuid.readUInt32LE(0).toString(16).padStart(8, "0"), uuid.readUInt16LE(4).toString(16).padStart(4, "0"), uuid.readUInt16LE(6).toString(16).padStart(4, "0"), uuid.subarray(8).toString("hex")];
  return `${fields.join("")}0`.toUpperCase();
}

/** The .sym of `elf` (built with -g) filed as the Mac image `name` with `uuid`: `<store>/<name>/<id>/<name>.sym`. */
export async function writeMacSymbols(elf: string, name: string, uuid: Buffer, store: string, options: BreakpadSymbolsOptions = {}): Promise<string> {
  const { text } = await breakpadSymbols(elf, options);
  const id = macModuleId(uuid);
  const dir = path.join(store, name, id);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}.sym`);
  await writeFile(file, text.replace(/^MODULE .*$/m, `MODULE mac x86_64 ${id} ${name}`));
  return file;
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value >>> 0, 0);
  return b;
}
