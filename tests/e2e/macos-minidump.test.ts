/**
 * macOS minidumps (Breakpad's and Crashpad's Mac clients): Mach exceptions read as the design's
 * crash kinds, modules known only by their UUIDs and symbolized from a Breakpad symbol store, and
 * Crashpad's simulated NSException told by its annotations. Real crashes of fixture programs (their
 * memory, threads and registers, x86-64), written as a Mac client writes them; LLDB reads them.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DumpFile, readMinidump } from "../../src/debuggers/dumpfile/index.js";
import type { Crash } from "../../src/report/schema.js";
import { breakpadMinidumpFromCore } from "../helpers/breakpad.js";
import { runCli } from "../helpers/cli.js";
import { buildCore, culpritLine } from "../helpers/cores.js";
import { withCrashpadInfo } from "../helpers/crashpad-info.js";
import { asMacMinidump, macModulesOf, writeMacSymbols, type MachException, type MacModule } from "../helpers/mac-minidump.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const dir = tempDir("dumpdbg-mac-");
const store = path.join(dir, "symbols");

const EXC_BAD_ACCESS = 1;
const EXC_BAD_INSTRUCTION = 2;
const EXC_ARITHMETIC = 3;
const EXC_BREAKPOINT = 6;
const EXC_CRASH = 10;
const KERN_INVALID_ADDRESS = 1;
const KERN_PROTECTION_FAILURE = 2;
const SIGABRT = 6;
const CRASHPAD_NSEXCEPTION = 0x43506e78;

interface Case {
  exception: (faultAddress: bigint) => MachException;
  kind: string;
  culprit: string;
  signal: string;
  message?: RegExp;
  annotations?: Parameters<typeof withCrashpadInfo>[1];
}

const CASES: Record<string, Case> = {
  "null-write": { exception: (address) => ({ type: EXC_BAD_ACCESS, code: KERN_INVALID_ADDRESS, address }), kind: "null-dereference", culprit: "cache_store", signal: "EXC_BAD_ACCESS" },
  "div-zero": { exception: () => ({ type: EXC_ARITHMETIC, code: 1 }), kind: "division-by-zero", culprit: "average_latency", signal: "EXC_ARITHMETIC" },
  abort: { exception: () => ({ type: EXC_CRASH, code: SIGABRT << 24 }), kind: "abort", culprit: "validate_config", signal: "EXC_CRASH" },
  "debug-break": { exception: () => ({ type: EXC_BREAKPOINT, code: 2 }), kind: "breakpoint", culprit: "texture_bytes", signal: "EXC_BREAKPOINT", message: /^breakpoint trap \(EXC_BREAKPOINT\)/ },
  "uncaught-exception": {
    // Crashpad's own exception for an NSException nothing caught; its name and reason in CoreFoundation's annotation.
    exception: () => ({ type: CRASHPAD_NSEXCEPTION, code: 0 }),
    kind: "uncaught-exception",
    culprit: "read_field",
    signal: "uncaught NSException (Crashpad)",
    message: /^NSInvalidArgumentException: manifest field 'version' is missing$/,
    annotations: { modules: [{ index: 1, list: ["*** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: 'manifest field 'version' is missing'"] }] },
  },
};

/** Held out until the mapping above was written. */
const HELD_OUT: Record<string, Case> = {
  "write-rodata": { exception: (address) => ({ type: EXC_BAD_ACCESS, code: KERN_PROTECTION_FAILURE, address }), kind: "invalid-memory-access", culprit: "normalize_header_name", signal: "EXC_BAD_ACCESS" },
  "illegal-instruction": { exception: () => ({ type: EXC_BAD_INSTRUCTION, code: 1 }), kind: "illegal-instruction", culprit: "decode_message", signal: "EXC_BAD_INSTRUCTION" },
  "bad-jump": { exception: () => ({ type: EXC_BAD_ACCESS, code: KERN_INVALID_ADDRESS, address: 0n }), kind: "bad-jump", culprit: "dispatch_command", signal: "EXC_BAD_ACCESS" },
  "cpp-null-deref": { exception: (address) => ({ type: EXC_BAD_ACCESS, code: KERN_INVALID_ADDRESS, address }), kind: "null-dereference", culprit: "Session::idle_seconds", signal: "EXC_BAD_ACCESS" },
};

/** A build of the fixture other than the default one, and whether its .sym has INLINE records (dump_syms -d). */
interface Build {
  flags: string[];
  inlines: boolean;
}

