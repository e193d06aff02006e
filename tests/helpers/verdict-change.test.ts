import { describe, expect, it } from "vitest";
import { classifyChange, ratingCrossedUnknown, type Verdict } from "./verdict-change.js";

const SERVER = "/srv/app/server";
const base: Verdict = { kind: "double-free", culprit: { function: "release_token", module: SERVER, line: 18 }, rating: "probably-exploitable" };
/** The base verdict with some of its fields changed. */
const changed = ({ culprit, ...rest }: Partial<Omit<Verdict, "culprit">> & { culprit?: Partial<Verdict["culprit"]> }): Verdict => ({ ...base, ...rest, culprit: { ...base.culprit, ...culprit } });

describe("classifyChange", () => {
  it("an unchanged verdict is the same", () => {
    expect(classifyChange(base, changed({}))).toEqual({ class: "same", changes: [], violations: [] });
  });

  it.each([
    ["the kind turns unknown", changed({ kind: "unknown" })],
    ["double-free generalises to heap-corruption", changed({ kind: "heap-corruption" })],
    ["double-free generalises to abort", changed({ kind: "abort" })],
    ["the culprit turns unknown", changed({ culprit: { function: null, line: null } })],
    ["the culprit's function goes, its module stays", changed({ culprit: { function: null, module: "/tmp/stripped/server", line: null } })],
    ["the culprit's module goes with it", changed({ culprit: { function: null, module: null, line: null } })],
    ["the line goes", changed({ culprit: { line: null } })],
    ["the rating falls", changed({ rating: "probably-not-exploitable" })],
    ["the rating falls to unknown", changed({ rating: "unknown" })],
    ["the module moves folder, its name stays", changed({ culprit: { module: "/elsewhere/server" } })],
  ])("%s: less specific, or the same", (_case, after) => {
    expect(classifyChange(base, after).class).not.toBe("changed-class");
  });

  it("a change of folder alone is no change", () => {
    expect(classifyChange(base, changed({ culprit: { module: "C:\\app\\server" } })).class).toBe("same");
  });

  it.each([
    ["another kind", changed({ kind: "null-dereference" }), "kind double-free → null-dereference"],
    ["a more specific kind", { ...changed({}), kind: "assertion-failure" as const }, "kind double-free → assertion-failure"],
    ["another culprit function", changed({ culprit: { function: "main" } }), "culprit release_token → main"],
    ["the function goes and the module changes", changed({ culprit: { function: null, module: "/lib/libc.so.6", line: null } }), "culprit release_token → unknown"],
    ["another line", changed({ culprit: { line: 19 } }), "line 18 → 19"],
    ["a higher rating", changed({ rating: "exploitable" }), "rating probably-exploitable → exploitable"],
  ])("%s: changed class", (_case, after, violation) => {
    const change = classifyChange(base, after);
    expect(change.class).toBe("changed-class");
    expect(change.violations).toEqual([violation]);
  });

  it("a kind never generalises the other way: abort to assertion-failure is another kind", () => {
    expect(classifyChange(changed({ kind: "abort" }), changed({ kind: "assertion-failure" })).class).toBe("changed-class");
  });

  it("an abort-family kind is not covered by a sibling: heap-corruption does not become double-free", () => {
    expect(classifyChange(changed({ kind: "heap-corruption" }), changed({ kind: "double-free" })).class).toBe("changed-class");
  });

  it("a deadlock may become a hang, never the reverse", () => {
    expect(classifyChange(changed({ kind: "deadlock" }), changed({ kind: "hang" })).class).toBe("less-specific");
    expect(classifyChange(changed({ kind: "hang" }), changed({ kind: "deadlock" })).class).toBe("changed-class");
  });

  it("a culprit, a line or a module that appears with less evidence was inferred from nothing", () => {
    const unknown = changed({ culprit: { function: null, module: null, line: null } });
    expect(classifyChange(unknown, base).violations).toEqual(["culprit unknown → release_token", "line unknown → 18"]);
    const stripped = changed({ culprit: { function: null, module: "/usr/lib/python3.11/_ctypes.so", line: null } });
    expect(classifyChange(stripped, changed({ culprit: { function: null, module: "/usr/lib/libc.so.6", line: null } })).violations).toEqual(["culprit module _ctypes.so → libc.so.6"]);
  });

  it("takes any rating to unknown as less specific, as a kind to unknown: it claims nothing", () => {
    expect(classifyChange(changed({ rating: "not-exploitable" }), changed({ rating: "unknown" })).class).toBe("less-specific");
    expect(classifyChange(changed({ rating: "exploitable" }), changed({ rating: "unknown" })).class).toBe("less-specific");
    // From unknown, a lower rating passes as any fall does (the rule forbids only a rise); a higher one does not.
    expect(classifyChange(changed({ rating: "unknown" }), changed({ rating: "not-exploitable" })).class).toBe("less-specific");
    expect(classifyChange(changed({ rating: "unknown" }), changed({ rating: "probably-exploitable" })).class).toBe("changed-class");
  });

  it("several changes are each named, and one violation makes the class", () => {
    const change = classifyChange(base, changed({ kind: "abort", culprit: { line: 20 } }));
    expect(change).toEqual({ class: "changed-class", changes: ["kind double-free → abort (generalised)", "line 18 → 20"], violations: ["line 18 → 20"] });
  });
});

describe("ratingCrossedUnknown", () => {
  it("is a fall from the exploitable side to the not-exploitable side, nothing else", () => {
    expect(ratingCrossedUnknown(base, changed({ rating: "not-exploitable" }))).toBe(true);
    expect(ratingCrossedUnknown(base, changed({ rating: "unknown" }))).toBe(false);
    expect(ratingCrossedUnknown(changed({ rating: "unknown" }), changed({ rating: "not-exploitable" }))).toBe(false);
  });

  it("a runtime's frames that could not be read leave the native stack's culprit: less specific, where the runtime was read before", () => {
    const python: Verdict = { kind: "null-dereference", culprit: { function: "parse_record", module: null, line: 8 }, rating: "probably-not-exploitable", runtime: "cpython" };
    const native: Verdict = { ...python, culprit: { function: null, module: "/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so", line: null }, runtime: null };
    expect(classifyChange(python, native)).toMatchObject({ class: "less-specific", changes: ["culprit parse_record → unknown (cpython's frames not read)", "line 8 → unknown"] });
    // With the runtime still read, a culprit that moves to another module is another verdict.
    expect(classifyChange(python, { ...native, runtime: "cpython" }).class).toBe("changed-class");
  });
});

