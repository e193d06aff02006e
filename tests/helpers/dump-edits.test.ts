import { describe, expect, it } from "vitest";
import { rewritePath, withoutStreams } from "./dump-edits.js";

/** A minidump's header and stream directory alone: `MDMP`, the count at 8, the directory at 32. */
function directoryOf(types: number[]): Buffer {
  const dump = Buffer.alloc(32 + types.length * 12);
  dump.write("MDMP", 0, "latin1");
  dump.writeUInt32LE(types.length, 8);
  dump.writeUInt32LE(32, 12);
  types.forEach((type, i) => {
    dump.writeUInt32LE(type, 32 + i * 12);
    dump.writeUInt32LE(100 + i, 32 + i * 12 + 4);
    dump.writeUInt32LE(1000 + i, 32 + i * 12 + 8);
  });
  return dump;
}

const typesOf = (dump: Buffer) => Array.from({ length: dump.readUInt32LE(8) }, (_, i) => dump.readUInt32LE(32 + i * 12));

describe("withoutStreams", () => {
  it("zeroes the named streams' entries and leaves every other entry and the original as they were", () => {
    const dump = directoryOf([3, 4, 5, 0x47670009, 9]);
    const out = withoutStreams(dump, [5, 9]);
    expect(typesOf(out)).toEqual([3, 4, 0, 0x47670009, 0]);
    // No bytes either: LLDB skips an empty unused entry, and refuses two unused ones that claim bytes.
    expect(out.subarray(32 + 2 * 12, 32 + 3 * 12)).toEqual(Buffer.alloc(12));
    expect(out.subarray(32 + 4 * 12, 32 + 5 * 12)).toEqual(Buffer.alloc(12));
    expect(out.readUInt32LE(32 + 3 * 12 + 8)).toBe(1003);
    expect(typesOf(dump)).toEqual([3, 4, 5, 0x47670009, 9]);
  });

  it("refuses a dump without the stream: the ablation would take nothing away", () => {
    expect(() => withoutStreams(directoryOf([3, 4]), [5, 9])).toThrow(/no stream of type 0x5 or 0x9/);
  });
});

describe("rewritePath", () => {
  it("replaces a path as ASCII and as UTF-16LE, in place", () => {
    const bytes = Buffer.concat([Buffer.from("maps: /usr/lib/libc.so.6\n", "latin1"), Buffer.from("/usr/lib/libc.so.6", "utf16le")]);
    const { bytes: out, replaced } = rewritePath(bytes, "/usr/lib/", "/usr/lix/");
    expect(replaced).toBe(2);
    expect(out.length).toBe(bytes.length);
    expect(out.toString("latin1")).toContain("maps: /usr/lix/libc.so.6\n");
    expect(out.subarray(25).toString("utf16le")).toBe("/usr/lix/libc.so.6");
  });

  it("refuses a replacement of another length, which would move every offset after it", () => {
    expect(() => rewritePath(Buffer.from("/lib/"), "/lib/", "/libs/")).toThrow(/differ in length/);
  });
});
