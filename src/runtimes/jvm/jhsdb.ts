/**
 * The JDK's Serviceability Agent's thread dump as a process: `jhsdb jstack` over a core, bounded in
 * time and in the output kept. Plain jstack reads the threads, their frames, the monitors they hold
 * and wait for and the SA's deadlock detection without walking the heap (`--locks`, and clhsdb's
 * `jstack`, walk all of it for ownable synchronizers: seconds per hundred MB of objects).
 */
import { execFile } from "node:child_process";

import { live } from "../../debuggers/live.js";

/** Attaching to a core takes the SA a second or two; a VM it cannot read can make it spin. */
const JSTACK_TIMEOUT_MS = 60_000;
/** A core of thousands of threads prints a few megabytes; more is not a thread dump. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

export type JstackRun = { ok: true; output: string; command: string } | { ok: false; error: string; command: string };

/** `jhsdb jstack --core CORE --exe JAVA`, as it is recorded and cited. */
export function jstackCommand(core: string, java: string): string {
  return `jhsdb jstack --core ${core} --exe ${java}`;
}

/** Runs `jhsdb jstack --core CORE --exe JAVA`; what went wrong is said in one line. */
export function runJstack(jhsdb: string, core: string, java: string): Promise<JstackRun> {
  const args = ["jstack", "--core", core, "--exe", java];
  const command = jstackCommand(core, java);
  return new Promise((resolve) => {
    const child = execFile(jhsdb, args, { timeout: JSTACK_TIMEOUT_MS, maxBuffer: MAX_OUTPUT_BYTES, encoding: "utf8", env: { ...process.env, LC_ALL: "C" } }, (error, stdout, stderr) => {
      live.delete(running);
      if (!error) return resolve({ ok: true, output: stdout, command });
      const failure = error as NodeJS.ErrnoException & { killed?: boolean; code?: string | number };
      const why =
        failure.code === "ENOENT"
          ? `${jhsdb} is not there`
          : failure.killed
            ? `it did not finish in ${JSTACK_TIMEOUT_MS / 1000} s`
            : failure.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER"
              ? `it printed more than ${MAX_OUTPUT_BYTES / 1024 / 1024} MB`
              : `it failed (${firstLine(stderr) ?? firstLine(stdout) ?? failure.message})`;
      resolve({ ok: false, error: why, command });
    });
    // Tracked as a debugger is: Ctrl+C or dumpdbg's exit ends it too, never a JVM left reading a core.
    const running = { kill: () => child.kill("SIGKILL") };
    live.add(running);
  });
}

function firstLine(text: string): string | null {
  const line = text.split("\n").find((l) => l.trim() !== "" && !/^Attaching to core|^Debugger attached/.test(l));
  return line ? line.trim().slice(0, 200) : null;
}
