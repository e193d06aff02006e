/** Signals a process sent, read from si_code before any fault rule: pure parts. */
import { describe, expect, it } from "vitest";
import { classifyCrash, sentByProcess } from "../../src/analyzers/classify.js";
import { sentMessage } from "../../src/analyzers/triage.js";

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
  });

  it("names the sender, or says the process raised it at itself, and where", () => {
    const record = { signo: 11, errno: 0, code: 0, address: null, pid: 7225, uid: 88 };
    expect(sentMessage(11, record, 4000, null)).toBe("the process was sent SIGSEGV by pid 7225 (uid 88) with kill; it was not a fault: the threads were where the signal found them");
    expect(sentMessage(11, { ...record, code: -1 }, null, null)).toMatch(/^the process was sent SIGSEGV by pid 7225 \(uid 88\) with sigqueue;/);
    const frame = { level: 1, function: "parse_header", file: "/src/p.c", line: 8, address: null, args: "", module: null } as never;
    expect(sentMessage(11, { ...record, code: -6, pid: 4000 }, 4000, frame)).toBe("the process raised SIGSEGV at itself in parse_header (p.c:8) (tgkill, as raise() and pthread_kill() do); it was not a fault");
  });
});
