/**
 * Breakpad's module id of an ELF, from its GNU build id (tests/helpers/breakpad-sym.ts).
 *
 * Every expected value was worked out by hand (the first 16 bytes as a GUID: bytes 0-3 reversed,
 * 4-5 reversed, 6-7 reversed, 8-15 as they are, then the age "0") and agrees with the MODULE
 * line that a real Breakpad dump_syms printed for a program linked with that build id
 * (`gcc -Wl,--build-id=0x<hex>`, or ld's default sha1 and its md5).
 */
import { describe, expect, it } from "vitest";
import { breakpadModuleId } from "../helpers/breakpad-sym.js";

describe("breakpadModuleId", () => {
  it("reads the first 16 bytes as a GUID whose first three fields are little-endian, and appends the age 0", () => {
    // 00010203 0405 0607 08090a0b0c0d0e0f | 10111213 (beyond the GUID: not in the id)
    expect(breakpadModuleId("000102030405060708090a0b0c0d0e0f10111213")).toBe("030201000504070608090A0B0C0D0E0F0");
  });

  it("gives the id of a linker's sha1 build id (20 bytes) in upper case, 33 characters", () => {
    // 2492a794 c85c 71d1 efee567adb4ce36c -> 94A79224 5CC8 D171 EFEE567ADB4CE36C
    const id = breakpadModuleId("2492a794c85c71d1efee567adb4ce36ca947ed98");
    expect(id).toBe("94A792245CC8D171EFEE567ADB4CE36C0");
    expect(id).toHaveLength(33);
  });

  it("gives the id of an md5 build id (16 bytes, all of it in the GUID)", () => {
    // ea6a0725 f668 e3c5 7ef45e0b21b02adc -> 25076AEA 68F6 C5E3 7EF45E0B21B02ADC
    expect(breakpadModuleId("ea6a0725f668e3c57ef45e0b21b02adc")).toBe("25076AEA68F6C5E37EF45E0B21B02ADC0");
  });

  it("pads a build id shorter than 16 bytes with zeros", () => {
    // 01020304 0506 0708 (then 8 zero bytes)
    expect(breakpadModuleId("0102030405060708")).toBe("040302010605080700000000000000000");
  });

  it("takes the build id in either case, around spaces", () => {
    expect(breakpadModuleId(" 2492A794C85C71D1EFEE567ADB4CE36CA947ED98\n")).toBe("94A792245CC8D171EFEE567ADB4CE36C0");
  });

  it("refuses what is not whole bytes of hex", () => {
    expect(() => breakpadModuleId("")).toThrow(/not a build id/);
    expect(() => breakpadModuleId("abc")).toThrow(/not a build id/);
    expect(() => breakpadModuleId("0x2492a794")).toThrow(/not a build id/);
    expect(() => breakpadModuleId("2492a794-c85c")).toThrow(/not a build id/);
  });
});
