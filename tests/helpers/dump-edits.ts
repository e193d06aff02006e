/**
 * A dump as it reaches a crash-reporting service: read away from the machine that wrote it. The
 * files it names are moved out of reach by rewriting their paths in place (same length, so every
 * offset holds), and streams a writer could not write are left out as Breakpad leaves them: their
 * directory entry zeroed (type 0, unused, and no bytes: LLDB skips an empty entry, and refuses two
 * unused ones that claim bytes as one stream twice).
 */
import { readFileSync, writeFileSync } from "node:fs";

/** Minidump stream types a test may take away. */
export const STREAM = { memoryList: 5, moduleList: 4, memoryInfoList: 16, linuxMaps: 0x47670009 } as const;

/**
 * The dump with every path that starts with a `from` moved to its `to` (each pair the same length):
 * as UTF-16 (a minidump's module names) and as bytes (its Linux maps, a core's file notes).
 */
export function withPathsMoved(dump: Buffer, moves: [from: string, to: string][]): Buffer {
  let text = dump.toString("latin1");
  for (const [from, to] of moves) {
    if (from.length !== to.length) throw new Error(`a moved path must keep its length: ${from} -> ${to}`);
    for (const encoding of ["utf16le", "latin1"] as const) {
      text = text.split(Buffer.from(from, encoding).toString("latin1")).join(Buffer.from(to, encoding).toString("latin1"));
    }
  }
  return Buffer.from(text, "latin1");
}

/** The minidump without the streams of these types. */
export function withoutStreams(dump: Buffer, types: number[]): Buffer {
  const edited = Buffer.from(dump);
  const count = edited.readUInt32LE(8);
  const directory = edited.readUInt32LE(12);
  for (let i = 0; i < count; i++) {
    if (types.includes(edited.readUInt32LE(directory + i * 12))) edited.fill(0, directory + i * 12, directory + (i + 1) * 12);
  }
  return edited;
}

/** Writes `out` as `dump` edited. */
export function editDump(dump: string, out: string, edit: (bytes: Buffer) => Buffer): string {
  writeFileSync(out, edit(readFileSync(dump)));
  return out;
}
