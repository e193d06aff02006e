/**
 * `dumpdbg analyze --provider offline` on Go services' cores, from the user's side: the Go
 * playbooks read the runtime's verdict against the culprit's line, so the conclusion names the
 * culprit, the runtime's message and a Go remedy; the chat then answers which goroutine panicked
 * and what the map held, from triage's reading of the runtime.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ReportSchema, type Report } from "../../src/report/schema.js";
import { pipeChat, runCli } from "../helpers/cli.js";
import { hasDlv } from "../helpers/dlv-core.js";
import { buildGoCore, goCulpritLine, type GoBuildOptions } from "../helpers/go.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const EXPECTED: Record<string, { culprit: string; says: RegExp[]; recommends: RegExp }> = {
  "nil-map": { culprit: "main.(*Cache).Put", says: [/assignment to entry in nil map/, /`c\.entries`/, /never initialised with make/], recommends: /make\(map\[string\]string\)/ },
  "index-range": { culprit: "main.(*Queue).Next", says: [/index out of range \[5\] with length 3/, /`q\.jobs`/, /`q\.cursor`/], recommends: /len\(q\.jobs\)/ },
  "concurrent-map": { culprit: "main.(*Stats).Record", says: [/fatal error: concurrent map writes/, /`s\.hits`/], recommends: /sync\.Mutex[\s\S]*sync\.Map|-race/ },
  "nil-pointer": { culprit: "main.charge", says: [/nil pointer dereference/, /`job\.Owner`/, /address 0x0/], recommends: /`job\.Owner` for nil/ },
  "panic-string": { culprit: "main.(*Ledger).Post", says: [/"ledger out of balance"/, /`panic\("ledger out of balance"\)`/], recommends: /return an error/ },
  hang: { culprit: "main.dispatch", says: [/while holding `r\.mu`/, /goroutine \d+ waits on a sync\.Mutex in `main\.\(\*Registry\)\.Report`/, /`<-done`/], recommends: /Do not hold `r\.mu` across a channel operation/ },
  "out-of-memory": { culprit: "main.(*Spool).Begin", says: [/fatal error: (runtime: )?out of memory/, /`make\(\[\]byte, declared\)` sized by `declared`/, /not necessarily what holds the memory/], recommends: /Bound `declared`[\s\S]*GOMEMLIMIT/ },
  deadlock: { culprit: "main.(*Server).Shutdown", says: [/all goroutines are asleep/, /chan receive/, /`return <-s\.acks`/], recommends: /close the channel|time\.After/ },
};

/** The folders the analyses ran in, removed once the file's tests (run concurrently) are done. */
const tempDir = tempDirs();

async function analyze(name: string, options: GoBuildOptions & { debugger?: string } = {}): Promise<{ report: Report; dir: string }> {
  const built = await buildGoCore(name, options);
  const dir = tempDir(`dumpdbg-go-analyze-${name}-`);
  const chosen = options.debugger ? ["--debugger", options.debugger] : [];
  const result = await runCli(["analyze", built.core, "--exe", built.exe, ...chosen, "--provider", "offline", "--json", "--out", "reports", "--sessions-dir", "sessions"], { cwd: dir });
  expect(result.stderr).not.toMatch(/^dumpdbg: internal error/m);
  expect(result.code, result.stderr).toBe(0);
  return { report: ReportSchema.parse(JSON.parse(result.stdout)), dir };
}

