/**
 * The gdbs a batch keeps between its dumps. Starting gdb (its Python, its libraries, exec and the
 * kernel's teardown) is two thirds of a small core's triage, and it is the same for every dump. A
 * session opened with `keep` hands its gdb back as it closes, with the dump unloaded, when every
 * command it ran was one the safety policy allows: those change nothing a later dump's session would
 * see, but gdb's value history (the `$N` a print is numbered with). The next session started with
 * the same binary and arguments takes it; the command ends those left (`endKeptGdbs`).
 */
import type { DebuggerProcess } from "../process.js";
import type { MiLogTail } from "./mi-log.js";

/** Where a gdb's output goes: the session that has it (gdb-session.ts), or nowhere while it waits. */
export interface GdbRoute {
  /** A line gdb wrote to stdout. */
  onLine(line: string): void;
  /** A line of the MI stream it writes to its log file, once the dump is loaded. */
  onLog(line: string): void;
  onStderr(text: string): void;
}

interface KeptGdb {
  binary: string;
  args: string[];
  proc: DebuggerProcess;
  route: GdbRoute;
  /** The tail of the log file gdb goes on writing its MI stream to. */
  tail: MiLogTail;
}

const kept: KeptGdb[] = [];
/** The gdbs whose end is already watched: one is kept again after every dump it reads. */
const watched = new WeakSet<DebuggerProcess>();

/** Keeps a gdb whose dump its session unloaded; what it prints meanwhile is nobody's. */
export function keepGdb(binary: string, args: string[], proc: DebuggerProcess, route: GdbRoute, tail: MiLogTail): void {
  route.onLine = route.onLog = route.onStderr = () => undefined;
  kept.push({ binary, args, proc, route, tail });
  if (watched.has(proc)) return;
  watched.add(proc);
  // One that dies while it waits leaves the list, its tail closed (a session that has it closes it too).
  void proc.exited.then(() => {
    const at = kept.findIndex((gdb) => gdb.proc === proc);
    if (at >= 0) kept.splice(at, 1);
    tail.close();
  });
}

/** A kept gdb started with exactly this binary and these arguments; null when there is none. */
export function takeKeptGdb(binary: string, args: readonly string[]): { proc: DebuggerProcess; route: GdbRoute; tail: MiLogTail } | null {
  const at = kept.findIndex((gdb) => gdb.binary === binary && gdb.args.length === args.length && gdb.args.every((arg, i) => arg === args[i]));
  if (at < 0) return null;
  const [gdb] = kept.splice(at, 1);
  return gdb ? { proc: gdb.proc, route: gdb.route, tail: gdb.tail } : null;
}

/** Ends every kept gdb: the batch is over (or stopped), and an idle child would keep Node waiting. */
export async function endKeptGdbs(): Promise<void> {
  const all = kept.splice(0);
  for (const gdb of all) {
    gdb.tail.close();
    gdb.proc.kill();
  }
  await Promise.all(all.map((gdb) => gdb.proc.exited));
}
