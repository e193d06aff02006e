/** `--jobs N` of `batch` and `worker`: dumps at a time, by default the machine's cores. */
import os from "node:os";
import { numberFlag } from "./numbers.js";

export const jobsFlag = numberFlag("--jobs", { whole: true, min: 1, max: 64 });

export function jobsOf(flag: number | undefined): number {
  return flag ?? Math.max(1, os.availableParallelism());
}