describe("dumpdbg analyze, offline, on Go services' cores", () => {
  it.concurrent.each(Object.keys(EXPECTED))("%s", async (name) => {
    const expected = EXPECTED[name]!;
    const { report } = await analyze(name);
    expect(report.crash.culprit.function).toBe(expected.culprit);
    const { summary, rootCause, recommendations, confidence } = report.conclusion;
    expect(summary).toContain(expected.culprit);
    expect(summary).toContain(`main.go:${goCulpritLine(name)}`);
    for (const pattern of expected.says) expect(`${summary} ${rootCause}`).toMatch(pattern);
    expect(recommendations.join("\n")).toMatch(expected.recommends);
    expect(confidence).toBeGreaterThanOrEqual(0.7);
    expect(report.hypotheses.some((h) => h.status === "confirmed")).toBe(true);
    expect(report.hypotheses.some((h) => h.status === "rejected")).toBe(true);
    const evidence = new Set(report.evidence.map((e) => e.id));
    for (const h of report.hypotheses) for (const id of h.evidenceIds) expect(evidence.has(id), `${h.id} cites ${id}`).toBe(true);
  });

  it("answers in the chat which goroutine panicked and what was in the nil map", async () => {
    const { report, dir } = await analyze("nil-map");
    const questions = ["which goroutine panicked?", "what was in the map?"];
    const chat = await pipeChat(["chat", report.session.id, "--sessions-dir", "sessions", "--out", "reports", "--provider", "offline"], dir, `${questions.join("\n")}\n`);
    expect(chat.code, chat.stderr).toBe(0);
    const [goroutine, map] = chat.stdout.trim().split("\n\n");
    expect(goroutine).toMatch(/^Goroutine \d+ panicked in `main\.\(\*Cache\)\.Put` at \S*main\.go:15: assignment to entry in nil map \[E\d+\]/);
    expect(map).toMatch(/^Nothing: `c\.entries` was a nil map — it was never made with make/);
    expect(map).toMatch(/\[E\d+\]/);
  });

  it("answers in the chat which goroutine a hang is blamed on, and what the others wait on", async () => {
    const { report, dir } = await analyze("hang");
    const chat = await pipeChat(["chat", report.session.id, "--sessions-dir", "sessions", "--out", "reports", "--provider", "offline"], dir, "which goroutine?\n");
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(/^Goroutine \d+ is the one blamed: it waits on chan receive in `main\.dispatch` at \S*main\.go:34 \[E\d+\]\. The others of the program's own:$/m);
    expect(chat.stdout).toMatch(/^  goroutine \d+ waits on a sync\.Mutex in `main\.\(\*Registry\)\.Report`$/m);
  });

  it.skipIf(!hasDlv())("prints the culprit's variables through Delve, whose unwind reaches the goroutine's frame", async () => {
    const { report } = await analyze("nil-map", { debugger: "dlv" });
    expect(report.conclusion.rootCause).toMatch(/In the culprit's frame, `c` = .*entries: map\[string\]string nil/);
  });

  it.skipIf(!hasDlv())("prints the size an out-of-memory allocation asked for through Delve", async () => {
    const { report } = await analyze("out-of-memory", { debugger: "dlv" });
    expect(report.conclusion.rootCause).toMatch(/In the culprit's frame, `declared` = 16777216\b/);
  });

  it.skipIf(!hasDlv())("draws a lock-order deadlock's cycle through Delve, and says to take the locks in one order", async () => {
    const { report, dir } = await analyze("lock-order", { debugger: "dlv" });
    const { summary, rootCause, recommendations, confidence } = report.conclusion;
    // Delve numbers goroutines as threads: the report says goroutines.
    const markdown = readFileSync(path.join(dir, "reports", `${report.session.id}.md`), "utf8");
    expect(markdown).toMatch(/^# Deadlock in `main\.transfer` over `to\.mu` \(goroutines \d+ and \d+\)$/m);
    expect(markdown).toMatch(/\*\*Cycle:\*\* goroutine \d+ → goroutine \d+/);
    expect(summary).toMatch(/^All goroutines were asleep: goroutines \d+ and \d+ each hold the sync\.Mutex the other waits to lock, in `main\.transfer` at `to\.mu\.Lock\(\)`, having locked `from\.mu` first \(line 24\): a lock-order inversion\.$/);
    expect(rootCause).toMatch(/goroutine \d+ waits in `main\.transfer` \(main\.go:27\) to lock `to\.mu` \(0x[0-9a-f]+\), which goroutine \d+ holds; goroutine \d+ waits in `main\.transfer` \(main\.go:27\) to lock `to\.mu` \(0x[0-9a-f]+\), which goroutine \d+ holds/);
    expect(recommendations[0]).toMatch(/^Take the locks in one order whatever the call's direction/);
    expect(confidence).toBe(0.9);
    expect(report.hypotheses.find((h) => /lock-order inversion/.test(h.statement))?.status).toBe("confirmed");
  });

  it("groups a lock-order deadlock's goroutines by the mutex each waits on through gdb, and does not claim who holds them", async () => {
    const { report } = await analyze("lock-order", { debugger: "gdb" });
    const { summary, recommendations, confidence } = report.conclusion;
    expect(summary).toMatch(/^All goroutines were asleep: 2 goroutines wait to lock 2 different sync\.Mutexes — 0x[0-9a-f]+ \(goroutine \d+\), 0x[0-9a-f]+ \(goroutine \d+\)/);
    expect(summary).toMatch(/while holding `from\.mu` \(locked at line 24\); which goroutine holds which mutex is not shown through this debugger\.$/);
    expect(recommendations[0]).toMatch(/^Read the core with Delve/);
    expect(confidence).toBe(0.5);
    expect(report.hypotheses.find((h) => /lock-order inversion/.test(h.statement))?.status).toBe("inconclusive");
  });

  it("says the map's value is unknown through gdb, whose unwind stops at the signal trampoline, and still decides from the runtime", async () => {
    const { report } = await analyze("nil-map", { debugger: "gdb" });
    expect(report.conclusion.rootCause).toMatch(/The value of `c\.entries` is not printed: the culprit's frame is not on the stack the debugger unwinds/);
    expect(report.conclusion.confidence).toBeGreaterThanOrEqual(0.7);
  });

  it("reads a build as shipped, whose Put is inlined into main, from the CULPRIT line the line table keeps", async () => {
    const { report } = await analyze("nil-map", { optimized: true });
    expect(report.crash.culprit.line).toBe(goCulpritLine("nil-map"));
    expect(report.conclusion.summary).toMatch(/^`main\.main` \(main\.go:15, in `\(\*Cache\)\.Put` inlined into it\) wrote to a nil map — `c\.entries`/);
    expect(report.conclusion.rootCause).not.toMatch(/unreadable/);
  });
});
