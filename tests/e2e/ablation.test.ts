/**
 * The issue's acceptance test: a fact the dump does not hold must never be treated as evidence of
 * the opposite. Every format the tests have (kernel cores of the fixture programs, Breakpad and
 * Crashpad minidumps of them, Wine-written Windows minidumps, macOS minidumps, Go cores, Debian's
 * stripped programs) is triaged with all its evidence, then again with one piece taken away
 * (tests/helpers/ablation.ts), and the verdicts compared (tests/helpers/verdict-change.ts): a
 * verdict may become less specific, never another kind, another culprit, another line or a higher
 * exploitability rating. The report (every run, each change's before and after) is printed and
 * written beside the runs. Real dumps, real gdb, LLDB and Delve.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DumpFile, readMinidump } from "../../src/debuggers/dumpfile/index.js";
import type { Crash, CrashKind } from "../../src/report/schema.js";
import { ABLATIONS, type AblationName, type DumpFormat, type TriageCase } from "../helpers/ablation.js";
import { breakpadMinidumpFromCore } from "../helpers/breakpad.js";
import { runCli } from "../helpers/cli.js";
import { buildCore } from "../helpers/cores.js";
import { withCrashpadInfo } from "../helpers/crashpad-info.js";
import { coreAtCrash } from "../helpers/dumped.js";
import { buildGoCore } from "../helpers/go.js";
import { asMacMinidump, macModulesOf, writeMacSymbols, type MachException } from "../helpers/mac-minidump.js";
import { tempDirs } from "../helpers/temp-dirs.js";
import { classifyChange, ratingCrossedUnknown, verdictOf, type ChangeClass, type Verdict } from "../helpers/verdict-change.js";
import { buildMinidump, missingWindowsTools, WINE_DLLS } from "../helpers/windows.js";

const tempDir = tempDirs();
const dumps = tempDir("dumpdbg-ablation-dumps-");

/**
 * Violations the code still has, each a (case, ablation) pair with its reason. The test fails on a
 * violation not listed here and on a listed pair that no longer violates, so this list can only
 * shrink. None is left: a new one is a bug to mend, not a row to add.
 */
const KNOWN_VIOLATIONS: { case: string; ablation: AblationName; reason: string }[] = [];

/** At most this many dumpdbg runs at once: the machine's two CPUs are shared. */
const RUNS_AT_ONCE = 2;

// ---- the base cases --------------------------------------------------------------------------

interface BaseCase {
  /** `format/name`, the row's name in the report. */
  id: string;
  /** What triage says with all the evidence: the verdict every ablation is compared against. */
  expected: { kind: CrashKind; culprit: string | null };
  make(): Promise<TriageCase>;
}

const SIGABRT = 6;
const EXC_BAD_ACCESS = 1;
const EXC_CRASH = 10;
const KERN_INVALID_ADDRESS = 1;

async function kernelCore(name: string): Promise<TriageCase> {
  const built = await buildCore(name);
  return { name, format: "core", dump: built.core, args: ["--exe", built.exe], program: built.exe, debugInfo: true };
}

/** Breakpad's minidump of the fixture's crash, read where the program still lies at the path it names. */
async function breakpadDump(name: string): Promise<TriageCase> {
  const built = await buildCore(name);
  const dump = path.join(dumps, `${name}.dmp`);
  await breakpadMinidumpFromCore(built.core, built.exe, dump);
  return { name, format: "breakpad", dump, args: [], program: built.exe, debugInfo: true };
}

function minidumpModules(dump: string): string[] {
  const file = DumpFile.open(dump);
  try {
    return readMinidump(file).modules.map((module) => module.path);
  } finally {
    file.close();
  }
}

/** The Breakpad dump with Crashpad's stream: the process's keys, and libc's last words as its module annotation. */
async function crashpadDump(name: string): Promise<TriageCase> {
  const plain = await breakpadDump(name);
  const libc = minidumpModules(plain.dump).findIndex((module) => /\/libc\.so\.6$/.test(module));
  const dump = path.join(dumps, `${name}-crashpad.dmp`);
  const annotations = name === "abort" ? [{ index: libc, list: ["abort() called"] }] : [];
  writeFileSync(dump, withCrashpadInfo(readFileSync(plain.dump), { simple: { prod: "config-service", ver: "4.2.1" }, modules: [{ index: 0, simple: { build: "release" } }, ...annotations] }));
  return { ...plain, format: "crashpad", dump };
}

