import { describe, expect, it } from "vitest";
import { callArguments, checkInCulprit, invalidParameter, literalOf, parameterNames, passedFor } from "../../src/agents/playbooks/checked-parameter.js";
import type { SourceFile } from "../../src/agents/playbooks/source.js";

const source: SourceFile = {
  path: "/src/status.c",
  lines: [
    "static int log_line(const char *format, ...);",
    "static int log_line(const char *format,",
    "                    ...)",
    "{",
    "    if (format == NULL) return -1;",
    "}",
    "static void copy_name(char dest[32], const char *src, size_t len) { }",
    "static void report_status(int state, int load)",
    "{",
    "    log_line(status_templates[state], load); // log_line(other)",
    "}",
  ],
};

describe("a check a called function recorded, read on the caller's arguments", () => {
  it("reads the check and the checker from the invalid-parameter message", () => {
    expect(invalidParameter("invalid parameter: `format != NULL` failed in log_line (C:\\src\\status.c:23)")).toEqual({ check: "format != NULL", checker: "log_line" });
    expect(invalidParameter("Assertion `x' failed.")).toBeNull();
  });

  it("names a definition's parameters, skipping its declaration", () => {
    expect(parameterNames(source, "log_line")).toEqual(["format", "..."]);
    expect(parameterNames(source, "copy_name")).toEqual(["dest", "src", "len"]);
    expect(parameterNames(source, "missing")).toBeNull();
  });

  it("splits a call's arguments at the top level, ignoring comments", () => {
    expect(callArguments("    log_line(status_templates[state], load); // log_line(other)", "log_line")).toEqual(["status_templates[state]", "load"]);
    expect(callArguments("x = f(g(a, b), c[1, 2]);", "f")).toEqual(["g(a, b)", "c[1, 2]"]);
    expect(callArguments("f(a,", "f")).toBeNull();
  });

  it("binds the checked parameter to what the caller passed", () => {
    expect(passedFor(source, source.lines[9] ?? "", "log_line", "format")).toBe("status_templates[state]");
    expect(passedFor(source, source.lines[9] ?? "", "log_line", "missing")).toBeNull();
  });

  it("rewrites the check on the culprit's arguments", () => {
    const facts = { source, line: source.lines[9] ?? null, fn: "report_status" };
    expect(checkInCulprit(facts, { check: "format != NULL", checker: "log_line" })).toEqual({ expression: "status_templates[state] != NULL", said: "`status_templates[state]` for `format`" });
    // The checker is the culprit itself: its own variables are evaluated as they are.
    expect(checkInCulprit({ ...facts, fn: "log_line" }, { check: "format != NULL", checker: "log_line" })).toBeNull();
  });

  it("knows literal operands", () => {
    expect(literalOf("NULL")).toBe(0n);
    expect(literalOf("0x10")).toBe(16n);
    expect(literalOf("32u")).toBe(32n);
    expect(literalOf("format")).toBeNull();
  });
});
