/**
 * One bounded HTTP GET against a symbol server: a timeout for the whole request (connect, first
 * byte and body), the fetch's deadline, a size cap, and a bounded number of redirects. A failure
 * is a short word the user can read in a summary (`404`, `timeout`, `too large`), never a throw;
 * only the machine refusing the cache's file (a full disk, a quota, a read-only or forbidden folder)
 * ends the run, as a StorageError naming the file.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

import { asStorageError, StorageError } from "../../storage-errors.js";

/** The way out when the symbol cache cannot be written. */
const CACHE_ELSEWHERE = "or choose another symbol cache (--symbols-cache DIR)";

export interface RequestLimits {
  /** Connect, first byte and body together. */
  timeoutMs: number;
  /** Aborts when the whole fetch's deadline passes. */
  deadline: AbortSignal;
  maxBytes: number;
  maxRedirects: number;
}

/** What went wrong with one request: an HTTP status (`404`, `500`) or a word. */
export type RequestFailure = string;

export type Downloaded = { ok: true; temp: string; bytes: number } | { ok: false; failure: RequestFailure };
export type BodyStart = { ok: true; bytes: Buffer; complete: boolean } | { ok: false; failure: RequestFailure };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Streams a file into a temporary file beside `destination` (same folder, so the caller's rename
 * is atomic). A failed or oversized download leaves nothing behind.
 */
export async function downloadBeside(url: string, destination: string, limits: RequestLimits): Promise<Downloaded> {
  const temp = join(dirname(destination), `.${basename(destination)}.${process.pid}.${randomBytes(4).toString("hex")}.part`);
  let kept = false;
  try {
    const result = await withResponse(url, limits, async (body, declared) => {
      // Folders and the temporary file appear only once a server has the file: a miss leaves no trace.
      await intoCache(destination, () => mkdir(dirname(destination), { recursive: true }));
      const file = await intoCache(destination, () => open(temp, "wx"));
      try {
        let bytes = 0;
        for await (const chunk of body) {
          bytes += chunk.length;
          if (bytes > limits.maxBytes) return { ok: false as const, failure: "too large" };
          await intoCache(destination, () => file.write(chunk));
        }
        if (declared !== null && bytes !== declared) return { ok: false as const, failure: "truncated" };
        return { ok: true as const, temp, bytes };
      } finally {
        await file.close();
      }
    });
    kept = result.ok;
    return result;
  } finally {
    if (!kept) await rm(temp, { force: true });
  }
}

/** Writes toward `destination` in the cache; the machine's refusal is a StorageError naming it. */
export async function intoCache<T>(destination: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asStorageError(error, destination, { elsewhere: CACHE_ELSEWHERE });
  }
}

/** The first `length` bytes of a file (a CAB's magic, a small `file.ptr`), and whether that was all of it. */
export async function readStart(url: string, length: number, limits: RequestLimits): Promise<BodyStart> {
  // Only `length` bytes are ever read, so a large declared size (a big .pd_) is no reason to stop.
  return withResponse(url, { ...limits, maxBytes: Number.POSITIVE_INFINITY }, async (body) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of body) {
      chunks.push(chunk);
      bytes += chunk.length;
      // Leaving the loop cancels the rest of the body.
      if (bytes > length) return { ok: true as const, bytes: Buffer.concat(chunks).subarray(0, length), complete: false };
    }
    return { ok: true as const, bytes: Buffer.concat(chunks), complete: true };
  });
}

type Body = AsyncIterable<Buffer>;

/** Opens `url` (following redirects), hands a successful body to `read`, and maps every failure to a word. */
async function withResponse<T extends { ok: boolean }>(url: string, limits: RequestLimits, read: (body: Body, declared: number | null) => Promise<T>): Promise<T | { ok: false; failure: RequestFailure }> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const signal = AbortSignal.any([timeout, limits.deadline]);
  let phase: "connect" | "body" = "connect";
  try {
    const response = await follow(url, signal, limits.maxRedirects);
    if (typeof response === "string") return { ok: false, failure: response };
    const declared = contentLength(response.headers.get("content-length"));
    if (declared !== null && declared > limits.maxBytes) {
      await response.body?.cancel();
      return { ok: false, failure: "too large" };
    }
    phase = "body";
    return await read(chunksOf(response), declared);
  } catch (error) {
    if (error instanceof StorageError) throw error;
    if (timeout.aborted) return { ok: false, failure: "timeout" };
    if (limits.deadline.aborted) return { ok: false, failure: "deadline passed" };
    return { ok: false, failure: phase === "body" ? "truncated" : networkFailure(error) };
  }
}

/** The response at the end of at most `maxRedirects` redirects, or why there is none. */
async function follow(url: string, signal: AbortSignal, maxRedirects: number): Promise<Response | RequestFailure> {
  let current = url;
  for (let hop = 0; hop <= maxRedirects; hop++) {
    const response = await fetch(current, { redirect: "manual", signal });
    if (REDIRECTS.has(response.status)) {
      await response.body?.cancel();
      const location = response.headers.get("location");
      const next = location ? URL.parse(location, current) : null;
      if (!next || (next.protocol !== "http:" && next.protocol !== "https:")) return "bad redirect";
      current = next.href;
      continue;
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      return String(response.status);
    }
    return response;
  }
  return "too many redirects";
}

async function* chunksOf(response: Response): Body {
  if (!response.body) return;
  for await (const chunk of response.body) yield Buffer.from(chunk);
}

function contentLength(header: string | null): number | null {
  return header !== null && /^\d+$/.test(header) ? Number(header) : null;
}

/** undici reports the socket's error as the cause of a bare `fetch failed`. */
function networkFailure(error: unknown): RequestFailure {
  const code = (error as { cause?: { code?: string } }).cause?.code;
  if (code === "ECONNREFUSED") return "refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "unknown host";
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET") return "connection reset";
  return code ? `network error (${code})` : "network error";
}