/** The Breakpad dump rewritten as a Mac client writes it (see macos-minidump.test.ts), symbolized from a store by the image's UUID. */
async function macDump(name: string, exception: (faultAddress: bigint) => MachException): Promise<TriageCase> {
  const plain = await breakpadDump(name);
  const { modules, faultAddress } = macModulesOf(plain.dump, name);
  const store = path.join(dumps, "mac-symbols");
  await writeMacSymbols(plain.program as string, name, modules[0]?.uuid ?? Buffer.alloc(16), store);
  const dump = path.join(dumps, `${name}.mac.dmp`);
  writeFileSync(dump, asMacMinidump(readFileSync(plain.dump), modules, exception(faultAddress)));
  return { name, format: "macos", dump, args: ["--debugger", "lldb", "--symbols", store], program: null, debugInfo: false };
}

/** Wine's dump of the Windows fixture, beside its program; the system DLLs handed over as a sysroot. */
async function wineDump(name: string): Promise<TriageCase> {
  const built = await buildMinidump(name);
  return { name, format: "wine", dump: built.dump, args: ["--debugger", "lldb", "--modules-path", WINE_DLLS], program: built.exe, debugInfo: true };
}

/** Go's debug build; the debugger is dumpdbg's choice (Delve where installed, gdb for a program without DWARF). */
async function goCore(name: string): Promise<TriageCase> {
  const built = await buildGoCore(name);
  return { name, format: "go", dump: built.core, args: ["--exe", built.exe], program: built.exe, debugInfo: true };
}

/** A Debian program, stripped as it ships, crashed under gdb; its program found from the core's notes. */
async function debianCore(name: string, argv: string[]): Promise<TriageCase> {
  const dump = coreAtCrash(path.join(dumps, `${name}.core`), argv);
  return { name, format: "debian", dump, args: [], program: null, debugInfo: false };
}

const base = (format: DumpFormat, name: string, kind: CrashKind, culprit: string | null, make: () => Promise<TriageCase>): BaseCase => ({ id: `${format}/${name}`, expected: { kind, culprit }, make });

const wine = missingWindowsTools().length === 0;

const BASES: BaseCase[] = [
  base("core", "null-write", "null-dereference", "cache_store", () => kernelCore("null-write")),
  base("core", "bad-jump", "bad-jump", "dispatch_command", () => kernelCore("bad-jump")),
  base("core", "wild-pointer", "invalid-memory-access", "buffer_length", () => kernelCore("wild-pointer")),
  base("core", "abort", "abort", "validate_config", () => kernelCore("abort")),
  base("core", "assert", "assertion-failure", "ring_buffer_write", () => kernelCore("assert")),
  base("core", "double-free", "double-free", "connection_destroy", () => kernelCore("double-free")),
  base("core", "stack-smash", "stack-buffer-overflow", "parse_login", () => kernelCore("stack-smash")),
  base("core", "uncaught-exception", "uncaught-exception", "read_field", () => kernelCore("uncaught-exception")),
  base("core", "stack-overflow", "stack-overflow", "parse_value", () => kernelCore("stack-overflow")),
  base("core", "deadlock", "deadlock", "transfer_funds", () => kernelCore("deadlock")),
  base("breakpad", "null-deref", "null-dereference", "send_to_client", () => breakpadDump("null-deref")),
  base("breakpad", "write-rodata", "invalid-memory-access", "normalize_header_name", () => breakpadDump("write-rodata")),
  base("breakpad", "bad-jump", "bad-jump", "dispatch_command", () => breakpadDump("bad-jump")),
  base("breakpad", "abort-msg", "heap-corruption", "release_token", () => breakpadDump("abort-msg")),
  base("breakpad", "assert", "assertion-failure", "ring_buffer_write", () => breakpadDump("assert")),
  base("breakpad", "fortify", "fortify-failure", "set_greeting", () => breakpadDump("fortify")),
  base("breakpad", "pure-virtual", "pure-virtual-call", "OutputStream::close", () => breakpadDump("pure-virtual")),
  base("breakpad", "div-zero", "division-by-zero", "average_latency", () => breakpadDump("div-zero")),
  base("breakpad", "illegal-instruction", "illegal-instruction", "decode_message", () => breakpadDump("illegal-instruction")),
  base("crashpad", "abort", "abort", "validate_config", () => crashpadDump("abort")),
  base("crashpad", "null-write", "null-dereference", "cache_store", () => crashpadDump("null-write")),
  base("macos", "null-write", "null-dereference", "cache_store", () => macDump("null-write", (address) => ({ type: EXC_BAD_ACCESS, code: KERN_INVALID_ADDRESS, address }))),
  base("macos", "abort", "abort", "validate_config", () => macDump("abort", () => ({ type: EXC_CRASH, code: SIGABRT << 24 }))),
  ...(wine
    ? [
        base("wine", "config-null", "null-dereference", "listen_port", () => wineDump("config-null")),
        base("wine", "uncaught", "uncaught-exception", "read_field", () => wineDump("uncaught")),
        base("wine", "deadlock", "deadlock", "transfer_funds", () => wineDump("deadlock")),
      ]
    : []),
  base("go", "nil-pointer", "null-dereference", "main.charge", () => goCore("nil-pointer")),
  base("go", "nil-map", "panic", "main.(*Cache).Put", () => goCore("nil-map")),
  base("go", "lock-order", "deadlock", "main.transfer", () => goCore("lock-order")),
  base("debian", "python-ctypes-null", "null-dereference", "<module>", () => debianCore("python-ctypes-null", ["/usr/bin/python3", "-c", "import ctypes; ctypes.string_at(0)"])),
  base("debian", "perl-posix-abort", "abort", null, () => debianCore("perl-posix-abort", ["/usr/bin/perl", "-MPOSIX", "-e", "POSIX::abort()"])),
  base("debian", "bash-kill-self", "unknown", "kill_builtin", () => debianCore("bash-kill-self", ["/bin/bash", "-c", "kill -SEGV $$"])),
];

