/** `--jobs N` of `batch` and `worker`: dumps at a time, by default the machine's cores. */
import os from "node:os";
import { ExitCode, ExitError } from "./exit.js";

export function jobsOf(flag: string | undefined): number {
  const jobs = flag === undefined ? Math.max(1, os.availableParallelism()) : Number(flag);
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > 64) throw new ExitError(ExitCode.usage, `--jobs must be a whole number from 1 to 64, got "${flag}"`);
  return jobs;
}
