/**
 * `dumpdbg worker`: takes batch jobs from the queue, `jobs` at a time, triages or analyses each dump
 * with this machine's debuggers and models, and posts the result. A worker that dies under a job
 * stops renewing its lock; after `stallSeconds` another worker takes the job (once: a dump that
 * kills two workers fails). A dump that cannot be read fails at once, with no retry.
 */
import os from "node:os";
import type { Job, Worker } from "bullmq";
import { DumpError } from "../debuggers/dump.js";
import { endKeptGdbs } from "../debuggers/gdb/kept-gdb.js";
import type { Backend } from "../debuggers/session.js";
import { connectionOf, displayed, QUEUE_NAME, ready, type JobData, type JobName } from "./queue.js";
import { analyzeDump, oneLine, triageDump, type AnalysisSettings } from "./work.js";

export interface WorkerOptions {
  url: string;
  jobs: number;
  /** How long a job of a worker that stopped answering waits before another takes it. */
  stallSeconds: number;
  /** This machine's debugger binaries. */
  binaries?: Partial<Record<Backend, string>>;
  analysis: AnalysisSettings;
  log: (line: string) => void;
}

export interface RunningWorker {
  /** Lets the jobs in hand finish, then leaves the queue. */
  close(): Promise<void>;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const connection = connectionOf(options.url);
  const { Worker, UnrecoverableError } = await import("bullmq");
  const host = os.hostname();
  const work = async (job: Job<JobData, unknown, JobName>) => {
    const started = performance.now();
    const open = { ...job.data.open, ...(options.binaries ? { binaries: options.binaries } : {}) };
    const took = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
    options.log(`${job.name} ${job.data.dump}${job.attemptsStarted > 1 ? ` (attempt ${job.attemptsStarted})` : ""}`);
    try {
      if (job.name === "triage") {
        // One gdb per job slot for all its dumps, each loaded in turn (gdb/kept-gdb.ts).
        const triaged = await triageDump(job.data.dump, { ...open, keepDebugger: true });
        options.log(`triaged ${job.data.dump}: ${triaged.kind} in ${triaged.culprit.function ?? "an unknown function"} (${took()})`);
        return triaged;
      }
      const analysis = await analyzeDump(job.data.dump, open, options.analysis);
      options.log(`analysed ${job.data.dump}: ${analysis?.report ?? "no report"} (${took()})`);
      return analysis;
    } catch (error) {
      const reason = `${oneLine(error)} (on ${host})`;
      options.log(`failed ${job.data.dump}: ${reason}`);
      // A dump that cannot be read is not worth a second worker's time.
      if (error instanceof DumpError) throw new UnrecoverableError(reason);
      throw new Error(reason);
    }
  };
  const worker: Worker<JobData, unknown, JobName> = new Worker<JobData, unknown, JobName>(QUEUE_NAME, work, {
    connection,
    concurrency: options.jobs,
    lockDuration: options.stallSeconds * 1000,
    stalledInterval: options.stallSeconds * 1000,
    maxStalledCount: 1,
    autorun: false,
  });
  let connected = false;
  worker.on("error", (error) => {
    if (connected) options.log(`queue: ${oneLine(error)}`);
  });
  try {
    await ready(worker, options.url);
  } catch (error) {
    await worker.close(true).catch(() => undefined);
    throw error;
  }
  connected = true;
  options.log(`waiting for dumps on ${displayed(options.url)} (queue ${QUEUE_NAME}, ${options.jobs} at a time, on ${host})`);
  void worker.run().catch((error: unknown) => options.log(`queue: ${oneLine(error)}`));
  return {
    close: async () => {
      await worker.close();
      await endKeptGdbs();
    },
  };
}
