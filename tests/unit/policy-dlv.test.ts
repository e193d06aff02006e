/** Delve's read-only allowlist: what reads a Go core passes; what runs, calls, sets or writes is refused with why. */
import { describe, expect, it } from "vitest";
import { parseDelveCommand } from "../../src/debuggers/dlv/commands.js";
import { dlvVocabulary } from "../../src/debuggers/dlv/vocabulary.js";
import { checkCommand } from "../../src/debuggers/policy/index.js";
import { probes } from "../../src/debuggers/probe.js";

const reasonOf = (command: string): string | null => {
  const verdict = checkCommand("dlv", command);
  return verdict.allowed ? null : verdict.reason;
};

const ALLOWED = [
  "goroutines", "grs", "goroutines -t", "goroutines -t 20", "goroutine", "goroutine 5", "gr 5", "goroutine 5 bt", "goroutine 5 stack 40",
  "goroutine 5 frame 2 locals", "frame 3", "frame 3 locals", "stack", "bt 10", "locals", "args", "regs", "regs -a", "threads",
  "print c", "p c.items", "print %x len(c.name)", "p *c", "p uintptr(unsafe.Pointer(c))", "p (*[4]uint64)(0xc000012000)", 'p "a=b"',
  "p c.name == \"x\"", "p m[\"k\"]", "p s[1:3]", "x -fmt hex -count 4 -size 8 0xc000012000", "examinemem -count 16 0xc000012000",
  "x -size 8 -count 2 c", "disassemble", "disass", "disassemble -a 0x49ae00 0x49ae40", "sources", "sources main",
  // Read-only, and refused by the session itself as unanswerable over DAP, not by the policy.
  "list", "funcs main", "types Cache", "libraries",
];

const REFUSED: [string, RegExp][] = [
  ["call main.main()", /calls a function/],
  ["goroutine 1 call f()", /calls a function/],
  ["print call f()", /calls a function/],
  ["p c.name = \"x\"", /assigns/],
  ["print i++", /changes a value/],
  ["set c.name = \"x\"", /changes a variable/],
  ["restart", /runs or resumes the program/],
  ["continue", /runs or resumes/],
  ["c", /runs or resumes/],
  ["next", /runs or resumes/],
  ["step", /runs or resumes/],
  ["stepout", /runs or resumes/],
  ["rebuild", /runs or resumes/],
  ["break main.main", /breakpoints/],
  ["b main.go:14", /breakpoints/],
  ["trace main.main", /breakpoints/],
  ["watch c.items", /breakpoints/],
  ["on 1 print c", /block of commands/],
  ["source script.star", /script/],
  ["config max-string-len 1000", /settings/],
  ["dlv config showRegisters false", /DAP REPL command/],
  ["dump /tmp/core2", /writes a file/],
  ["exit", /ends the debugger session/],
  ["quit", /ends the debugger session/],
  ["target switch 12", /changes the debugged target/],
  ["edit", /settings/],
  ["frobnicate", /not on the read-only allowlist/],
  ["stack -full", /not on the read-only allowlist/],
  ["x -fmt bin 0x1", /not on the read-only allowlist/],
  ["goroutines\nexit", /control character \(U\+000A\)/],
  ["print c\u0007", /control character \(U\+0007\)/],
];

describe("dlv policy", () => {
  it.each(ALLOWED)("allows %s", (command) => {
    expect(reasonOf(command)).toBeNull();
  });

  it.each(REFUSED)("refuses %s", (command, why) => {
    const reason = reasonOf(command);
    expect(reason).toMatch(why);
    expect(reason).toMatch(/refused by the safety policy|control character/);
  });
});

describe("dlv commands and vocabulary", () => {
  it("reads Delve's goroutine and frame prefix as the place", () => {
    expect(parseDelveCommand("goroutine 7 frame 2 print c.items")).toEqual({ goroutine: 7, frame: 2, ask: { verb: "print", expression: "c.items", hex: false } });
    expect(parseDelveCommand("frame 1")).toEqual({ goroutine: null, frame: 1, ask: { verb: "select" } });
    expect(parseDelveCommand("x -count 4 -size 8 0x10")).toMatchObject({ ask: { verb: "examinemem", address: "0x10", count: 4, size: 8 } });
  });

  it("renders probes in Delve's words and recognises them back", () => {
    const place = { thread: 7, frame: 2 };
    expect(dlvVocabulary.render({ kind: "threads" })).toBe("goroutines");
    expect(dlvVocabulary.render(probes.backtrace(40, { thread: 7 }))).toBe("goroutine 7 stack 40");
    expect(dlvVocabulary.render(probes.locals(place))).toBe("goroutine 7 frame 2 locals");
    expect(dlvVocabulary.render(probes.evaluate("c.items", place, "hex"))).toBe("goroutine 7 frame 2 print %x c.items");
    expect(dlvVocabulary.render(probes.memory("0xc000012000", 4))).toBe("x -fmt hex -count 4 -size 8 0xc000012000");
    expect(dlvVocabulary.render({ kind: "frame-info", frame: 1, thread: 7 })).toBe("goroutine 7 frame 2 regs");
    expect(dlvVocabulary.recognise("goroutine 7 stack 40")).toEqual({ kind: "backtrace", limit: 40, thread: 7 });
    expect(dlvVocabulary.recognise("goroutine 7 frame 2 locals")).toEqual({ kind: "locals", thread: 7, frame: 2 });
    expect(dlvVocabulary.recognise("goroutines")).toEqual({ kind: "threads" });
    expect(dlvVocabulary.movesSelection("goroutine 3")).toBe(true);
    expect(dlvVocabulary.movesSelection("goroutine 3 locals")).toBe(false);
  });
});
