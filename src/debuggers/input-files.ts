/**
 * Paths a user, a batch or an MCP client gives, checked before anything opens them. A FIFO nobody
 * writes, a terminal or a device would block a read for ever, and `/dev/zero` or `/proc/self/mem`
 * look like files of size 0 or infinity: each is named for what it is, in one line, without ever
 * being opened. The checks run off the main thread (the fs promises API), so a stalled filesystem
 * cannot keep a signal handler from running; a path that does not answer in time is an error too.
 */
import type { Stats } from "node:fs";
import { stat, statfs } from "node:fs/promises";

import { specialFileKind } from "./dumpfile/index.js";

/** The smallest file that can be a dump: a minidump's header is 32 bytes, an ELF64 header 64. */
export const MIN_DUMP_BYTES = 32;
/** How long a stat may take before the path is given up on (a hung network filesystem). */
const STAT_TIMEOUT_MS = 10_000;

/** Filesystems whose files are the kernel's views, not data: their sizes say nothing. */
const KERNEL_FILESYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, "/proc"],
  [0x62656572, "/sys"],
  [0x64626720, "debugfs"],
  [0x74726163, "tracefs"],
  [0x1cd1, "devpts"],
]);

/** Why a path cannot be read, from the error a stat or open gave. */
export function unreadableReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case "ENOENT":
      return "does not exist";
    case "EACCES":
    case "EPERM":
      return "cannot be read: permission denied";
    case "ELOOP":
      return "is a symbolic link that loops";
    case "ENOTDIR":
      return "does not exist (a part of its path is not a folder)";
    case "ENAMETOOLONG":
      return "is too long a path";
    default:
      return `cannot be read: ${code ?? (error as Error).message}`;
  }
}

export type InputCheck = { ok: true; stats: Stats } | { ok: false; reason: string };

/**
 * What a path is, without opening it: a regular file (symlinks followed; the kernel bounds their
 * chains), or the one-line reason it cannot be a dump ("is a FIFO (named pipe)").
 */
/** What no path given to a debugger may hold. */
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** A path as a one-line message shows it: quoted and escaped when it holds a control character. */
export function shownPath(path: string): string {
  return CONTROL_CHARACTER.test(path) ? JSON.stringify(path) : path;
}

export async function checkInputFile(path: string, options: { minBytes?: number } = {}): Promise<InputCheck> {
  // A debugger is given paths on its command lines, where a newline would end one and start another.
  if (CONTROL_CHARACTER.test(path)) return { ok: false, reason: "has a control character (a newline, a tab) in its name, which no debugger can be given" };
  let stats: Stats;
  try {
    stats = await withTimeout(stat(path), STAT_TIMEOUT_MS, `did not answer within ${STAT_TIMEOUT_MS / 1000} s (a stalled filesystem?)`);
  } catch (error) {
    return { ok: false, reason: error instanceof StatTimeout ? error.message : unreadableReason(error) };
  }
  const special = specialFileKind(stats);
  if (special) return { ok: false, reason: `is ${special}` };
  const kernel = await kernelFilesystem(path);
  if (kernel) return { ok: false, reason: `is a file of the kernel's ${kernel} filesystem` };
  const minBytes = options.minBytes ?? 1;
  if (stats.size === 0) return { ok: false, reason: "is empty" };
  if (stats.size < minBytes) return { ok: false, reason: `is ${stats.size} bytes, too small to be a crash dump` };
  return { ok: true, stats };
}

async function kernelFilesystem(path: string): Promise<string | null> {
  try {
    const info = await withTimeout(statfs(path), STAT_TIMEOUT_MS, "statfs timed out");
    return KERNEL_FILESYSTEMS.get(Number(info.type)) ?? null;
  } catch {
    return null;
  }
}

class StatTimeout extends Error {}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StatTimeout(message)), ms);
    timer.unref();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
