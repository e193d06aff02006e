/** Signals a process sent, read from si_code before any fault rule: pure parts. */
import { describe, expect, it } from "vitest";
import { classifyCrash } from "../../src/analyzers/triage/classify.js";
import type { SignalRecord } from "../../src/debuggers/probe.js";
import { sentMessage } from "../../src/analyzers/triage/explain.js";
import { originOf } from "../../src/analyzers/triage/stop.js";
import { sentByProcess, signalCodeName } from "../../src/analyzers/signals.js";
import { syscallNumberBefore, SYS_TGKILL } from "../../src/analyzers/x86-64.js";

const facts = (signal: number, code: number) => ({
  signal,
  siginfo: { signo: signal, errno: 0, code, address: "0x5800001c39", pid: 7225, uid: 88 },
  pc: 0x401136n,
  pcInCode: true,
  frames: [],
  stackExhausted: false,
  abortMessage: null,
  deadlocked: false,
  instruction: "mov (%rax),%eax",
});

describe("a signal sent by a process", () => {
  it("is told by its code: kill, sigqueue and tgkill, not the kernel", () => {
    expect([0, -1, -6].map((code) => sentByProcess({ code }))).toEqual([true, true, true]);
    expect([1, 2, 0x80].map((code) => sentByProcess({ code }))).toEqual([false, false, false]);
    expect(sentByProcess(null)).toBe(false);
  });

  it("is never classified as a fault, whatever its 'address' holds (the sender's pid and uid)", () => {
    for (const signal of [4, 7, 8, 11]) expect(classifyCrash(facts(signal, 0))).toBe("unknown");
    expect(classifyCrash(facts(11, 1))).toBe("invalid-memory-access");
    // kill -ABRT from outside is no abort; abort() itself (tgkill from the process) is read from the stack.
    expect(classifyCrash(facts(6, 0))).toBe("unknown");
    expect(classifyCrash(facts(6, -6))).not.toBe("unknown");
    // The program's own kill(getpid(), SIGABRT) is an abort like abort(): no names on the stack make it less of one.
    expect(classifyCrash({ ...facts(6, 0), raisedBySelf: true })).toBe("abort");
    expect(classifyCrash({ ...facts(11, 0), raisedBySelf: true })).toBe("unknown");
  });

  it("reads the system call a thread stopped after from the code bytes before its pc: tgkill loaded as a constant", () => {
    // glibc 2.36's __pthread_kill_implementation: mov %r12d,%edx; mov %ebx,%esi; mov %eax,%edi; mov $0xea,%eax; syscall
    const pthreadKill = Uint8Array.from([0x44, 0x89, 0xe2, 0x89, 0xde, 0x89, 0xc7, 0xb8, 0xea, 0x00, 0x00, 0x00, 0x0f, 0x05]);
    expect(syscallNumberBefore(pthreadKill)).toBe(SYS_TGKILL);
    // kill(2) is no tgkill; a syscall whose number came from a register says nothing; nor do bytes that end elsewhere.
    expect(syscallNumberBefore(Uint8Array.from([0xb8, 0x3e, 0x00, 0x00, 0x00, 0x0f, 0x05]))).toBe(0x3e);
    expect(syscallNumberBefore(Uint8Array.from([0x90, 0x90, 0x48, 0x89, 0xf8, 0x0f, 0x05]))).toBeNull();
    expect(syscallNumberBefore(pthreadKill.subarray(0, 12))).toBeNull();
    expect(syscallNumberBefore(Uint8Array.from([0x0f, 0x05]))).toBeNull();
  });

  it("names the sender, or says the process raised it at itself, and where, from the origin the record decides", () => {
    const record = { signo: 11, errno: 0, code: 0, address: null, pid: 7225, uid: 88 };
    const told = (siginfo: typeof record, pid: number | null, culprit = { function: null as string | null, file: null as string | null, line: null as number | null }) =>
      sentMessage({ signal: "SIGSEGV", signalCode: signalCodeName(11, siginfo.code), origin: originOf({ signal: 11, exception: null, siginfo, stopped: false }, { pid, lwps: [] }), culprit });
    expect(told(record, 4000)).toBe("the process was sent SIGSEGV by pid 7225 (uid 88) with kill; it was not a fault: the threads were where the signal found them");
    expect(told({ ...record, code: -1 }, null)).toMatch(/^the process was sent SIGSEGV by pid 7225 \(uid 88\) with sigqueue;/);
    expect(told({ ...record, code: -6, pid: 4000 }, 4000, { function: "parse_header", file: "/src/p.c", line: 8 })).toBe(
      "the process raised SIGSEGV at itself in parse_header (p.c:8) (tgkill, as raise() and pthread_kill() do); it was not a fault",
    );
  });

  it("gives the origin: sent with the sender, raised by the process itself, a fault by its code, requested without a signal", () => {
    const sent: SignalRecord = { signo: 15, errno: 0, code: 0, address: null, pid: 7225, uid: 88 };
    const stop = (signal: number | null, siginfo: SignalRecord | null, stopped = false) => ({ signal, exception: null, siginfo, stopped });
    expect(originOf(stop(15, sent), { pid: 4000, lwps: [4000, 4001] })).toMatchObject({ type: "sent", sender: { pid: 7225, uid: 88 } });
    expect(originOf(stop(15, sent), { pid: 4000, lwps: [4000, 4001] }).evidence).toMatch(/SI_USER \(kill\) from pid 7225 \(uid 88\), not the process's own \(4000\)/);
    expect(originOf(stop(6, { ...sent, code: -6, pid: 4000 }), { pid: 4000, lwps: [] })).toMatchObject({ type: "raised", sender: { pid: 4000 } });
    expect(originOf(stop(11, { ...sent, signo: 11, code: 1, address: "0x20", pid: null }), { pid: 4000, lwps: [] })).toMatchObject({ type: "fault", sender: null });
    expect(originOf(stop(null, null, true), { pid: 4000, lwps: [] })).toMatchObject({ type: "requested", sender: null, evidence: expect.stringMatching(/SIGSTOP/) });
    expect(originOf(stop(null, null), { pid: null, lwps: [] }).evidence).toMatch(/no signal and no exception/);
    // Without the process's pid in the dump, its threads say who it is: abort() from the main thread is raised, a kill from elsewhere sent.
    expect(originOf(stop(6, { ...sent, code: -6, pid: 4000 }), { pid: null, lwps: [4000, 4001] })).toMatchObject({ type: "raised", evidence: expect.stringMatching(/one of the dump's own threads/) });
    expect(originOf(stop(15, sent), { pid: null, lwps: [4000, 4001] })).toMatchObject({ type: "sent", evidence: expect.stringMatching(/none of the dump's threads/) });
    const exception = (code: string) => originOf({ signal: null, exception: { type: "exception", code, address: "0x1", parameters: [], thread: null } as never, siginfo: null, stopped: false }, { pid: null, lwps: [] }).type;
    expect(["0xc0000005", "0xc0000409", "0xe06d7363", "0x80000003"].map(exception)).toEqual(["fault", "raised", "exception", "fault"]);
  });
});
