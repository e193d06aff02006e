/**
 * systemd-coredump's local store: the core `--coredump [PID|NAME]` means, chosen as coredumpctl
 * chooses (the newest first), from `coredumpctl --json=short list` when the journal knows of any
 * crash and from the store's folder otherwise; and the extended attributes systemd tags each core
 * with, read with getfattr (Debian's attr package): Node has no call for them.
 */
import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

import { parseCoredumpAttributes, parseCoredumpctlJson, parseCoredumpName, type CoredumpAttributes, type JournalCoredump } from "./dumpfile/coredump-name.js";
import { DumpError } from "./dump.js";

const run = promisify(execFile);
const QUERY_TIMEOUT_MS = 5000;
/** The store's folder, unless DUMPDBG_COREDUMP_DIR names another (a copy of it, a test's). */
const STORE = "/var/lib/systemd/coredump";
/** A store listing this long is read no further. */
const MAX_STORE_FILES = 100_000;

export function coredumpFolder(): string {
  return process.env.DUMPDBG_COREDUMP_DIR || STORE;
}

/** The `user.coredump.*` attributes of a file; null without getfattr or when it has none. */
export async function readCoredumpAttributes(path: string): Promise<CoredumpAttributes | null> {
  let stdout: string;
  try {
    ({ stdout } = await run("getfattr", ["--absolute-names", "-d", "-m", "^user\\.coredump\\.", "-e", "hex", "--", path], { encoding: "utf8", timeout: QUERY_TIMEOUT_MS, maxBuffer: 1 << 16 }));
  } catch {
    return null;
  }
  const attributes = parseCoredumpAttributes(stdout);
  return Object.values(attributes).some((v) => v !== null) ? attributes : null;
}

/** One core of the store, as found. */
interface StoredCore {
  path: string;
  pid: number;
  comm: string;
  timestampUs: number;
}

/**
 * The newest core of the store that matches `selector` (a pid, or a program's name or path; any
 * when none), or a DumpError saying in one line that there is none.
 */
export async function pickStoredCore(selector: string | undefined): Promise<string> {
  const folder = coredumpFolder();
  const stored = await storeFiles(folder);
  const journal = await journalEntries(selector);
  if (journal.length > 0) {
    const newest = journal.sort((a, b) => b.timestampUs - a.timestampUs)[0]!;
    const file = stored.find((s) => s.pid === newest.pid && Math.abs(s.timestampUs - newest.timestampUs) < 60_000_000) ?? stored.find((s) => s.pid === newest.pid);
    if (file) return file.path;
    throw new DumpError(`the newest crash${selectorText(selector)} the journal knows (pid ${newest.pid}${newest.exe ? `, ${newest.exe}` : ""}) has no core in ${folder} (coredumpctl says its core is ${newest.corefile})`);
  }
  const matching = stored.filter((s) => matches(s, selector)).sort((a, b) => b.timestampUs - a.timestampUs);
  const newest = matching[0];
  if (newest) return newest.path;
  throw new DumpError(`no core${selectorText(selector)} in systemd-coredump's store ${folder}${process.env.DUMPDBG_COREDUMP_DIR ? " (DUMPDBG_COREDUMP_DIR)" : ""}`);
}

function selectorText(selector: string | undefined): string {
  return selector === undefined ? "" : /^\d+$/.test(selector) ? ` of pid ${selector}` : ` of ${selector}`;
}

function matches(core: StoredCore, selector: string | undefined): boolean {
  if (selector === undefined) return true;
  if (/^\d+$/.test(selector)) return core.pid === Number(selector);
  // The kernel keeps 15 characters of a program's name.
  const name = selector.split("/").at(-1) ?? selector;
  return core.comm === name || core.comm === name.slice(0, 15);
}

/** The store's files with systemd's names; none when the folder cannot be listed. */
async function storeFiles(folder: string): Promise<StoredCore[]> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return [];
  }
  return names.slice(0, MAX_STORE_FILES).flatMap((name) => {
    const parsed = parseCoredumpName(name);
    return parsed ? [{ path: join(folder, name), pid: parsed.pid, comm: parsed.comm, timestampUs: parsed.timestampUs }] : [];
  });
}

/** What the journal lists (DUMPDBG_COREDUMPCTL names the binary); none without coredumpctl or entries. */
async function journalEntries(selector: string | undefined): Promise<JournalCoredump[]> {
  const binary = process.env.DUMPDBG_COREDUMPCTL || "coredumpctl";
  try {
    const { stdout } = await run(binary, ["--json=short", "--no-pager", "--no-legend", "list", ...(selector !== undefined ? [selector] : [])], { encoding: "utf8", timeout: QUERY_TIMEOUT_MS, maxBuffer: 16 << 20 });
    return parseCoredumpctlJson(stdout);
  } catch {
    return [];
  }
}
