/**
 * What a dump does not hold is unknown: it is said, and it makes a verdict less specific, never
 * another one. The pure parts: the streams a minidump lacks, and a rating whose deciding fact is unknown.
 */
import { describe, expect, it } from "vitest";
import { rateExploitability, type ExploitabilityFacts } from "../../src/analyzers/exploitability.js";
import { missingStreams } from "../../src/analyzers/triage/options.js";

const BREAKPAD_LINUX = ["ThreadListStream", "ModuleListStream", "MemoryListStream", "ExceptionStream", "SystemInfoStream", "LinuxMaps"];
const linux = { os: "linux", arch: "x86_64", pointerSize: 8 } as const;
const windows = { os: "windows", arch: "x86_64", pointerSize: 8 } as const;

describe("the streams a minidump lacks", () => {
  it("says nothing of a dump that has what triage reads", () => {
    expect(missingStreams({ streams: BREAKPAD_LINUX, platform: linux })).toEqual([]);
    expect(missingStreams({ streams: ["ThreadListStream", "ModuleListStream", "Memory64ListStream", "MemoryInfoListStream"], platform: windows })).toEqual([]);
  });

  it("says what each missing stream would have shown", () => {
    const without = (name: string) => missingStreams({ streams: BREAKPAD_LINUX.filter((s) => s !== name), platform: linux });
    expect(without("ModuleListStream")).toEqual([expect.stringMatching(/^the dump has no module list: which module an address lies in is unknown/)]);
    expect(without("MemoryListStream")).toEqual([expect.stringMatching(/^the dump holds no memory .*: the instruction at the pc, whether it read or wrote/)]);
    expect(without("LinuxMaps")).toEqual([expect.stringMatching(/^the dump records no mappings \(no Linux maps stream or memory info list\): whether an address is code/)]);
    expect(missingStreams({ streams: ["ThreadListStream", "ModuleListStream", "MemoryListStream"], platform: windows })).toEqual([
      expect.stringMatching(/^the dump records no mappings \(no memory info list\)/),
    ]);
  });
});

const nearNull = (access: ExploitabilityFacts["access"]): ExploitabilityFacts => ({
  kind: "null-dereference",
  origin: "fault",
  access,
  faultAddress: 0x18n,
  pc: 0x55d0c0001234n,
  pcInCode: null,
  instruction: null,
  smashedWord: null,
  regions: [],
  sp: null,
  pointerBytes: 8,
  abortNamed: true,
});

describe("a rating whose deciding fact the dump does not hold", () => {
  it("is unknown near NULL when the access is neither shown a read nor a write, and says both ways", () => {
    const rated = rateExploitability(nearNull(null));
    expect(rated.rating).toBe("unknown");
    expect(rated.reasons).toEqual(["an access near NULL (0x18) that the dump does not show as a read or a write: a read there is probably not exploitable, a write probably is"]);
    // Each shown access keeps its own rating, and neither is above what unknown could hide.
    expect(rateExploitability(nearNull("read")).rating).toBe("probably-not-exploitable");
    expect(rateExploitability(nearNull("write")).rating).toBe("probably-exploitable");
  });

  it("does not take an unknown pc for one outside the code", () => {
    const jump = { ...nearNull("execute"), kind: "bad-jump" as const, faultAddress: 0x55d0c0009000n, pc: 0x55d0c0009000n };
    expect(rateExploitability(jump).reasons).toEqual(["a call or jump through a bad pointer: whoever controls the pointer controls execution"]);
    expect(rateExploitability({ ...jump, pcInCode: false }).reasons[0]).toMatch(/which is no code/);
  });

  it("is unknown for an abort whose stack names nothing of how it aborted, and not exploitable where it does", () => {
    const abort = { ...nearNull(null), kind: "abort" as const, origin: "raised" as const, faultAddress: null };
    expect(rateExploitability({ ...abort, abortNamed: false })).toEqual({
      rating: "unknown",
      reasons: ["the program aborted, but no frame names what made it abort (the C library's are not named here): a failed check of its own would not be exploitable, a heap or stack check that caught a corruption would be"],
    });
    expect(rateExploitability(abort).rating).toBe("not-exploitable");
  });
});