// ---- running triage --------------------------------------------------------------------------

/** What one `dumpdbg triage --json` run gave: a verdict, a refusal (exit 3, one line), or a failure. */
type Outcome = { verdict: Verdict } | { refused: string } | { failed: string };

async function triage(run: TriageCase): Promise<Outcome> {
  const result = await runCli(["triage", run.dump, ...run.args, "--json"]);
  if (result.code === 0) return { verdict: verdictOf(JSON.parse(result.stdout) as Crash) };
  const said = result.stderr.trim().split("\n").at(-1) ?? "";
  return result.code === 3 ? { refused: said } : { failed: `exit ${result.code ?? result.signal}: ${said}` };
}

/** Runs the tasks `width` at a time, results in the tasks' order. */
async function pooled<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    for (let task = next++; task < tasks.length; task = next++) results[task] = await (tasks[task] as () => Promise<T>)();
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker));
  return results;
}

// ---- the comparison --------------------------------------------------------------------------

type RowClass = ChangeClass | "refused" | "failed";

interface Row {
  case: string;
  format: DumpFormat;
  ablation: AblationName;
  before: Verdict;
  after: Outcome;
  class: RowClass;
  /** What changed, and for changed-class which change broke the rule. */
  changes: string[];
  violations: string[];
  /** Allowed by the rule but worth a reader's eye (a rating that fell past unknown). */
  notes: string[];
}

/**
 * A core whose program is not at hand is refused with one line asking for --exe: the design's
 * contract for cores, no verdict at all. Any other refusal, and any failure, breaks the rule.
 */
function refusalAllowed(format: DumpFormat, ablation: AblationName): boolean {
  return ablation === "without-executable" && (format === "core" || format === "go" || format === "debian");
}

function compare(id: string, format: DumpFormat, ablation: AblationName, before: Verdict, after: Outcome): Row {
  const row = { case: id, format, ablation, before, after, notes: [] as string[] };
  if ("refused" in after) {
    const allowed = refusalAllowed(format, ablation);
    return { ...row, class: allowed ? "refused" : "failed", changes: [after.refused], violations: allowed ? [] : [`refused: ${after.refused}`] };
  }
  if ("failed" in after) return { ...row, class: "failed", changes: [after.failed], violations: [after.failed] };
  const change = classifyChange(before, after.verdict);
  const notes = ratingCrossedUnknown(before, after.verdict) ? [`rating fell past unknown: ${before.rating} → ${after.verdict.rating}`] : [];
  return { ...row, class: change.class, changes: change.changes, violations: change.violations, notes };
}

