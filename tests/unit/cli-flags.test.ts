/** The command line's numeric flags, read one way: a table of flag, rule, what was typed → number or usage error. */
import { describe, expect, it } from "vitest";
import { ExitError } from "../../src/cli/exit.js";
import { modelConfig } from "../../src/cli/model-options.js";
import { numberFlag, type NumberRule } from "../../src/cli/numbers.js";

const TIMEOUT: NumberRule = { whole: false, min: 0, aboveMin: true, max: 2_147_483, unit: "seconds" };
const JOBS: NumberRule = { whole: true, min: 1, max: 64 };
const KEEP: NumberRule = { whole: true, min: 0 };
const DAYS: NumberRule = { whole: false, min: 0 };
const IDLE: NumberRule = { whole: false, min: 0, aboveMin: true };
const STALL: NumberRule = { whole: false, min: 1, max: 86_400, unit: "seconds" };

describe("numberFlag", () => {
  it.each([
    ["--timeout", TIMEOUT, "2.5", 2.5],
    ["--jobs", JOBS, "64", 64],
    ["--keep", KEEP, "0", 0],
    ["--days", DAYS, "0.5", 0.5],
    ["--stall-seconds", STALL, "1", 1],
  ] as const)("%s %s", (flag, rule, typed, value) => {
    expect(numberFlag(flag, rule)(typed)).toBe(value);
  });

  it.each([
    ["--timeout", TIMEOUT, "soon", '--timeout must be a positive number of seconds up to 2147483, got "soon"'],
    ["--timeout", TIMEOUT, "0", '--timeout must be a positive number of seconds up to 2147483, got "0"'],
    ["--jobs", JOBS, "65", '--jobs must be a whole number from 1 to 64, got "65"'],
    ["--jobs", JOBS, "1.5", '--jobs must be a whole number from 1 to 64, got "1.5"'],
    ["--keep", KEEP, "-1", '--keep must be a whole number of at least 0, got "-1"'],
    ["--days", DAYS, "", '--days must be a number of at least 0, got ""'],
    ["--idle-minutes", IDLE, "0", '--idle-minutes must be a positive number, got "0"'],
    ["--stall-seconds", STALL, "86401", '--stall-seconds must be a number of seconds from 1 to 86400, got "86401"'],
  ] as const)("%s refuses %s", (flag, rule, typed, message) => {
    const parse = numberFlag(flag, rule);
    expect(() => parse(typed)).toThrow(ExitError);
    expect(() => parse(typed)).toThrow(message);
  });
});

describe("modelConfig", () => {
  it("passes on only the model flags given", () => {
    expect(modelConfig({ provider: "offline", redact: true })).toEqual({ provider: "offline", redact: true });
    expect(modelConfig({ provider: "openai", model: "gpt-4o", localModel: "qwen2.5:7b", redact: false })).toEqual({ provider: "openai", model: "gpt-4o", localModel: "qwen2.5:7b", redact: false });
  });
});
