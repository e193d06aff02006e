/**
 * Whether dumpdbg may attach to a live process, decided as the kernel decides it, on /proc's text
 * as the kernel writes it: each refusal says what to change; gcore's own failures are read for
 * their reason.
 */
import { describe, expect, it } from "vitest";

import { attachFailure, hasCapSysPtrace, ptraceRefusal, readProcessStatus, type ProcessStatus } from "../../src/debuggers/ptrace.js";

/** /proc/PID/status of a sleeping service, trimmed to the lines around those read. */
const STATUS = [
  "Name:\torderd",
  "Umask:\t0022",
  "State:\tS (sleeping)",
  "Tgid:\t4242",
  "Pid:\t4242",
  "PPid:\t1",
  "TracerPid:\t0",
  "Uid:\t1000\t1000\t1000\t1000",
  "Gid:\t1000\t1000\t1000\t1000",
  "VmSize:\t  223744 kB",
  "CapEff:\t0000000000000000",
].join("\n");

const service = readProcessStatus(STATUS)!;
const user = { uid: 1000, capSysPtrace: false };
const root = { uid: 0, capSysPtrace: true };

describe("readProcessStatus", () => {
  it("reads the name, state, parent, tracer, owners and whether there is memory to dump", () => {
    expect(service).toEqual({ name: "orderd", state: "S", ppid: 1, tracerPid: 0, uids: [1000, 1000, 1000, 1000], hasMemory: true });
  });

  it("tells a kernel thread, a traced process and a name with control characters", () => {
    const kthread = readProcessStatus("Name:\tkworker/0:1\nState:\tI (idle)\nPPid:\t2\nTracerPid:\t0\nUid:\t0\t0\t0\t0\n");
    expect(kthread).toMatchObject({ state: "I", hasMemory: false });
    const traced = readProcessStatus(STATUS.replace("TracerPid:\t0", "TracerPid:\t777").replace("State:\tS (sleeping)", "State:\tt (tracing stop)").replace("orderd", `order\u001b[2Jd${"x".repeat(100)}`));
    expect(traced).toMatchObject({ state: "t", tracerPid: 777 });
    expect(traced?.name).toMatch(/^order\?\[2Jdx+$/);
    expect(traced?.name).toHaveLength(64);
    expect(readProcessStatus("not a status")).toBeNull();
  });
});

describe("hasCapSysPtrace", () => {
  it("reads bit 19 of the effective capabilities", () => {
    expect(hasCapSysPtrace("000001ffffffffff")).toBe(true);
    expect(hasCapSysPtrace("0000000000080000")).toBe(true);
    expect(hasCapSysPtrace("0000000000000000")).toBe(false);
    expect(hasCapSysPtrace("zz")).toBe(false);
  });
});

describe("ptraceRefusal", () => {
  const refusal = (target: ProcessStatus, tracer: typeof user, scope: number | null, descendant = false) => ptraceRefusal(4242, target, tracer, scope, descendant, target.tracerPid ? "strace" : null);

  it("lets the same user attach where Yama allows it, and root anywhere but scope 3", () => {
    expect(refusal(service, user, null)).toBeNull();
    expect(refusal(service, user, 0)).toBeNull();
    expect(refusal(service, user, 1, true)).toBeNull();
    for (const scope of [null, 0, 1, 2]) expect(refusal({ ...service, uids: [0, 0, 0, 0] }, root, scope)).toBeNull();
  });

  it("refuses another user's process, naming both users and what to run", () => {
    expect(refusal({ ...service, uids: [0, 0, 0, 0] }, user, 0)).toBe(
      "process 4242 (orderd) runs as uid 0, and dumpdbg as uid 1000: only its own user or root may attach to it; run dumpdbg as that user (sudo -u) or as root (sudo)",
    );
    // A setuid program keeps its owner among its saved uids.
    expect(refusal({ ...service, uids: [1000, 0, 0, 0] }, user, 0)).toMatch(/runs as uid 0/);
  });

  it("says which ptrace_scope forbids it and how to allow it", () => {
    expect(refusal(service, user, 1)).toMatch(/^kernel\.yama\.ptrace_scope is 1 on this machine: a process may attach only to its own descendants, .*run dumpdbg with sudo, or allow it for now with "sudo sysctl kernel\.yama\.ptrace_scope=0"/);
    expect(refusal(service, user, 2)).toMatch(/^kernel\.yama\.ptrace_scope is 2 on this machine: only root \(CAP_SYS_PTRACE\) may attach/);
    expect(refusal(service, root, 3)).toMatch(/^kernel\.yama\.ptrace_scope is 3 on this machine: no process may attach to another, and the setting cannot be lowered until the machine restarts/);
  });

  it("refuses a process another tracer holds, naming it", () => {
    expect(refusal({ ...service, tracerPid: 777 }, root, 0)).toBe(
      "process 4242 (orderd) is already traced by process 777 (strace), a debugger or strace: a process has one tracer at a time; detach that one, then run dumpdbg again",
    );
  });
});

describe("attachFailure", () => {
  it("reads gdb's ptrace error from what gcore printed", () => {
    const refused = attachFailure(4242, "ptrace: Operation not permitted.\nYou can't do that without a process to debug.\nThe program is not being run.\ngcore: failed to create core.4242\n");
    expect(refused).toEqual({
      gone: false,
      message: expect.stringMatching(/^gcore could not attach to process 4242 \(ptrace: Operation not permitted\.\): .*CAP_SYS_PTRACE/),
    });
    expect(attachFailure(4242, "ptrace: No such process.\ngcore: failed to create core.4242\n")).toEqual({ gone: true, message: "process 4242 ended before it could be dumped (gcore: ptrace: No such process.)" });
    expect(attachFailure(4242, "warning: cannot write core.4242: No space left on device\ngcore: failed to create core.4242\n").message).toBe("gcore did not dump process 4242: warning: cannot write core.4242: No space left on device");
    expect(attachFailure(4242, "").message).toBe("gcore did not dump process 4242: it printed nothing");
  });
});