const isViolation = (row: Row) => row.class === "changed-class" || row.class === "failed";
const isKnown = (row: Row) => KNOWN_VIOLATIONS.some((known) => known.case === row.case && known.ablation === row.ablation);

// ---- the report ------------------------------------------------------------------------------

const rows: Row[] = [];
let baseRuns = 0;

function shown(outcome: Outcome | { verdict: Verdict }): string {
  if ("refused" in outcome) return "refused";
  if ("failed" in outcome) return "failed";
  const { kind, culprit, rating } = outcome.verdict;
  return `${kind} / ${culprit.function ?? (culprit.module ? `?? in ${path.basename(culprit.module)}` : "unknown")}${culprit.line === null ? "" : `:${culprit.line}`} / ${rating}`;
}

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

function report(): string {
  const count = (wanted: RowClass) => rows.filter((row) => row.class === wanted).length;
  const lines = [
    "# Ablation report",
    "",
    `Runs: ${baseRuns + rows.length} (${baseRuns} with all the evidence, ${rows.length} with some taken away). ` +
      `Same: ${count("same")}. Less specific: ${count("less-specific")}. Changed class: ${count("changed-class")}. ` +
      `Refused: ${count("refused")}. Failed: ${count("failed")}. Known violations listed: ${KNOWN_VIOLATIONS.length}.`,
    "",
    `Ablations: ${ABLATIONS.map((ablation) => `${ablation.name} (${ablation.lacks})`).join("; ")}.`,
    "",
    "Verdicts read kind / culprit:line / exploitability rating.",
    "",
    "| case | format | ablation | before | after | class | what changed |",
    "|---|---|---|---|---|---|---|",
    ...rows.map((row) => {
      const cells = [row.case, row.format, row.ablation, shown({ verdict: row.before }), shown(row.after), row.class + (isViolation(row) && isKnown(row) ? " (known)" : ""), [...row.changes, ...row.notes].join("; ")];
      return `| ${cells.map(cell).join(" | ")} |`;
    }),
  ];
  return `${lines.join("\n")}\n`;
}

// ---- the tests -------------------------------------------------------------------------------

describe("triage with evidence taken away never gives another verdict", () => {
  it.each(BASES.map((bc) => [bc.id, bc] as const))("%s", async (_id, bc) => {
    const full = await bc.make();
    const ablations = ABLATIONS.filter((ablation) => ablation.appliesTo(full));
    expect(ablations.length).toBeGreaterThan(0);
    const cases = ablations.map((ablation) => ablation.make(full, tempDir));
    const [first, ...after] = await pooled([full, ...cases].map((run) => () => triage(run)), RUNS_AT_ONCE);
    baseRuns++;

    expect(first && "verdict" in first, `${bc.id} with all its evidence: ${JSON.stringify(first)}`).toBe(true);
    const before = (first as { verdict: Verdict }).verdict;
    expect({ kind: before.kind, culprit: before.culprit.function }).toEqual(bc.expected);

    const compared = ablations.map((ablation, i) => compare(bc.id, full.format, ablation.name, before, after[i] as Outcome));
    rows.push(...compared);
    const unexpected = compared.filter((row) => isViolation(row) && !isKnown(row)).map((row) => `${row.ablation}: ${row.violations.join("; ")}`);
    const fixed = KNOWN_VIOLATIONS.filter((known) => known.case === bc.id && !compared.some((row) => row.ablation === known.ablation && isViolation(row)));
    expect(unexpected, "violations not in KNOWN_VIOLATIONS").toEqual([]);
    expect(fixed.map((known) => `${known.ablation} no longer violates: remove it from KNOWN_VIOLATIONS`)).toEqual([]);
  }, 240_000);

  it("reports every run and each change's class, before and after", () => {
    const text = report();
    const file = path.join(tempDir("dumpdbg-ablation-report-"), "ablation-report.md");
    writeFileSync(file, text);
    console.log(`${text}\n(written to ${file})`);
    expect(rows.length).toBeGreaterThan(BASES.length);
    // Every format the tests have was ablated.
    expect(new Set(rows.map((row) => row.format))).toEqual(new Set(BASES.map((bc) => bc.id.split("/")[0])));
    // Every listed violation names a case and an ablation that ran.
    for (const known of KNOWN_VIOLATIONS) expect(rows.some((row) => row.case === known.case && row.ablation === known.ablation), `${known.case} ${known.ablation}`).toBe(true);
  });
});
