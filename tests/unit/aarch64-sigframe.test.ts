/**
 * The arm64 signal frame reader: a frame laid out as Linux's `struct rt_sigframe` (the offsets
 * measured on a real qemu-user core: the siginfo at the frame, the mcontext at +304), then the same
 * frame with its evidence taken away one piece at a time. Each taken piece leaves no frame (the
 * fault unknown), never another verdict.
 */
import { describe, expect, it } from "vitest";

import { A64_SIGFRAME, isKernelFrameRecord, readA64Sigframe, type A64SigframeChecks } from "../../src/analyzers/aarch64-sigframe.js";

const AT = 0x55007ff3a0n;
const PC = 0x400834n;
/** `ldr x0, [x0, #8]`, the load that faulted with x0 = 0. */
const LDR_X0_X0_8 = 0xf9400400;

function frameWords(edit: (words: (bigint | undefined)[]) => void = () => {}): (bigint | undefined)[] {
  const words: (bigint | undefined)[] = Array.from({ length: A64_SIGFRAME.size / 8 }, () => 0n);
  words[0] = 11n; // si_signo SIGSEGV, si_errno 0
  words[1] = 1n; // si_code SEGV_MAPERR
  words[2] = 0x8n; // si_addr
  words[A64_SIGFRAME.faultAddress / 8] = 0x8n;
  words[A64_SIGFRAME.registers / 8] = 0n; // x0 = NULL
  words[A64_SIGFRAME.registers / 8 + 29] = 0x5500800600n;
  words[A64_SIGFRAME.registers / 8 + 30] = 0x400870n;
  words[A64_SIGFRAME.sp / 8] = 0x5500800600n;
  words[A64_SIGFRAME.pc / 8] = PC;
  words[A64_SIGFRAME.pstate / 8] = 0x60000000n;
  edit(words);
  return words;
}

const checks: A64SigframeChecks = {
  inCode: (address) => address >= 0x400000n && address < 0x401000n,
  mapped: (address) => address >= 0x5500001000n && address < 0x5500801000n,
  instructionAt: (address) => (address === PC ? LDR_X0_X0_8 : null),
};

describe("the arm64 rt_sigframe reader", () => {
  it("reads the record and the interrupted registers of a frame whose every field is a fault's", () => {
    const read = readA64Sigframe(frameWords(), AT, checks);
    expect(read.frame?.record).toEqual({ signo: 11, errno: 0, code: 1, address: "0x8", pid: null });
    expect(read.frame?.pc).toBe(PC);
    expect(read.frame?.registers.find((r) => r.name === "x0")?.value).toBe("0x0");
    expect(read.frame?.registers.find((r) => r.name === "x30")?.value).toBe("0x400870");
  });

  const taken: [string, (bigint | undefined)[], Partial<A64SigframeChecks>, RegExp][] = [
    ["memory the dump lacks", frameWords((w) => (w[A64_SIGFRAME.pc / 8] = undefined)), {}, /does not hold the whole frame/],
    ["a garbage pc", frameWords((w) => (w[A64_SIGFRAME.pc / 8] = 0x4141414141414141n)), {}, /saved pc is not in code/],
    ["a pc whose code the dump does not show", frameWords(), { inCode: () => null }, /saved pc is not in code/],
    ["a signal no fault raises", frameWords((w) => (w[0] = 6n)), {}, /signal number \(6\) is no fault's/],
    ["a sent signal's code", frameWords((w) => (w[1] = 0xfffffffan)), {}, /si_code \(-6\) is no fault's/],
    ["two fault addresses that differ", frameWords((w) => (w[A64_SIGFRAME.faultAddress / 8] = 0x10n)), {}, /differ/],
    ["a kernel pstate", frameWords((w) => (w[A64_SIGFRAME.pstate / 8] = 0x3c5n)), {}, /pstate/],
    ["an sp outside the process's memory", frameWords((w) => (w[A64_SIGFRAME.sp / 8] = 0x10n)), {}, /saved sp/],
    ["an instruction the dump does not hold", frameWords(), { instructionAt: () => null }, /not in the dump/],
    ["an instruction that touches no memory", frameWords(), { instructionAt: () => 0xd503201f }, /touches no memory/],
    ["an address the instruction does not form", frameWords((w) => (w[A64_SIGFRAME.registers / 8] = 0x5500001000n)), {}, /touches 0x5500001008, not the fault address/],
  ];
  for (const [what, words, changed, why] of taken) {
    it(`gives no frame, never another verdict, for ${what}`, () => {
      const read = readA64Sigframe(words, AT, { ...checks, ...changed });
      expect(read.frame).toBeNull();
      expect("why" in read ? read.why : "").toMatch(why);
    });
  }

  it("reads a jump to a bad address as the fault at the pc, in no code and with no load to agree with", () => {
    const read = readA64Sigframe(
      frameWords((w) => {
        w[2] = 0x10n;
        w[A64_SIGFRAME.faultAddress / 8] = 0x10n;
        w[A64_SIGFRAME.pc / 8] = 0x10n;
      }),
      AT,
      { ...checks, instructionAt: () => null },
    );
    expect(read.frame?.record.address).toBe("0x10");
  });

  it("ties the frame to the running handler by the kernel's frame record after it, holding the interrupted x29 and x30 (as measured: 0x1250 past the frame)", () => {
    const frame = readA64Sigframe(frameWords(), AT, checks).frame!;
    expect(isKernelFrameRecord(frame, AT + 0x1250n, 0x5500800600n, 0x400870n)).toBe(true);
    // A record inside the frame, or one holding other registers, is not the kernel's: a stale copy is not believed.
    expect(isKernelFrameRecord(frame, AT + 0x100n, 0x5500800600n, 0x400870n)).toBe(false);
    expect(isKernelFrameRecord(frame, AT + 0x1250n, 0x5500800600n, 0x400874n)).toBe(false);
    expect(isKernelFrameRecord(frame, AT + 0x1250n + 0x20000n, 0x5500800600n, 0x400870n)).toBe(false);
  });
});
