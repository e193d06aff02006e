/** Ctrl+C, SIGTERM and a closed terminal end every debugger we started, so none is left behind. */
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
    // A command that handles the signal itself wins (the chat leaves cleanly on a closed terminal);
    // `once` has already removed this listener, so any left are the command's.
    if (process.listenerCount(signal) > 0) return;
    for (const hook of hooks) hook();
    killAllDebuggers();
    if (signal !== "SIGHUP") process.stderr.write(`dumpdbg: ${signal === "SIGINT" ? "interrupted" : "terminated"}\n`);
    process.exit(signal === "SIGINT" ? ExitCode.interrupted : signal === "SIGHUP" ? 129 : 143);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  process.once("SIGHUP", stop);
  process.once("exit", killAllDebuggers);
}
