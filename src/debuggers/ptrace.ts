/**
 * Whether this process may attach to another with ptrace (what gcore does to dump it), read the way
 * the kernel decides: the target's owner against ours and CAP_SYS_PTRACE, Yama's ptrace_scope, a
 * tracer already attached. Pure: the facts come from /proc, read by live-process.ts; each refusal
 * says what to change.
 */

/** What /proc/PID/status says of a process, as far as attaching to it goes. */
export interface ProcessStatus {
  /** `Name:`, at most 64 characters, control characters shown as `?`. */
  name: string;
  /** The state's letter: R, S, D, T (stopped), t (tracing stop), Z (zombie), … */
  state: string;
  ppid: number | null;
  tracerPid: number;
  /** Real, effective, saved and filesystem uids. */
  uids: number[];
  /** A kernel thread has no memory of its own (no `VmSize:` line): nothing to dump. */
  hasMemory: boolean;
}

/** Who we are: our effective uid, and whether we hold CAP_SYS_PTRACE (root usually does). */
export interface Tracer {
  uid: number;
  capSysPtrace: boolean;
}

const CAP_SYS_PTRACE = 19n;
const MAX_NAME = 64;

/** Reads /proc/PID/status's text; null when it is not a process's status. */
export function readProcessStatus(text: string): ProcessStatus | null {
  const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, "m").exec(text)?.[1] ?? null;
  const state = field("State");
  const tracer = field("TracerPid");
  const uids = field("Uid");
  if (state === null || tracer === null || uids === null) return null;
  const ppid = field("PPid");
  return {
    name: (field("Name") ?? "").slice(0, MAX_NAME).replace(/[\u0000-\u001f\u007f]/g, "?"),
    state: state.slice(0, 1),
    ppid: ppid === null ? null : Number.parseInt(ppid, 10),
    tracerPid: Number.parseInt(tracer, 10) || 0,
    uids: uids.split(/\s+/).map((uid) => Number.parseInt(uid, 10)).filter(Number.isInteger),
    hasMemory: field("VmSize") !== null,
  };
}

/** Whether a `CapEff:` mask (hex, from /proc/self/status) holds CAP_SYS_PTRACE. */
export function hasCapSysPtrace(capEff: string): boolean {
  try {
    return ((BigInt(`0x${capEff.trim()}`) >> CAP_SYS_PTRACE) & 1n) === 1n;
  } catch {
    return false;
  }
}

/**
 * Why attaching to `pid` would be refused, said with what to change; null when nothing we can see
 * forbids it (gcore's own failure is then read by `attachFailure`). `scope` is
 * kernel.yama.ptrace_scope (null without Yama); `descendant`: the target is a child of ours, or
 * further down, which scope 1 allows.
 */
export function ptraceRefusal(pid: number, target: ProcessStatus, tracer: Tracer, scope: number | null, descendant: boolean, tracerName: string | null): string | null {
  const named = `process ${pid} (${target.name})`;
  if (target.tracerPid !== 0) {
    return `${named} is already traced by process ${target.tracerPid}${tracerName ? ` (${tracerName})` : ""}, a debugger or strace: a process has one tracer at a time; detach that one, then run dumpdbg again`;
  }
  if (scope === 3) {
    return `kernel.yama.ptrace_scope is 3 on this machine: no process may attach to another, and the setting cannot be lowered until the machine restarts; set it to 1 or 0 at boot (sysctl.d) to dump a live process`;
  }
  if (tracer.capSysPtrace) return null;
  const others = [...new Set(target.uids)].filter((uid) => uid !== tracer.uid);
  if (others.length > 0) {
    return `${named} runs as uid ${others[0]}, and dumpdbg as uid ${tracer.uid}: only its own user or root may attach to it; run dumpdbg as that user (sudo -u) or as root (sudo)`;
  }
  if (scope === 2) {
    return `kernel.yama.ptrace_scope is 2 on this machine: only root (CAP_SYS_PTRACE) may attach to a process; run dumpdbg with sudo, or lower it with "sudo sysctl kernel.yama.ptrace_scope=1" and dump it from its parent's session`;
  }
  if (scope === 1 && !descendant) {
    return `kernel.yama.ptrace_scope is 1 on this machine: a process may attach only to its own descendants, and ${named} is not one of dumpdbg's; run dumpdbg with sudo, or allow it for now with "sudo sysctl kernel.yama.ptrace_scope=0" (and set it back to 1 after)`;
  }
  return null;
}

/** What a gcore that wrote no dump said, read for its reason: the process went away, or ptrace was refused. */
export function attachFailure(pid: number, output: string): { gone: boolean; message: string } {
  const said = output
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !/^gcore: failed to create/.test(line));
  const ptrace = said.find((line) => /^ptrace: /.test(line) || /Could not attach/.test(line));
  const last = (ptrace ?? said.at(-1) ?? "it printed nothing").slice(0, 300);
  if (/No such process/.test(output)) return { gone: true, message: `process ${pid} ended before it could be dumped (gcore: ${last})` };
  if (/Operation not permitted|Permission denied/.test(ptrace ?? "")) {
    return {
      gone: false,
      message: `gcore could not attach to process ${pid} (${last}): the process may have made itself undumpable (a setuid program, prctl PR_SET_DUMPABLE), or a security module or container forbids ptrace; run dumpdbg as root, or give its container CAP_SYS_PTRACE (docker run --cap-add=SYS_PTRACE)`,
    };
  }
  return { gone: false, message: `gcore did not dump process ${pid}: ${last}` };
}
