import { describe, expect, it } from "vitest";
import { listed, thousands } from "../../src/report/numbers.js";

describe("thousands", () => {
  it("writes whole numbers as en-US does", () => {
    for (const n of [0, 1, 12, 999, 1000, 12_345, 999_999, 1_000_000, 1_234_567_890, -4321, 2 ** 53]) {
      expect(thousands(n)).toBe(n.toLocaleString("en-US"));
    }
  });

  it("keeps a fraction and says what is not a number", () => {
    expect(thousands(1234.5)).toBe("1,234.5");
    expect(thousands(Number.NaN)).toBe("NaN");
  });
});

describe("listed", () => {
  it("joins as a sentence does, the last two with and", () => {
    expect(listed([])).toBe("");
    expect(listed([3])).toBe("3");
    expect(listed([3, 4])).toBe("3 and 4");
    expect(listed(["`a`", "`b`", "`c`"])).toBe("`a`, `b` and `c`");
  });
});
