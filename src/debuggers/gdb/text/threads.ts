/** Parser for `info threads`. */
import type { ThreadSummary } from "../../model.js";
import { parseFrameText } from "./backtrace.js";
import { lines } from "./common.js";

export function parseThreads(output: string): ThreadSummary[] {
  const threads: ThreadSummary[] = [];
  for (const line of lines(output)) {
    const row = /^([* ]) (\d+)\s+((?:Thread 0x[0-9a-f]+ \(LWP \d+\)|LWP \d+|process \d+|Thread \S+)(?: "((?:[^"\\]|\\.)*)")?)\s+(.*)$/.exec(line);
    if (!row) continue;
    const target = row[3] ?? "";
    const lwp = /LWP (\d+)/.exec(target) ?? /process (\d+)/.exec(target);
    threads.push({
      id: Number(row[2]),
      lwp: lwp ? Number(lwp[1]) : null,
      name: row[4] ?? null,
      current: row[1] === "*",
      frame: parseFrameText(row[5] ?? ""),
    });
  }
  return threads;
}
