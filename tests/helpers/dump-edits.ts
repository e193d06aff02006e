/**
 * A dump as it reaches a crash-reporting service: read away from the machine that wrote it. The
 * files it names are moved out of reach by rewriting their paths in place (same length, so every
 * offset holds), and streams a writer could not write are left out as Breakpad leaves them: their
 * directory entry zeroed (type 0, unused, and no bytes: LLDB skips an empty entry, and refuses two
 * unused ones that claim bytes as one stream twice).
 */
import { existsSync } from "node:fs";

/** Minidump stream types a test may take away. */
export const STREAM = { moduleList: 4, memoryList: 5, memory64List: 9, linuxMaps: 0x47670009 } as const;

/** The directory entries' offsets of the streams of `type` (header: stream count at 8, directory RVA at 12; entries of 12 bytes). */
function streamEntries(dump: Buffer, type: number): number[] {
  const count = dump.readUInt32LE(8);
  const directory = dump.readUInt32LE(12);
  return Array.from({ length: count }, (_, i) => directory + i * 12).filter((entry) => dump.readUInt32LE(entry) === type);
}

export function hasStream(dump: Buffer, type: number): boolean {
  return streamEntries(dump, type).length > 0;
}

/** The minidump without the streams of `types`. Throws when it has none of them: nothing would be taken away. */
export function withoutStreams(dump: Buffer, types: number[]): Buffer {
  const out = Buffer.from(dump);
  const entries = types.flatMap((type) => streamEntries(out, type));
  if (entries.length === 0) throw new Error(`the dump has no stream of type ${types.map((t) => `0x${t.toString(16)}`).join(" or ")} to take away`);
  for (const entry of entries) out.fill(0, entry, entry + 12);
  return out;
}

/**
 * Every occurrence of `from` replaced by `to`, as bytes (ELF notes, the process's memory, Breakpad's
 * maps and command line) and as UTF-16LE (a minidump's MINIDUMP_STRINGs). Same length only, so that
 * no offset or size in the file moves. Returns the new bytes and how many were replaced.
 */
export function rewritePath(bytes: Buffer, from: string, to: string): { bytes: Buffer; replaced: number } {
  if (from.length !== to.length) throw new Error(`a path is rewritten in place: "${from}" and "${to}" differ in length`);
  const out = Buffer.from(bytes);
  let replaced = 0;
  for (const encoding of ["latin1", "utf16le"] as const) {
    const needle = Buffer.from(from, encoding);
    const replacement = Buffer.from(to, encoding);
    for (let at = out.indexOf(needle); at !== -1; at = out.indexOf(needle, at + needle.length)) {
      replacement.copy(out, at);
      replaced++;
    }
  }
  return { bytes: out, replaced };
}

/**
 * The dump with every file under `folders` out of reach: each folder's last letter changed
 * (`/usr/lib/` → `/usr/liX/`), as long, and not on this machine.
 */
export function movedAway(dump: Buffer, folders: string[]): Buffer {
  let bytes = dump;
  for (const folder of folders) {
    const trimmed = folder.replace(/\/$/, "");
    const moved = `${trimmed.slice(0, -1)}${trimmed.endsWith("X") ? "Y" : "X"}`;
    if (existsSync(moved)) throw new Error(`${moved} exists here: the dump would still find its files`);
    bytes = rewritePath(bytes, trimmed + "/", moved + "/").bytes;
  }
  return bytes;
}
