/** What Crashpad's annotations say of how a crash ended: the pure reading. */
import { describe, expect, it } from "vitest";
import { annotatedEnding } from "../../src/analyzers/annotations.js";

const info = (...lists: string[][]) => ({ reportId: null, clientId: null, simple: {}, modules: lists.map((list) => ({ module: null, list, simple: {}, objects: {} })) });

describe("annotated endings", () => {
  it("names an uncaught NSException by its name and reason, from CoreFoundation's last words", () => {
    const said = info(["abort() called"], ["*** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: '-[__NSCFNumber length]: unrecognized selector sent to instance 0x8f3'"]);
    expect(annotatedEnding(said)).toEqual({
      kind: "uncaught-exception",
      message: "NSInvalidArgumentException: -[__NSCFNumber length]: unrecognized selector sent to instance 0x8f3",
      thrown: "NSInvalidArgumentException",
    });
  });

  it("keeps an abort's own message, and names an assertion", () => {
    expect(annotatedEnding(info(["abort() called"]))).toEqual({ kind: null, message: "abort() called" });
    expect(annotatedEnding(info(["Assertion failed: (queue->size > 0), function pop, file queue.c, line 42."]))?.kind).toBe("assertion-failure");
  });

  it("says nothing without annotations, or with none that are last words", () => {
    expect(annotatedEnding(null)).toBeNull();
    expect(annotatedEnding(info(["pid: 4242"], []))).toBeNull();
  });
});