async function macDump(name: string, spec: Case, build: Build = { flags: [], inlines: false }): Promise<{ dump: string; modules: MacModule[] }> {
  const built = await buildCore(name, { flags: build.flags });
  const tag = build.flags.length > 0 ? `${name}${build.flags.join("")}` : name;
  const linux = path.join(dir, `${tag}.linux.dmp`);
  await breakpadMinidumpFromCore(built.core, built.exe, linux);
  const { modules, faultAddress } = macModulesOf(linux, name);
  await writeMacSymbols(built.exe, name, modules[0]?.uuid ?? Buffer.alloc(16), store, { inlines: build.inlines });
  let bytes = asMacMinidump(readFileSync(linux), modules, spec.exception(faultAddress));
  if (spec.annotations) bytes = withCrashpadInfo(bytes, spec.annotations);
  const dump = path.join(dir, `${tag}.mac.dmp`);
  writeFileSync(dump, bytes);
  return { dump, modules };
}

describe.each([
  ["tuned", CASES],
  ["held out", HELD_OUT],
] as const)("a macOS minidump of a real crash (%s)", (_set, cases) => {
  it.each(Object.keys(cases))("%s: the Mach exception's kind, the culprit symbolized from its UUID's .sym", async (name) => {
    const spec = cases[name] as Case;
    const { dump } = await macDump(name, spec);
    const run = await runCli(["triage", dump, "--json", "--debugger", "lldb", "--symbols", store]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout) as Crash;
    expect(crash).toMatchObject({ kind: spec.kind, signal: spec.signal, culprit: { function: spec.culprit, line: culpritLine(name) } });
    expect(crash.culprit.module).toMatch(new RegExp(`/Applications/${name}\\.app/Contents/MacOS/${name}$`));
    if (spec.message) expect(crash.message ?? "").toMatch(spec.message);
  }, 120_000);
});

describe("a macOS minidump of an optimized build, its .sym with INLINE records", () => {
  // At -O2 the culprit's code is inlined into its caller: only the .sym's INLINE records name it.
  // The stack is scanned where it stopped in a system library (strlen, abort), whose unwind
  // information is not here, so the culprit is named from a return address inside inlined code.
  it.each([
    ["div-zero", { type: EXC_ARITHMETIC, code: 1 }, "division-by-zero", "average_latency", 0],
    ["index-out-of-bounds", { type: EXC_BAD_ACCESS, code: KERN_INVALID_ADDRESS }, "invalid-memory-access", "claim_slot", 0],
    // The fd read on the marked line is dropped at -O2 (nothing uses it): the fault is the next line's.
    ["null-deref", { type: EXC_BAD_ACCESS, code: KERN_INVALID_ADDRESS }, "null-dereference", "send_to_client", 1],
    ["null-arg", { type: EXC_BAD_ACCESS, code: KERN_INVALID_ADDRESS }, "null-dereference", "log_line_length", 0],
    ["abort", { type: EXC_CRASH, code: SIGABRT << 24 }, "abort", "validate_config", 0],
  ] as const)("%s: the culprit is the inlined function at its line", async (name, exception, kind, culprit, linesBelowMarker) => {
    const spec: Case = { exception: (address) => ({ ...exception, ...(exception.type === EXC_BAD_ACCESS ? { address } : {}) }), kind, culprit, signal: "" };
    const { dump } = await macDump(name, spec, { flags: ["-O2"], inlines: true });
    const run = await runCli(["triage", dump, "--json", "--debugger", "lldb", "--symbols", store]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout) as Crash;
    expect(crash).toMatchObject({ kind, culprit: { function: culprit, file: expect.stringMatching(new RegExp(`/${name}\\.c$`)), line: culpritLine(name) + linesBelowMarker } });
    expect(crash.signature.startsWith(`${kind} | ${culprit}`), crash.signature).toBe(true);
  }, 120_000);
});

it("a Mac dump's platform and Mach exception are read from the file", async () => {
  const { dump } = await macDump("null-write", CASES["null-write"] as Case);
  const file = DumpFile.open(dump);
  try {
    const facts = readMinidump(file);
    expect(facts.platform).toMatchObject({ os: "macos", arch: "x86_64" });
    expect(facts.stopReason).toMatchObject({ type: "exception", code: "0x00000001", flags: 1 });
    expect(facts.modules[0]?.path).toBe("/Applications/null-write.app/Contents/MacOS/null-write");
  } finally {
    file.close();
  }
}, 120_000);
