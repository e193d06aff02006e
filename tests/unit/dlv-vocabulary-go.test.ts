/** Delve's vocabulary answering the Go reader's probes: symbols from `TEXT` lines, addresses of package variables, the program's file. */
import { describe, expect, it } from "vitest";
import { readProgram } from "../../src/debuggers/dlv/program.js";
import { DumpFile, readElfCore } from "../../src/debuggers/dumpfile/index.js";
import { buildGoCore } from "../helpers/go.js";
import { dlvVocabulary, dlvVocabularyFor } from "../../src/debuggers/dlv/vocabulary.js";

const LISTING = "TEXT main.(*Cache).Put+22(SB)\n  \t/src/main.go:15\t0x49d076\te8a5f4f7ff\tCALL runtime.mapassign_faststr(SB)\n";

describe("Delve's vocabulary for the Go reader", () => {
  it("names the function an address is in, and how far into it, from the listing's TEXT line", () => {
    const probe = { kind: "symbol", address: "0x49d076" } as const;
    expect(dlvVocabulary.render(probe)).toBe("disassemble -a 0x49d076 0x49d077");
    expect(dlvVocabulary.read(probe, LISTING)).toMatchObject({ symbol: "main.(*Cache).Put", offset: 22, file: "/src/main.go", line: 15 });
    expect(dlvVocabulary.read(probe, "")).toBeNull();
  });

  it("gives a disassembly the function's name alone", () => {
    expect(dlvVocabulary.read({ kind: "disassemble", address: "0x49d076" }, LISTING).function).toBe("main.(*Cache).Put");
  });

  it("reads the source line of an address from the instruction that holds it", () => {
    expect(dlvVocabulary.read({ kind: "source-line", address: "0x49d077" }, LISTING)).toEqual({ file: "/src/main.go", line: 15 });
  });

  it("asks a package variable's address as an integer, and reads DAP's uintptr or a printed pointer", () => {
    const probe = { kind: "symbol-address", name: "runtime.m0" } as const;
    expect(dlvVocabulary.render(probe)).toBe("print uintptr(unsafe.Pointer(&runtime.m0))");
    expect(dlvVocabulary.read(probe, "5466912 = 0x536b20\n")).toBe("0x536b20");
    expect(dlvVocabulary.read(probe, "(*runtime.m)(0x536b20)\n")).toBe("0x536b20");
    expect(dlvVocabulary.read(probe, "*runtime.m {g0: …}\n")).toBeNull();
  });

  it("lists the sections of the program it was launched with", () => {
    const sections = [{ start: "0x401000", end: "0x49e000", name: ".text", source: "exec" }];
    const vocabulary = dlvVocabularyFor("/svc", () => sections);
    expect(vocabulary.read({ kind: "sections" }, "")).toEqual({ executable: "/svc", core: null, sections });
  });

  it("reads nothing of a program file it cannot read", () => {
    const program = readProgram("/nonexistent/svc", "/nonexistent/core");
    expect(program.sections).toEqual([]);
    expect(program.functionAt(0x401000n)).toBeNull();
  });

  it.each([false, true])("names the functions of the process the core holds, a PIE moved by its load base (PIE: %s)", async (pie) => {
    const built = await buildGoCore("nil-map", { pie });
    const core = DumpFile.open(built.core);
    const entry = BigInt(readElfCore(core).auxv?.entry ?? "0x0");
    core.close();
    const program = readProgram(built.exe, built.core);
    // The kernel entered the program at Go's own entry point, wherever the PIE was loaded.
    expect(program.functionAt(entry)).toEqual({ name: "_rt0_amd64_linux", offset: 0 });
    const text = program.sections.find((s) => s.name === ".text");
    expect(text && BigInt(text.start) <= entry && entry < BigInt(text.end)).toBe(true);
    expect(pie ? entry > 0x10000000n : entry < 0x1000000n).toBe(true);
  }, 120_000);
});
