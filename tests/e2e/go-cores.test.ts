/**
 * Go services' cores through gdb alone, from the user's side: each fixture service is built (with
 * `-N -l` as a debug build, and as shipped), crashed with GOTRACEBACK=crash (or hung and dumped
 * alive), and `dumpdbg triage core --exe svc --json` must name the kind, the runtime's message,
 * the culprit function and its line.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { buildGoCore, goCulpritLine, goFixtureNames, type BuiltGoCore } from "../helpers/go.js";

interface Expected {
  kind: Crash["kind"];
  culprit: string;
  message: RegExp;
  /** The signature's frames after the kind, when the test pins them. */
  signature?: string;
  faultAddress?: string;
}

const EXPECTED: Record<string, Expected> = {
  "nil-map": { kind: "panic", culprit: "main.(*Cache).Put", message: /^assignment to entry in nil map$/, signature: "panic | main.(*Cache).Put | main.load | main.main" },
  "nil-pointer": { kind: "null-dereference", culprit: "main.charge", message: /^runtime error: invalid memory address or nil pointer dereference$/, faultAddress: "0x0" },
  "index-range": { kind: "panic", culprit: "main.(*Queue).Next", message: /^runtime error: index out of range \[5\] with length 3$/ },
  "panic-error": { kind: "panic", culprit: "main.mustLoad", message: /^loading config: open \/nonexistent\/svc.yaml: file does not exist$/ },
  "panic-string": { kind: "panic", culprit: "main.(*Ledger).Post", message: /^ledger out of balance$/ },
  "concurrent-map": { kind: "panic", culprit: "main.(*Stats).Record", message: /^fatal error: concurrent map writes$/ },
  deadlock: { kind: "deadlock", culprit: "main.(*Server).Shutdown", message: /^fatal error: all goroutines are asleep - deadlock!$/ },
  hang: { kind: "hang", culprit: "main.dispatch", message: /goroutines/ },
};

async function triageJson(built: BuiltGoCore): Promise<{ crash: Crash; stderr: string }> {
  const result = await runCli(["triage", built.core, "--exe", built.exe, "--debugger", "gdb", "--json"]);
  expect(result.code, result.stderr).toBe(0);
  return { crash: JSON.parse(result.stdout) as Crash, stderr: result.stderr };
}

describe("Go fixtures", () => {
  it("every case has an expectation", () => {
    expect(goFixtureNames()).toEqual(Object.keys(EXPECTED).sort());
  });
});

describe.each(Object.entries(EXPECTED))("Go service %s, debug build (-N -l), through gdb", (name, expected) => {
  let built: BuiltGoCore;
  beforeAll(async () => {
    built = await buildGoCore(name);
  });

  it("is triaged as the runtime told it", async () => {
    const { crash } = await triageJson(built);
    expect(crash.kind).toBe(expected.kind);
    expect(crash.message).toMatch(expected.message);
    expect(crash.culprit.function).toBe(expected.culprit);
    expect(crash.culprit.line).toBe(goCulpritLine(name));
    expect(crash.culprit.file).toMatch(/main\.go$/);
    if (expected.signature) expect(crash.signature).toBe(expected.signature);
    if (expected.faultAddress) expect(crash.faultAddress).toBe(expected.faultAddress);
  }, 60_000);
});

describe.each(Object.entries(EXPECTED))("Go service %s, as shipped (optimised, inlined), through gdb", (name, expected) => {
  let built: BuiltGoCore;
  beforeAll(async () => {
    built = await buildGoCore(name, { optimized: true });
  });

  // Inlining folds small callees into their callers: the culprit is then the function the line was
  // inlined into, named by its symbol, while the line is still the CULPRIT's (the line table keeps it).
  it("keeps the kind, the message and the culprit's line", async () => {
    const { crash } = await triageJson(built);
    expect(crash.kind).toBe(expected.kind);
    expect(crash.message).toMatch(expected.message);
    expect(crash.culprit.line).toBe(goCulpritLine(name));
    expect(crash.culprit.function).toMatch(/^main\./);
  }, 60_000);
});
