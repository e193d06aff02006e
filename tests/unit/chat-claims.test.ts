/**
 * Claims in chat questions and their checks against measured facts. The facts are those of the
 * thread-crash fixture (a worker thread dereferences a null pointer): its threads and the crashing
 * thread's backtrace as gdb 13 showed them for its core, read into the debugger-neutral model.
 */
import { describe, expect, it } from "vitest";
import { checkClaim, findClaims, isNullPointer, nullClaimFinding, type Claim, type Measurements } from "../../src/agents/chat/claims.js";
import type { Frame, ThreadSummary } from "../../src/debuggers/model.js";
import type { Crash } from "../../src/report/schema.js";

const FUTEX = "./nptl/futex-internal.c";
const THREADS: ThreadSummary[] = [
  {
    id: 1,
    lwp: 21901,
    name: null,
    current: true,
    frame: { address: null, function: "process_job", args: "job=0x7fb6f6b1ceb0", file: "/src/thread-crash.c", line: 28, from: null },
  },
  {
    id: 2,
    lwp: 21897,
    name: null,
    current: false,
    frame: { address: null, function: "__futex_abstimed_wait_common64", args: "private=128, cancel=true, abstime=0x0, op=265, expected=21898, futex_word=0x7fb6f7b1f990", file: FUTEX, line: 57, from: null },
  },
  {
    id: 3,
    lwp: 21902,
    name: null,
    current: false,
    frame: { address: null, function: "__futex_abstimed_wait_common64", args: "private=0, cancel=true, abstime=0x0, op=393, expected=0, futex_word=0x55bcf746b0e8 <job_queued+40>", file: FUTEX, line: 57, from: null },
  },
];

const FRAMES: Frame[] = [
  { level: 0, address: null, function: "process_job", args: "job=0x7fb6f6b1ceb0", file: "/src/thread-crash.c", line: 28, from: null },
  { level: 1, address: "0x55bcf746829a", function: "worker_main", args: "arg=0x7ffd072826e8", file: "/src/thread-crash.c", line: 48, from: null },
  { level: 2, address: "0x7fb6f7bac1f5", function: "start_thread", args: "arg=<optimized out>", file: "./nptl/pthread_create.c", line: 442, from: null },
  { level: 3, address: "0x7fb6f7c2c8ec", function: "clone3", args: "", file: "../sysdeps/unix/sysv/linux/x86_64/clone3.S", line: 81, from: null },
];

const CRASH: Crash = {
  kind: "null-dereference",
  signal: "SIGSEGV",
  signalCode: "SEGV_MAPERR",
  faultAddress: "0x40",
  access: "read",
  message: null,
  thread: { id: 1, lwp: 21901, name: null },
  culprit: { function: "process_job", file: "/src/thread-crash.c", line: 28, column: null, frame: 0, module: "/src/thread-crash", language: null }, runtime: null,
  origin: { type: "fault", sender: null, evidence: "the signal record says SIGSEGV SEGV_MAPERR, the kernel's code for a fault of the instruction at the pc" },
  exploitability: { rating: "probably-not-exploitable", reasons: ["a read near NULL (0x8): the first page is never mapped"] },
  annotations: null,
  cut: null,
  signature: "null-dereference | process_job | worker_main | start_thread",
  deadlock: null,
};

const FACTS: Measurements = {
  crash: CRASH,
  threads: THREADS,
  mainThread: 2,
  frames: FRAMES,
  evidence: { threads: "E1", signal: "E7", stack: "E6" },
  debugger: "gdb",
};

const DEADLOCK: Measurements = {
  ...FACTS,
  crash: {
    ...CRASH,
    kind: "deadlock",
    signal: null,
    signalCode: null,
    faultAddress: null,
    access: null,
    deadlock: {
      cycle: [
        { thread: 2, function: "transfer_funds", file: "deadlock.c", line: 25, lock: "0x7ffec17246e0", heldByThread: 3 },
        { thread: 3, function: "transfer_funds", file: "deadlock.c", line: 25, lock: "0x7ffec1724720", heldByThread: 2 },
      ],
    },
  },
};

describe("findClaims", () => {
  it.each<[string, Claim[]]>([
    ["why did thread 1 crash?", [{ about: "thread", thread: 1 }]],
    ["thread 3 crashed, why?", [{ about: "thread", thread: 3 }]],
    ["why did the main thread crash?", [{ about: "thread", thread: "main" }]],
    ["the crash on thread #7 is odd", [{ about: "thread", thread: 7 }]],
    ["show thread 3's stack", []],
    ["it's a double free, isn't it?", [{ about: "kind", kind: "double-free" }]],
    ["it's not a double free, right?", []],
    ["is this a stack overflow?", [{ about: "kind", kind: "stack-overflow" }]],
    ["why the SIGABRT?", [{ about: "signal", signal: "SIGABRT" }]],
    ["why did it segfault in worker_main?", [{ about: "signal", signal: "SIGSEGV" }, { about: "function", function: "worker_main" }]],
    ["it crashed in the main thread", [{ about: "thread", thread: "main" }]],
    ["the crash was in thread 2, wasn't it?", [{ about: "thread", thread: 2 }]],
    ["the null pointer is `session`", [{ about: "kind", kind: "null-dereference" }, { about: "null", expression: "session" }]],
    ["session->client was NULL", [{ about: "null", expression: "session->client" }]],
    ["which pointer is null?", []],
    ["what is the meaning of this program?", []],
  ])("%j", (question, claims) => {
    expect(findClaims(question)).toEqual(claims);
  });
});

