/**
 * Numeric flags, all read one way: commander parses each with `numberFlag`, so a command gets a
 * number in range or the user gets one usage line naming the flag, the range and what was given.
 */
import { ExitCode, ExitError } from "./exit.js";

export interface NumberRule {
  /** A count (jobs, turns) rather than an amount (seconds, days). */
  whole: boolean;
  min: number;
  /** `min` itself is not allowed: "a positive number". */
  aboveMin?: boolean;
  max?: number;
  /** "seconds": said in the message. */
  unit?: string;
}

export function numberFlag(flag: string, rule: NumberRule): (value: string) => number {
  return (value) => {
    const n = Number(value);
    const inRange = (rule.aboveMin ? n > rule.min : n >= rule.min) && (rule.max === undefined || n <= rule.max);
    if (value.trim() === "" || !Number.isFinite(n) || (rule.whole && !Number.isInteger(n)) || !inRange) {
      throw new ExitError(ExitCode.usage, `${flag} must be ${expected(rule)}, got "${value}"`);
    }
    return n;
  };
}

/** "a whole number from 1 to 64", "a positive number of seconds up to 2147483", "a number of at least 0". */
function expected(rule: NumberRule): string {
  const kind = `${rule.whole ? "a whole number" : rule.aboveMin && rule.min === 0 ? "a positive number" : "a number"}${rule.unit ? ` of ${rule.unit}` : ""}`;
  if (rule.aboveMin && rule.min === 0) return rule.max === undefined ? kind : `${kind} up to ${rule.max}`;
  return rule.max === undefined ? `${kind} of ${rule.aboveMin ? "more than" : "at least"} ${rule.min}` : `${kind} from ${rule.min} to ${rule.max}`;
}
