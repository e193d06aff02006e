import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

import type { Frame } from "../../src/debuggers/model.js";
import { loadBreakpadSymbols } from "../../src/debuggers/symbols/breakpad-sym.js";
import { nameFrames, type NamedModule } from "../../src/debuggers/symbols/frame-names.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const SYM = `MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 server
FILE 0 /src/server/net.c
FILE 1 /src/server/checksum.h
INLINE_ORIGIN 0 byte_weight
FUNC 1000 40 0 send_packet
INLINE 0 21 0 0 1010 10
1000 10 20 0
1010 10 7 1
1020 20 22 0
FUNC 2000 30 0 main
2000 18 40 0
2018 18 41 0
PUBLIC 3000 0 _start
`;

async function serverModule(): Promise<NamedModule> {
  const dir = tempDir("dumpdbg-frame-names-");
  const file = path.join(dir, "server.sym");
  writeFileSync(file, SYM);
  return { name: "server", start: 0x555555554000n, end: 0x555555558000n, symbols: await loadBreakpadSymbols(file) };
}

const frame = (level: number, address: string, extra: Partial<Frame> = {}): Frame => ({ level, address, function: null, args: "", file: null, line: null, from: null, ...extra });

describe("nameFrames", () => {
  it("names the frames the debugger left unnamed, with the inlined call the pc is in", async () => {
    const frames = [frame(0, "0x555555555014"), frame(1, "0x555555556018"), frame(2, "0x555555557004")];
    nameFrames(frames, [await serverModule()]);
    expect(frames[0]).toMatchObject({ function: "byte_weight", file: "/src/server/checksum.h", line: 7, from: "server", inlinedInto: [{ function: "send_packet", file: "/src/server/net.c", line: 21 }] });
    // A caller's pc is its return address: the call is on the line of the byte before it.
    expect(frames[1]).toMatchObject({ function: "main", file: "/src/server/net.c", line: 40 });
    expect(frames[2]).toMatchObject({ function: "_start", file: null, line: null });
  });

  it("leaves a frame the debugger named, and one outside every module, as they are", async () => {
    const frames = [frame(0, "0x555555555014", { function: "send_packet", file: "net.c", line: 99 }), frame(1, "0x7f0000001000")];
    nameFrames(frames, [await serverModule()]);
    expect(frames[0]).toMatchObject({ function: "send_packet", file: "net.c", line: 99 });
    expect(frames[0]?.inlinedInto).toBeUndefined();
    expect(frames[1]?.function).toBeNull();
  });

  it("takes a frame found by a stack scan at its own address, which is already the call's", async () => {
    const frames = [frame(0, "0x555555555000"), frame(1, "0x555555556018", { found: "scan" })];
    nameFrames(frames, [await serverModule()]);
    expect(frames[1]).toMatchObject({ function: "main", line: 41 });
  });
});
