/**
 * Return addresses found by scanning stack memory: the words that point into the program's own
 * code, and the call instruction that must end the bytes before each, with where it went. Every
 * encoding below was assembled by GNU as (`as -o x.o x.s && objdump -d x.o`); an instruction's
 * offset in that object is kept in its comment where a displacement depends on it.
 */
import { describe, expect, it } from "vitest";
import { bytesOf, callTarget, endsWithCall, returnCandidates, thunkSlot } from "../../src/analyzers/stack-scan.js";

/** The program's image base: the objects' offsets are placed there. */
const BASE = 0x140001000n;

/** The 16 bytes before a return address, as the scan reads them: nops, then `bytes`. */
function before(...bytes: number[]): Uint8Array {
  return Uint8Array.from([...Array<number>(16 - bytes.length).fill(0x90), ...bytes]);
}

describe("returnCandidates", () => {
  const sp = 0x5ffd00n;
  const isOwnCode = (address: bigint) => BASE <= address && address < BASE + 0x2000n;

  it("keeps the words into the program's own code, once each, with the slot each was in", () => {
    const words = [0x1n, BASE + 0x234n, 0n, 0x7ff8aaaa1234n, BASE + 0x234n, BASE + 0x1000n, BASE + 0x2000n];
    expect(returnCandidates(sp, words, isOwnCode)).toEqual([
      { address: BASE + 0x234n, slot: sp + 8n },
      { address: BASE + 0x1000n, slot: sp + 40n },
    ]);
  });

  it("no words, no candidates", () => {
    expect(returnCandidates(sp, [], isOwnCode)).toEqual([]);
  });
});

describe("endsWithCall on real encodings", () => {
  const calls: Array<[string, number[]]> = [
    ["call rel32 (forward)", [0xe8, 0x40, 0x10, 0x00, 0x00]],
    ["call rel32 (backward)", [0xe8, 0xfa, 0xfd, 0xff, 0xff]],
    ["call *%rax", [0xff, 0xd0]],
    ["call *%r11 (REX prefix)", [0x41, 0xff, 0xd3]],
    ["call *0x8(%rbp)", [0xff, 0x55, 0x08]],
    ["call *-0x8(%rbp)", [0xff, 0x55, 0xf8]],
    ["call *0x0(%r13)", [0x41, 0xff, 0x55, 0x00]],
    ["call *-0x18(%rip), whose disp32 holds an 0xe8", [0xff, 0x15, 0xe8, 0xff, 0xff, 0xff]],
    ["call *0x1035(%rip)", [0xff, 0x15, 0x35, 0x10, 0x00, 0x00]],
    ["call *(%rsp)", [0xff, 0x14, 0x24]],
    ["call *0x100(%rsp)", [0xff, 0x94, 0x24, 0x00, 0x01, 0x00, 0x00]],
    ["call *0x10(%rax,%rbx,8)", [0xff, 0x54, 0xd8, 0x10]],
    ["call *0x601040(,%rax,8): a SIB without a base, and a disp32", [0xff, 0x14, 0xc5, 0x40, 0x10, 0x60, 0x00]],
  ];
  for (const [name, bytes] of calls) {
    it(`${name}: true`, () => expect(endsWithCall(before(...bytes))).toBe(true));
  }

  const notCalls: Array<[string, number[]]> = [
    ["mov $0x11e8,%eax: an 0xe8 in its immediate", [0xb8, 0xe8, 0x11, 0x00, 0x00]],
    ["movabs $0x90909090e8,%rax: an 0xe8 in its immediate", [0x48, 0xb8, 0xe8, 0x90, 0x90, 0x90, 0x90, 0x00, 0x00, 0x00]],
    ["jmp *-0x41(%rip)", [0xff, 0x25, 0xbf, 0xff, 0xff, 0xff]],
    ["jmp *%rax", [0xff, 0xe0]],
    ["mov -0x25(%rip),%rax", [0x48, 0x8b, 0x05, 0xdb, 0xff, 0xff, 0xff]],
    ["mov %eax,%eax", [0x89, 0xc0]],
    ["ret", [0xc3]],
  ];
  for (const [name, bytes] of notCalls) {
    it(`${name}: false`, () => expect(endsWithCall(before(...bytes))).toBe(false));
  }

  it("too few bytes to hold a call: false", () => {
    expect(endsWithCall(new Uint8Array([]))).toBe(false);
    expect(endsWithCall(new Uint8Array([0xd0]))).toBe(false);
  });
});

