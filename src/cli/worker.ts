/** `dumpdbg worker`: serves a batch queue until stopped. */
import { resolve } from "node:path";
import { connectionOf } from "../batch/queue.js";
import { startWorker } from "../batch/worker.js";
import { killAllDebuggers } from "../debuggers/live.js";
import { ExitCode, ExitError } from "./exit.js";
import { jobsOf } from "./jobs.js";
import { modelConfig, type ModelFlags } from "./model-options.js";
import { sessionsRoot } from "./sessions-root.js";

export interface WorkerFlags extends ModelFlags {
  queue: string;
  jobs?: number;
  stallSeconds: number;
  out: string;
  sessionsDir?: string;
  gdb?: string;
  lldb?: string;
  cdb?: string;
  dlv?: string;
}

export async function worker(flags: WorkerFlags): Promise<void> {
  const jobs = jobsOf(flags.jobs);
  connectionOf(flags.queue);
  const binaries = { ...(flags.gdb ? { gdb: flags.gdb } : {}), ...(flags.lldb ? { lldb: flags.lldb } : {}), ...(flags.cdb ? { cdb: flags.cdb } : {}), ...(flags.dlv ? { dlv: flags.dlv } : {}) };
  const log = (line: string) => process.stderr.write(`dumpdbg worker: ${line}\n`);
  const running = await startWorker({
    url: flags.queue,
    jobs,
    stallSeconds: flags.stallSeconds,
    ...(Object.keys(binaries).length ? { binaries } : {}),
    analysis: {
      models: modelConfig(flags),
      sessionsDir: sessionsRoot(flags.sessionsDir),
      outDir: resolve(flags.out),
    },
    log,
  });
  // The first Ctrl+C or SIGTERM finishes the dumps in hand and leaves the queue; a second ends at once.
  const stopped = await new Promise<NodeJS.Signals>((done) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        killAllDebuggers();
        process.exit(signal === "SIGINT" ? ExitCode.interrupted : 143);
      }
      stopping = true;
      log("stopping: finishing the dumps in hand (Ctrl+C again to stop at once)");
      void running.close().then(() => done(signal));
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  log("stopped");
  if (stopped === "SIGINT") throw new ExitError(ExitCode.interrupted, "worker stopped");
}
