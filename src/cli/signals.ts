/** Ctrl+C and SIGTERM end every debugger we started, so none is left behind, then exit. */
import { killAllDebuggers } from "../debuggers/live.js";
import { ExitCode } from "./exit.js";

type InterruptHook = () => void;
const hooks: InterruptHook[] = [];

/** Lets a command print something on Ctrl+C (e.g. token counts) before the process exits. */
export function onInterrupt(hook: InterruptHook): void {
  hooks.push(hook);
}

let installed = false;

export function installSignalHandlers(): void {
  if (installed) return;
  installed = true;
  const stop = (signal: NodeJS.Signals) => {
    for (const hook of hooks) hook();
    killAllDebuggers();
    process.stderr.write(`dumpdbg: ${signal === "SIGINT" ? "interrupted" : "terminated"}\n`);
    process.exit(signal === "SIGINT" ? ExitCode.interrupted : 143);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  process.once("exit", killAllDebuggers);
}