describe("checkClaim", () => {
  it("corrects another thread, naming the one that received the signal and the measurement", () => {
    expect(checkClaim({ about: "thread", thread: 3 }, FACTS)?.text).toBe(
      "Thread 3 did not crash (it was in `__futex_abstimed_wait_common64`): the SIGSEGV was on thread 1 (LWP 21901), a worker thread, not the main thread [E1, E7].",
    );
    expect(checkClaim({ about: "thread", thread: "main" }, FACTS)?.text).toMatch(/^The main thread, thread 2 \(LWP 21897\), did not crash/);
    expect(checkClaim({ about: "thread", thread: 9 }, FACTS)?.text).toMatch(/^There is no thread 9: the process had 3 threads, and the SIGSEGV was on thread 1/);
  });

  it("notes that gdb's thread 1 is the signalled thread when that is not the main thread", () => {
    expect(checkClaim({ about: "thread", thread: 1 }, FACTS)).toEqual({
      text: "Note: thread 1 is gdb's number for the thread that received the SIGSEGV, a worker thread, not the main thread; the main thread is thread 2 (LWP 21897) [E1, E7].",
      evidenceIds: ["E1", "E7"],
    });
    expect(checkClaim({ about: "thread", thread: 1 }, { ...FACTS, mainThread: 1 })).toBeNull();
  });

  it("says nothing crashed in a deadlock", () => {
    expect(checkClaim({ about: "thread", thread: 2 }, DEADLOCK)?.text).toBe("No thread crashed: the dump is of a hung process, in which threads 2 and 3 wait for each other's locks [E1, E7].");
    expect(checkClaim({ about: "signal", signal: "SIGSEGV" }, DEADLOCK)?.text).toMatch(/^No signal stopped the process/);
  });

  it("corrects the kind, but not when the claim names the same crash in other words", () => {
    expect(checkClaim({ about: "kind", kind: "double-free" }, FACTS)?.text).toBe(
      "It is not a double free: the crash is a null dereference in `process_job` (SIGSEGV, reading address 0x40) [E7, E6].",
    );
    expect(checkClaim({ about: "kind", kind: "null-dereference" }, FACTS)).toBeNull();
    expect(checkClaim({ about: "kind", kind: "heap-corruption" }, { ...FACTS, crash: { ...CRASH, kind: "double-free" } })).toBeNull();
  });

  it("corrects the signal and the function, by the crashing thread's stack", () => {
    expect(checkClaim({ about: "signal", signal: "SIGABRT" }, FACTS)?.text).toBe("The signal was SIGSEGV, not SIGABRT [E7].");
    expect(checkClaim({ about: "signal", signal: "SIGSEGV" }, FACTS)).toBeNull();
    expect(checkClaim({ about: "function", function: "worker_main" }, FACTS)?.text).toBe(
      "It did not crash in `worker_main`: the fault is in `process_job` (frame 0 at /src/thread-crash.c:28), which `worker_main` (frame 1) called [E6].",
    );
    expect(checkClaim({ about: "function", function: "parse_request" }, FACTS)?.text).toMatch(/^`parse_request` is not on the crashing thread's stack: the fault is in `process_job`/);
    expect(checkClaim({ about: "function", function: "process_job" }, FACTS)).toBeNull();
  });
});

describe("null pointers", () => {
  it("reads gdb's printing of a null pointer", () => {
    expect(isNullPointer("(struct client *) 0x0")).toBe(true);
    expect(isNullPointer("0x0")).toBe(true);
    expect(isNullPointer("(struct session *) 0x556786f992f0")).toBe(false);
    expect(isNullPointer("{id = 17, request = 0x0}")).toBe(false);
  });

  it("corrects a claimed null pointer that is not null, with its value", () => {
    expect(nullClaimFinding("session", { value: "(struct session *) 0x556786f992f0", evidenceId: "E13" })).toEqual({
      text: "`session` is not null: it is 0x556786f992f0 in the culprit frame [E13].",
      evidenceIds: ["E13"],
    });
    expect(nullClaimFinding("session->client", { value: "(struct client *) 0x0", evidenceId: "E14" })).toBeNull();
    expect(nullClaimFinding("nosuch", { value: null, evidenceId: "E15" })).toBeNull();
  });
});
