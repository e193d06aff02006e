/** Parser for `info threads`. */
import { parseFrameText, type Frame } from "./backtrace.js";
import { lines } from "./gdb-text.js";

export interface ThreadInfo {
  /** gdb's thread number. */
  id: number;
  lwp: number | null;
  name: string | null;
  /** The thread gdb has selected (marked `*`). */
  current: boolean;
  /** The thread's innermost frame. */
  frame: Omit<Frame, "level"> | null;
}

export function parseThreads(output: string): ThreadInfo[] {
  const threads: ThreadInfo[] = [];
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
