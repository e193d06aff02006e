/** A hang fixture's handshake: it prints "ready" once its threads are about to block. */
import type { ChildProcess } from "node:child_process";

/** Resolves once `child` has printed "ready" on stdout; rejects if it exits first or `ms` pass. `what` names it in the error. */
export function untilReady(child: ChildProcess, what: string, ms: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} never printed "ready"`)), ms);
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("ready")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) instead of hanging`));
    });
  });
}
