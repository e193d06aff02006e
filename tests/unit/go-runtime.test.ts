/**
 * The pure readers of Go's runtime over bytes the tests take from real builds: the `.go.buildinfo`
 * section of a fixture service built here, and the runtime's own wording of its errors.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { boundsErrorText, goBuildVersion, goLayout, goroutineStatus, goStringText, goTypeName, panicValueShape, GO_RUNTIME_FUNCTION } from "../../src/analyzers/go-runtime.js";
import { isRuntimeFrame, type PlacedFrame } from "../../src/analyzers/culprit.js";
import { buildGoCore, type BuiltGoCore } from "../helpers/go.js";

/** A section's bytes from an ELF file, found with readelf. */
function sectionBytes(file: string, name: string): Uint8Array {
  const table = execFileSync("readelf", ["-S", "-W", file], { encoding: "utf8" });
  const row = new RegExp(`\\] ${name.replace(".", "\\.")}\\s+\\S+\\s+\\S+\\s+(\\S+)\\s+(\\S+)`).exec(table);
  if (!row) throw new Error(`${file} has no ${name}`);
  return readFileSync(file).subarray(parseInt(row[1] ?? "0", 16), parseInt(row[1] ?? "0", 16) + parseInt(row[2] ?? "0", 16));
}

describe("Go build info", () => {
  let built: BuiltGoCore;
  beforeAll(async () => {
    built = await buildGoCore("nil-map");
  });

  it("names the Go release the service was built with, as `go version` says", () => {
    const goVersion = /go version (go\S+)/.exec(execFileSync("go", ["version"], { encoding: "utf8" }))?.[1];
    expect(goBuildVersion(sectionBytes(built.exe, ".go.buildinfo"))).toBe(goVersion);
  });

  it("reads nothing from a section that is not Go's build info", () => {
    expect(goBuildVersion(sectionBytes(built.exe, ".rodata").subarray(0, 64))).toBeNull();
  });

  it("knows the layout of go1.17 to go1.20 and says so for others", () => {
    expect(goLayout("go1.19.8")?.m.curg).toBe(192);
    expect(goLayout("go1.16.15")).toBeNull();
    expect(goLayout("go1.22.1")).toBeNull();
  });
});

describe("the runtime's words", () => {
  it("composes a bounds error as runtime.boundsError.Error does", () => {
    expect(boundsErrorText(5n, 3n, true, 0)).toBe("runtime error: index out of range [5] with length 3");
    expect(boundsErrorText(BigInt.asUintN(64, -1n), 3n, true, 0)).toBe("runtime error: index out of range [-1]");
    expect(boundsErrorText(7n, 4n, false, 1)).toBe("runtime error: slice bounds out of range [:7] with length 4");
    expect(boundsErrorText(1n, 1n, false, 42)).toBeNull();
  });

  it("reads a type's name, without the star of a type stored as its pointer's", () => {
    // What the nil-map core holds at the name offset of runtime.plainError's panic value type: flags, length 7, "*string".
    const bytes = new Uint8Array([0x00, 0x07, ...Buffer.from("*string"), 0x00]);
    expect(goTypeName(bytes, 0x07)).toBe("string");
    expect(goTypeName(bytes, 0x00)).toBe("*string");
    expect(goTypeName(new Uint8Array([0x00, 0x40, 0x41]), 0)).toBeNull();
  });

  it("knows where each panic value's text lies", () => {
    expect(panicValueShape("runtime.errorString")).toEqual({ shape: "string", prefix: "runtime error: " });
    expect(panicValueShape("*fmt.wrapError")).toEqual({ shape: "struct-string", prefix: "" });
    expect(panicValueShape("runtime.boundsError")).toEqual({ shape: "bounds" });
    expect(panicValueShape("main.ConfigError").shape).toBe("unknown");
  });

  it("reads statuses without the GC's scan bit, and only text as strings", () => {
    expect(goroutineStatus(0x1004)).toBe("waiting");
    expect(goroutineStatus(2)).toBe("running");
    expect(goStringText(Buffer.from("ledger out of balance"), 21)).toBe("ledger out of balance");
    expect(goStringText(new Uint8Array([1, 2, 3]), 3)).toBeNull();
  });
});

describe("Go's runtime in the culprit search", () => {
  const frame = (name: string): PlacedFrame => ({ level: 0, address: "0x401000", function: name, args: "", file: "main.go", line: 1, from: null, module: "/srv/svc" });

  it("skips the runtime, its internal packages, sync and reflect, and keeps the program's own", () => {
    for (const name of ["runtime.gopanic", "runtime.mapassign_faststr", "runtime.systemstack_switch.abi0", "internal/poll.(*FD).Read", "sync.(*Mutex).Lock", "reflect.Value.Call"]) {
      expect(GO_RUNTIME_FUNCTION.test(name), name).toBe(true);
      expect(isRuntimeFrame(frame(name)), name).toBe(true);
    }
    for (const name of ["main.(*Cache).Put", "main.main.func1", "example.com/svc/cache.(*Store).Put"]) expect(isRuntimeFrame(frame(name)), name).toBe(false);
  });
});
