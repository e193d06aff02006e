/** The report's pictures: the graphs handed to Graphviz, and what it draws of them. */
import { describe, expect, it } from "vitest";
import type { ReportDocument } from "../../src/report/document.js";
import { placeFault } from "../../src/analyzers/address-space.js";
import { deadlockGraph, drawPictures, faultBar, recursionGraph } from "../../src/report/pictures.js";

function doc(crash: Partial<ReportDocument["report"]["crash"]>, details: ReportDocument["details"] = {}): ReportDocument {
  return {
    report: {
      schemaVersion: 1,
      session: { id: "s", dump: "core", executable: null, debugger: "gdb", startedAt: "2026-01-01T00:00:00Z", finishedAt: null },
      issue: null,
      crash: {
        kind: "stack-overflow",
        signal: "SIGSEGV",
        signalCode: "SEGV_MAPERR",
        faultAddress: null,
        access: null,
        message: null,
        thread: { id: 1, lwp: 1, name: null },
        culprit: { function: "parse_value", file: "/src/json.c", line: 40, frame: 0, module: null, language: null },
        runtime: null,
        signature: "stack-overflow | parse_value",
        deadlock: null,
        ...crash,
      },
      hypotheses: [],
      conclusion: { summary: "", rootCause: "", confidence: 0.5, recommendations: [] },
      critique: { rounds: [], unresolved: [] },
      followUpQuestions: [],
      evidence: [],
      usage: { llmCalls: 0, local: { inputTokens: 0, outputTokens: 0 }, cloud: { inputTokens: 0, outputTokens: 0 } },
      timings: { totalMs: 1, debuggerMs: 1, llmMs: 0 },
    },
    details,
  } as ReportDocument;
}

describe("the pictures of a report", () => {
  it("draws nothing for a crash that a picture would not help", async () => {
    expect(deadlockGraph(doc({ kind: "null-dereference" }))).toBeNull();
    expect(recursionGraph(doc({ kind: "null-dereference" }))).toBeNull();
    expect(await drawPictures(doc({ kind: "null-dereference" }))).toEqual([]);
  });

  it("draws a recursion's cycle, where it was entered, and how deep it went", async () => {
    const overflow = doc({}, {
      recursion: { frames: 174_612, cycle: ["parse_value", "parse_array"] },
      frames: [
        { level: 0, function: "parse_value", file: null, line: null, module: null },
        { level: 1, function: "parse_array", file: null, line: null, module: null },
        { level: 2, function: "parse_value", file: null, line: null, module: null },
        { level: 3, function: "load_config", file: null, line: null, module: null },
      ],
    });
    const graph = recursionGraph(overflow) ?? "";
    expect(graph).toMatch(/c0 \[label="parse_value"\]/);
    expect(graph).toMatch(/entry \[label="load_config\\nentered here"/);
    expect(graph).toMatch(/c1 -> c0 \[label="again: 174,612 frames deep"/);
    const [picture] = await drawPictures(overflow);
    expect(picture?.svg).toMatch(/^<svg[\s\S]*<\/svg>$/);
    expect(picture?.svg).toContain(">parse_array<");
    expect(picture?.caption).toMatch(/recursion's shape/);
  });

  it("escapes what the dump names, so a name cannot add nodes, links or markup", async () => {
    const hostile = 'x"]; evil [URL="http://example.com"]; y [label="<b>';
    const deadlock = doc({
      kind: "deadlock",
      deadlock: {
        cycle: [
          { thread: 2, function: hostile, file: "/src/a.c", line: 1, lock: "0x10", lockName: hostile, heldByThread: 3 },
          { thread: 3, function: "g", file: "/src/b.c", line: 2, lock: "0x20", lockName: null, heldByThread: 2 },
        ],
      },
    });
    const graph = deadlockGraph(deadlock) ?? "";
    expect(graph).not.toMatch(/^\s*evil/m);
    expect(graph).toContain('x\\"]; evil [URL=\\"http://example.com\\"]; y [label=\\"<b>');
    const [picture] = await drawPictures(deadlock);
    expect(picture?.svg).not.toMatch(/<a\b|xlink:href|<b>/);
    expect(picture?.svg).toContain("x&quot;]; evil");
  });
});

describe("where a fault address falls", () => {
  const files = {
    executable: "/srv/app",
    core: "/srv/core",
    sections: [
      { start: "0x555555554000", end: "0x555555555000", name: ".text", source: "exec" },
      { start: "0x555555558000", end: "0x555555559000", name: ".data", source: "exec" },
      { start: "0x7ffffffde000", end: "0x7ffffffff000", name: "load12", source: "core" },
    ],
  };

  it("in the null page, on the crashing thread's stack, or in a file's section", () => {
    expect(placeFault(files, 0x20n, null).within?.label).toBe("the null page (never mapped)");
    expect(placeFault(files, 0x7fffffffe010n, 0x7fffffffe000n).within).toEqual({ label: "the crashing thread's stack", start: "0x7ffffffde000", end: "0x7ffffffff000" });
    expect(placeFault(files, 0x555555558010n, null).within?.label).toBe("the program .data");
  });

  it("between the nearest two stretches when nothing maps it, and draws the distance to each", () => {
    const place = placeFault(files, 0x555555560000n, null);
    expect(place.within).toBeNull();
    expect(place.below?.label).toBe("the program .data");
    expect(place.above?.label).toBe("memory of the process (a dumped segment)");
    const bar = faultBar(doc({ kind: "invalid-memory-access" }, { faultPlace: place }));
    expect(bar?.caption).toBe("The fault address 0x555555560000 is in no mapping: 0x7000 bytes (28.0 KiB) past the end of the program .data, and 0x2aaaaaa7e000 bytes (43690.7 GiB) before memory of the process (a dumped segment).");
    expect(bar?.svg).toMatch(/^<svg [^>]*role="img"/);
  });
});

describe("a stack pointer moved past its stack", () => {
  it("still names the stack the fault fell short of (a huge frame)", () => {
    const files = { executable: null, core: "/c", sections: [{ start: "0x7ffc00000000", end: "0x7ffc00021000", name: "load9", source: "core" }] };
    const place = placeFault(files, 0x7ffbfc01fb48n, 0x7ffbfc01fb40n);
    expect(place.above?.label).toBe("the crashing thread's stack");
    expect(placeFault(files, 0x7ffb00000000n, 0x7ffb00000000n).above?.label).toBe("memory of the process (a dumped segment)");
  });
});