describe("callTarget", () => {
  it("call rel32 forward: the return address plus rel32", () => {
    // at 0xd: e8 40 10 00 00, call 0x1052
    expect(callTarget(before(0xe8, 0x40, 0x10, 0x00, 0x00), BASE + 0x12n)).toEqual({ direct: BASE + 0x1052n });
  });

  it("call rel32 backward: a negative rel32", () => {
    // at 0x201: e8 fa fd ff ff, call 0x0
    expect(callTarget(before(0xe8, 0xfa, 0xfd, 0xff, 0xff), BASE + 0x206n)).toEqual({ direct: BASE });
  });

  it("call *disp32(%rip): the slot it calls through, behind and ahead", () => {
    // at 0x12: ff 15 e8 ff ff ff, call *-0x18(%rip) # 0x0
    expect(callTarget(before(0xff, 0x15, 0xe8, 0xff, 0xff, 0xff), BASE + 0x18n)).toEqual({ slot: BASE });
    // at 0x18: ff 15 35 10 00 00, call *0x1035(%rip) # 0x1053
    expect(callTarget(before(0xff, 0x15, 0x35, 0x10, 0x00, 0x00), BASE + 0x1en)).toEqual({ slot: BASE + 0x1053n });
  });

  it("mov slot(%rip),%reg; call *%reg: the slot the pointer was loaded from", () => {
    // at 0x1e: 48 8b 05 db ff ff ff, mov -0x25(%rip),%rax # 0x0; at 0x25: ff d0, call *%rax
    expect(callTarget(before(0x48, 0x8b, 0x05, 0xdb, 0xff, 0xff, 0xff, 0xff, 0xd0), BASE + 0x27n)).toEqual({ slot: BASE });
    // at 0x27: 48 8b 1d 25 10 00 00, mov 0x1025(%rip),%rbx # 0x1053; at 0x2e: ff d3, call *%rbx
    expect(callTarget(before(0x48, 0x8b, 0x1d, 0x25, 0x10, 0x00, 0x00, 0xff, 0xd3), BASE + 0x30n)).toEqual({ slot: BASE + 0x1053n });
  });

  it("a load into another register than the one called: unknown", () => {
    // mov 0x101c(%rip),%rcx; call *%rax
    expect(callTarget(before(0x48, 0x8b, 0x0d, 0x1c, 0x10, 0x00, 0x00, 0xff, 0xd0), BASE + 0x39n)).toBeNull();
  });

  it("a register call with no load before it: unknown", () => {
    // mov %eax,%eax; call *%rdx
    expect(callTarget(before(0x89, 0xc0, 0xff, 0xd2), BASE + 0x33n)).toBeNull();
  });

  it("a call through memory other than a rip-relative slot: unknown", () => {
    expect(callTarget(before(0xff, 0x55, 0x08), BASE + 0xdn)).toBeNull();
  });
});

describe("thunkSlot", () => {
  it("jmp *disp32(%rip): the slot, behind and ahead", () => {
    // at 0x3b: ff 25 bf ff ff ff, jmp *-0x41(%rip) # 0x0; what follows the jump does not matter
    expect(thunkSlot(Uint8Array.from([0xff, 0x25, 0xbf, 0xff, 0xff, 0xff, 0x90, 0x90]), BASE + 0x3bn)).toBe(BASE);
    // at 0x41: ff 25 0c 10 00 00, jmp *0x100c(%rip) # 0x1053
    expect(thunkSlot(Uint8Array.from([0xff, 0x25, 0x0c, 0x10, 0x00, 0x00]), BASE + 0x41n)).toBe(BASE + 0x1053n);
  });

  it("an ELF PLT entry: classic, and with endbr64 and a bnd prefix (.plt.sec)", () => {
    // Debian's POSIX.so at 0x6030: ff 25 ca 3f 01 00, jmp *0x13fca(%rip) # 0x1a000 <Perl_setlocale@Base>
    expect(thunkSlot(Uint8Array.from([0xff, 0x25, 0xca, 0x3f, 0x01, 0x00, 0x68, 0x00]), BASE + 0x6030n)).toBe(BASE + 0x1a000n);
    // at 0x1100: f3 0f 1e fa f2 ff 25 a5 2e 00 00, endbr64; bnd jmp *0x2ea5(%rip) # 0x3fb0
    expect(thunkSlot(Uint8Array.from([0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0xa5, 0x2e, 0x00, 0x00, 0x0f, 0x1f, 0x44, 0x00, 0x00]), BASE + 0x1100n)).toBe(BASE + 0x3fb0n);
    // at 0x1100: f3 0f 1e fa ff 25 a6 2e 00 00, endbr64; jmp *0x2ea6(%rip) # 0x3fb0
    expect(thunkSlot(Uint8Array.from([0xf3, 0x0f, 0x1e, 0xfa, 0xff, 0x25, 0xa6, 0x2e, 0x00, 0x00]), BASE + 0x1100n)).toBe(BASE + 0x3fb0n);
  });

  it("anything else: null", () => {
    expect(thunkSlot(Uint8Array.from([0xff, 0x15, 0x35, 0x10, 0x00, 0x00]), BASE)).toBeNull();
    expect(thunkSlot(Uint8Array.from([0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48]), BASE)).toBeNull();
    expect(thunkSlot(Uint8Array.from([0xff, 0xe0]), BASE)).toBeNull();
    expect(thunkSlot(new Uint8Array([]), BASE)).toBeNull();
  });
});

describe("bytesOf", () => {
  it("words in little-endian order", () => {
    expect([...bytesOf([0x1122334455667788n, 0xe8n])]).toEqual([0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0xe8, 0, 0, 0, 0, 0, 0, 0]);
    expect([...bytesOf([0xffffffffffffffffn])]).toEqual(Array<number>(8).fill(0xff));
    expect(bytesOf([]).length).toBe(0);
  });

  it("two words read before a return address hold the call that returns there", () => {
    // The 16 bytes before the return address of `call *%rax`, read as the scan reads them: two words.
    const words = [0x9090909090909090n, 0xd0ff909090909090n];
    expect(endsWithCall(bytesOf(words))).toBe(true);
    expect([...bytesOf(words)]).toEqual([...before(0xff, 0xd0)]);
  });
});
