/** What the offline chat takes a question to ask for: a table of questions as people type them. */
import { describe, expect, it } from "vitest";
import { classifyQuestion, type Intent } from "../../src/agents/chat/intent.js";

const CASES: Array<[string, Intent]> = [
  ["show thread 3's stack", { kind: "stack", thread: 3 }],
  ["how do I fix it?", { kind: "fix" }],
  ["which goroutine panicked?", { kind: "goroutine" }],
  ["what was thrown?", { kind: "thrown" }],
  ["which error was it?", { kind: "thrown" }],
  ["what is the exception's message?", { kind: "thrown" }],
  ["show the error class", { kind: "thrown" }],
  ["which goroutine", { kind: "goroutine" }],
  ["what was in the map?", { kind: "map-contents" }],
  ["what is in the memory map at 0x7f001000?", { kind: "address", address: "0x7f001000" }],
  ["How should we fix the deadlock?", { kind: "fix" }],
  ["what should I change to prevent this?", { kind: "fix" }],
  ["any recommendations?", { kind: "fix" }],
  ["what does prefix_len hold?", { kind: "unknown" }],
  ["backtrace of the main thread", { kind: "stack", thread: "main" }],
  ["show me the crashing thread's stack", { kind: "stack", thread: "crashed" }],
  ["what was thread #2 doing?", { kind: "stack", thread: 2 }],
  ["what were all the other threads doing?", { kind: "all-stacks" }],
  ["show all threads' stacks", { kind: "all-stacks" }],
  ["how many threads were there?", { kind: "threads" }],
  ["locals in frame 2", { kind: "locals", thread: "crashed", frame: 2 }],
  ["what are the local variables of the culprit frame?", { kind: "locals", thread: "crashed", frame: "culprit" }],
  ["locals of transfer_funds in thread 2", { kind: "locals", thread: 2, frame: { function: "transfer_funds" } }],
  ["show the arguments of broadcast()", { kind: "locals", thread: "crashed", frame: { function: "broadcast" } }],
  ["what was in rax?", { kind: "registers", names: ["rax"], thread: "crashed", frame: 0 }],
  ["value of $rip and rsp in frame 1", { kind: "registers", names: ["rip", "rsp"], thread: "crashed", frame: 1 }],
  ["show the registers of thread 4", { kind: "registers", names: [], thread: 4, frame: 0 }],
  ["what does $fs hold", { kind: "registers", names: ["fs"], thread: "crashed", frame: 0 }],
  ["what does the fault address point into?", { kind: "fault-address" }],
  ["which address did it crash on?", { kind: "fault-address" }],
  ["what is at 0x55bcf746b0e8?", { kind: "address", address: "0x55bcf746b0e8" }],
  ["who holds which lock?", { kind: "locks", lock: null }],
  ["who holds mutex 0x7FFEC1724720", { kind: "locks", lock: "0x7ffec1724720" }],
  ["who holds 0x7ffec1724720?", { kind: "locks", lock: "0x7ffec1724720" }],
  ["why is it deadlocked?", { kind: "locks", lock: null }],
  ["which pointer was null?", { kind: "null-pointer" }],
  ["the null pointer is session, right?", { kind: "null-pointer" }],
  ["what is session->client?", { kind: "value", expression: "session->client", thread: "crashed", frame: "culprit" }],
  ["print `priority` in frame 1", { kind: "value", expression: "priority", thread: "crashed", frame: 1 }],
  ["value of job.request in thread 1", { kind: "value", expression: "job.request", thread: 1, frame: "culprit" }],
  ["why did thread 1 crash?", { kind: "crash" }],
  ["what happened?", { kind: "crash" }],
  ["what's the root cause", { kind: "crash" }],
  ["what is the meaning of this program?", { kind: "unknown" }],
  ["", { kind: "unknown" }],
];

describe("classifyQuestion", () => {
  it.each(CASES)("%j", (question, intent) => {
    expect(classifyQuestion(question)).toEqual(intent);
  });

  it("takes any text without throwing", () => {
    for (const text of ["`", "0x", "frame", "thread 99999999999999999999 stack", "(((", "\u0000\u001b[2J", "x".repeat(100_000)]) {
      expect(() => classifyQuestion(text)).not.toThrow();
    }
  });
});
