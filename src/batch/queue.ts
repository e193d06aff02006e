/**
 * Batch work beyond one machine: each dump is a job on a BullMQ queue in Redis; `dumpdbg worker`s,
 * on any machines that see the same paths, take the jobs and post their results, which the batch
 * collects. A job is named by what it reads (path, size, time, settings), so a rerun finds the
 * results of the last one. BullMQ is loaded only when a queue is named.
 */
import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import type { Job, Queue, QueueEvents } from "bullmq";
import type { Triaged } from "./grouping.js";
import type { GroupAnalysis, OpenSettings } from "./work.js";

export const QUEUE_NAME = "dumpdbg-batch";

/** What a job carries: the dump and how to open it; the debugger binaries are each worker's own. */
export interface JobData {
  dump: string;
  open: Omit<OpenSettings, "binaries">;
}

export type JobName = "triage" | "analyze";

/** BullMQ's own reason for a job whose workers died under it once too often. */
const STALLED = /stalled more than allowable limit/;

/** A job is kept this long after it ends, so a rerun finds its result. */
const KEEP_SECONDS = 7 * 24 * 3600;

/** The queue could not be reached or used: a one-line reason. */
export class QueueError extends Error {
  override name = "QueueError";
}

/** The queue's address is not one: a usage error, unlike a queue that cannot be reached. */
export class QueueAddressError extends QueueError {
  override name = "QueueAddressError";
}

/** The batch was stopped before any worker took this dump. */
export class NotStarted extends Error {
  override name = "NotStarted";
}

/** The connection settings BullMQ wants for `redis://[user:pass@]host:port[/db]`. */
export function connectionOf(url: string): { url: string; maxRetriesPerRequest: null } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new QueueAddressError(`--queue must be a redis://HOST:PORT address, got "${url}"`);
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") throw new QueueAddressError(`--queue must be a redis://HOST:PORT address, got "${url}"`);
  return { url, maxRetriesPerRequest: null };
}

/** The address as it can be printed: without a password. */
export function displayed(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return url;
  }
}

/** Waits for a BullMQ client to reach Redis, or gives up with a one-line reason. */
export async function ready(client: { waitUntilReady(): Promise<unknown> }, url: string, seconds = 10): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new QueueError(`cannot reach the queue at ${displayed(url)} (no answer in ${seconds} s); is redis-server running there?`)), seconds * 1000);
  });
  try {
    await Promise.race([client.waitUntilReady(), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The batch's side of the queue: puts jobs on it and waits for their results. */
export class RemoteWork {
  /** Resolves when the batch is stopped (one listener for all the jobs waited on). */
  private readonly stopped: Promise<"stopped"> | null;

  private constructor(
    private readonly url: string,
    private readonly queue: Queue<JobData, unknown, JobName>,
    private readonly events: QueueEvents,
    signal: AbortSignal | undefined,
  ) {
    // Each job waited on listens for the queue's closing: hundreds at once is by design.
    queue.setMaxListeners(0);
    events.setMaxListeners(0);
    this.stopped = signal
      ? new Promise((resolve) => {
          if (signal.aborted) resolve("stopped");
          else signal.addEventListener("abort", () => resolve("stopped"), { once: true });
        })
      : null;
  }

  static async connect(url: string, signal?: AbortSignal): Promise<RemoteWork> {
    const connection = connectionOf(url);
    const { Queue, QueueEvents } = await import("bullmq");
    const queue = new Queue<JobData, unknown, JobName>(QUEUE_NAME, { connection });
    const events = new QueueEvents(QUEUE_NAME, { connection });
    // Until the first connection, errors are the reason `ready` gives; after it, ioredis reconnects.
    queue.on("error", () => undefined);
    events.on("error", () => undefined);
    try {
      await ready(queue, url);
      await ready(events, url);
    } catch (error) {
      await Promise.allSettled([queue.close(), events.close()]);
      throw error;
    }
    return new RemoteWork(url, queue, events, signal);
  }

  triage(dump: string, open: OpenSettings): Promise<Triaged> {
    return this.run<Triaged>("triage", dump, open);
  }

  analyze(dump: string, open: OpenSettings): Promise<GroupAnalysis | null> {
    return this.run<GroupAnalysis | null>("analyze", dump, open);
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.events.close(), this.queue.close()]);
  }

  private async run<T>(name: JobName, dump: string, open: OpenSettings): Promise<T> {
    const { binaries: _own, ...portable } = open;
    const data: JobData = { dump, open: portable };
    let job: Job<JobData, unknown, JobName>;
    try {
      job = await this.queue.add(name, data, {
        jobId: jobIdOf(name, data),
        // A dump whose triage throws is tried once more, on whichever worker is free; a dump that
        // is not readable is not (the worker says so); a worker that dies under it counts as a stall.
        attempts: 2,
        removeOnComplete: { age: KEEP_SECONDS },
        removeOnFail: { age: KEEP_SECONDS },
      });
      // The same job from an earlier batch that failed is tried again: the cause may be gone.
      if ((await job.getState()) === "failed") await job.retry("failed");
    } catch (error) {
      throw new QueueError(`the queue at ${displayed(this.url)} refused the job: ${error instanceof Error ? error.message : String(error)}`);
    }
    const finished = job.waitUntilFinished(this.events).catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      throw STALLED.test(reason) ? new Error("a worker died while reading this dump, twice (it crashed or was killed); not tried again") : new Error(reason);
    });
    if (!this.stopped) return (await finished) as T;
    const first = await Promise.race([finished, this.stopped]);
    if (first !== "stopped") return first as T;
    // Stopped: a job no worker has taken is taken back; one in hand is waited for, as locally.
    const state = await job.getState().catch(() => "unknown");
    if (state === "waiting" || state === "prioritized" || state === "delayed") {
      const removed = await job.remove().then(
        () => true,
        () => false,
      );
      if (removed) {
        finished.catch(() => undefined);
        throw new NotStarted();
      }
    }
    return (await finished) as T;
  }
}

/** A job is named by what it reads: the same dump, unchanged, with the same settings is the same job. */
export function jobIdOf(name: JobName, data: JobData): string {
  let stamp = "";
  try {
    const info = statSync(data.dump);
    stamp = `${info.size}:${info.mtimeMs}`;
  } catch {
    // A dump gone by now: the worker says so.
  }
  const hash = createHash("sha256").update(JSON.stringify([name, data.dump, stamp, data.open])).digest("hex").slice(0, 32);
  return `${name}-${hash}`;
}
