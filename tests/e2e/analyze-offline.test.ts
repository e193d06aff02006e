/**
 * `dumpdbg analyze --provider offline` through the built CLI on a real core of every fixture:
 * the whole graph runs on the offline brain, and the report must name the kind, the culprit
 * function and line, judge its hypotheses on evidence that exists, and say why in specific terms.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ReportSchema, type CrashKind, type Report } from "../../src/report/schema.js";
import { pipeChat, runCli } from "../helpers/cli.js";
import { buildCore, culpritLine, fixtureNames, type BuildOptions } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

interface Expected {
  kind: CrashKind;
  culprit: string;
  /** What the conclusion (summary and root cause) must say for this crash. */
  says: RegExp[];
  /** The dump cannot rule the alternatives out (a flipped bit looks like garbage that happens to be close). */
  alternativesStayOpen?: boolean;
}

const EXPECTED: Record<string, Expected> = {
  "null-deref": { kind: "null-dereference", culprit: "send_to_client", says: [/`session->client`/, /NULL/, /client_disconnect/, /null-deref\.c:22/, /i = 1/] },
  "bit-flip": { kind: "invalid-memory-access", culprit: "total_traffic", says: [/one bit \(bit 41\) inverted/, /hardware memory error/, /`table->slots\[i\]`/], alternativesStayOpen: true },
  "null-write": { kind: "null-dereference", culprit: "cache_store", says: [/`entry`/, /cache_find_slot/, /return NULL/] },
  deadlock: { kind: "deadlock", culprit: "transfer_funds", says: [/Thread 2/, /Thread 3/, /`from->lock`/, /`to->lock`/, /deadlock\.c:23/, /lock-order inversion/] },
  "stack-overflow": { kind: "stack-overflow", culprit: "parse_value", says: [/recursed about [\d,]+ times/, /stack-overflow\.c:32/, /position = \d+/, /limits the depth/] },
  "uncaught-exception": { kind: "uncaught-exception", culprit: "read_field", says: [/std::runtime_error/, /"version"/, /no `catch`/] },
  "out-of-range": { kind: "uncaught-exception", culprit: "score_at_rank", says: [/called `std::vector::at`, which threw `std::out_of_range`/, /print_podium/] },
  assert: { kind: "assertion-failure", culprit: "ring_buffer_write", says: [/= 71/, /= 64/, /71 <= 64 is false/, /ring_buffer_free_space/] },
  "double-free": { kind: "double-free", culprit: "connection_destroy", says: [/double-free\.c:15/, /connection_close/, /double free detected/] },
  "off-by-one-free": { kind: "heap-corruption", culprit: "message_free", says: [/"double free or corruption \(!prev\)"/, /the in-use bit clear/, /message_set_subject/] },
  "rust-panic": { kind: "panic", culprit: "rust_panic::price_of", says: [/Option::expect/, /None/, /"kiwi"/] },
  "heap-corruption": { kind: "heap-corruption", culprit: "copy_request_body", says: [/corrupted top size/, /format_log_line/, /heap-corruption\.c:10/] },
  "bad-jump": { kind: "bad-jump", culprit: "dispatch_command", says: [/`command->handler`/, /"stats", NULL/] },
  "wild-pointer": { kind: "invalid-memory-access", culprit: "buffer_length", says: [/0xdeadbeef000/, /no mapping/, /handle_to_buffer/] },
  "write-rodata": { kind: "invalid-memory-access", culprit: "normalize_header_name", says: [/\.rodata/, /add_header\("Content-Type"/, /literal/] },
  "stack-smash": { kind: "stack-buffer-overflow", culprit: "parse_login", says: [/`username` holds 16 bytes/, /`i` = 48/, /stack-smash\.c:12/] },
  "abort-msg": { kind: "heap-corruption", culprit: "release_token", says: [/3 bytes into/, /read_token/, /token\+\+/] },
  abort: { kind: "abort", culprit: "validate_config", says: [/`config->workers` = 0/, /workers must be positive/] },
  "div-zero": { kind: "division-by-zero", culprit: "average_latency", says: [/`stats->requests`, which was 0/, /\/export/] },
  "illegal-instruction": { kind: "illegal-instruction", culprit: "decode_message", says: [/ud2/, /`frame\[0\]` was 9/] },
  "bus-error": { kind: "bus-error", culprit: "count_lines", says: [/dumpdbg-log-/, /BUS_ADRERR/, /deleted/] },
  fortify: { kind: "fortify-failure", culprit: "set_greeting", says: [/destlen = 17/, /needs 34 bytes/, /`greeting->text` is 24 bytes/] },
  "thread-crash": { kind: "null-dereference", culprit: "process_job", says: [/`job->request`/, /job = \{id = 17, request = 0x0\}/, /other 4 threads/] },
  "many-threads": { kind: "null-dereference", culprit: "count_request", says: [/`conn->session`/, /BROKEN_CONNECTION \? NULL/, /other 200 threads/] },
  "lost-wakeup": { kind: "hang", culprit: "pool_shutdown", says: [/all 4 threads are blocked waiting: 3 on a condition variable \(in worker_main\)/, /waits in `pool_shutdown` \(lost-wakeup\.c:56\)/, /`pthread_cond_signal`\/`pthread_cond_broadcast` that should follow a change to the state the waiters check/] },
  "debug-break": { kind: "breakpoint", culprit: "texture_bytes", says: [/`int3`/, /`VERIFY\(texture->width > 0 && texture->height > 0\);`/, /main → texture_bytes/] },
  "deadlock-3": { kind: "deadlock", culprit: "hand_over_item", says: [/Thread 4/, /`stage->own->lock`/, /`stage->next->lock`/, /lock-order inversion/] },
  "pure-virtual": { kind: "pure-virtual-call", culprit: "OutputStream::close", says: [/being destroyed/, /vtable for|vtable pointer is that of `OutputStream`/, /~ConsoleStream/] },
  "cpp-null-deref": { kind: "null-dereference", culprit: "Session::idle_seconds", says: [/`this`/, /nullptr/, /manager\.find\(id\)/, /id = 3/] },
  "rust-null": { kind: "null-dereference", culprit: "rust_null::nth_value", says: [/`\(\*node\)\.value`/, /index = 3/] },
  "rust-stack-overflow": { kind: "stack-overflow", culprit: "rust_stack_overflow::load", says: [/recursed about [\d,]+ times/, /rust-stack-overflow\.rs:28/] },
  "index-out-of-bounds": { kind: "invalid-memory-access", culprit: "claim_slot", says: [/`user_id` = 400000000/, /index far past the end of the block `table->owner_of_slot`/, /import_users/] },
  "dangling-callback": { kind: "bad-jump", culprit: "publish", says: [/held 0x[0-9a-f]+, not even a valid address/, /freed and reused/, /`bus->subscribers\[i\]->on_event`/] },
  "huge-frame": { kind: "stack-overflow", culprit: "render_scanline", says: [/64\.0 MiB stack frame/, /alloca\(width \* 4\)/, /no recursion/] },
  "null-arg": { kind: "null-dereference", culprit: "log_line_length", says: [/passed `req->agent` to `strlen`/, /agent = 0x0/] },
};


/** The folders the analyses ran in, removed once the file's tests (run concurrently) are done. */
const tempDir = tempDirs();

async function analyzeOffline(name: string, options: BuildOptions = {}): Promise<{ report: Report; stderr: string; dir: string }> {
  const built = await buildCore(name, options);
  const dir = tempDir(`dumpdbg-analyze-${name}-`);
  const result = await runCli(
    ["analyze", built.core, "--exe", built.exe, "--issue", `the ${name} service died`, "--provider", "offline", "--json", "--out", "reports", "--sessions-dir", "sessions"],
    { cwd: dir },
  );
  expect(result.stderr).not.toMatch(/^dumpdbg: internal error/m);
  expect(result.code, result.stderr).toBe(0);
  return { report: ReportSchema.parse(JSON.parse(result.stdout)), stderr: result.stderr, dir };
}

describe("dumpdbg analyze, offline, on optimized builds without debug info", () => {
  it("names the panicking API and the panic message of an inlined Rust expect", async () => {
    const { report } = await analyzeOffline("rust-panic", { flags: ["-C", "opt-level=2", "-C", "debuginfo=0"] });
    expect(report.crash.kind).toBe("panic");
    expect(report.crash.culprit.file).toBeNull();
    const { summary } = report.conclusion;
    expect(summary).toMatch(/called `Option::expect` on `None`/);
    expect(summary).toMatch(/"every SKU in an order has a price in the catalog"/);
    expect(summary).not.toMatch(/No symbol table/);
    expect(report.hypotheses.find((h) => h.status === "confirmed")).toBeDefined();
  });

  it("still explains a null dereference from registers and disassembly", async () => {
    const { report } = await analyzeOffline("null-deref", { flags: ["-O2", "-g0"] });
    expect(report.crash.kind).toBe("null-dereference");
    expect(report.crash.culprit.line).toBeNull();
    expect(report.conclusion.summary).toMatch(/NULL/);
    expect(report.conclusion.summary).not.toMatch(/No symbol table/);
  });
});

describe("dumpdbg analyze, offline", () => {
  it("has an expectation for every fixture program, so every crash kind is analysed", () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(fixtureNames());
  });

  it.concurrent.each(Object.keys(EXPECTED))("%s", async (name) => {
    const expected = EXPECTED[name] as Expected;
    const { report, stderr, dir } = await analyzeOffline(name);

    expect(report.crash.kind).toBe(expected.kind);
    expect(report.crash.culprit.function).toBe(expected.culprit);
    expect(report.crash.culprit.line).toBe(culpritLine(name));
    for (const format of ["md", "html", "json"]) expect(existsSync(path.join(dir, "reports", `${report.session.id}.${format}`))).toBe(true);
    expect(JSON.parse(readFileSync(path.join(dir, "reports", `${report.session.id}.json`), "utf8"))).toEqual(report);

    // Hypotheses: judged on evidence that exists, one of them confirmed, at least one alternative ruled on.
    const evidence = new Set(report.evidence.map((e) => e.id));
    expect(report.hypotheses.length).toBeGreaterThanOrEqual(2);
    expect(report.hypotheses.filter((h) => h.status === "confirmed").length).toBeGreaterThanOrEqual(1);
    if (!expected.alternativesStayOpen) expect(report.hypotheses.some((h) => h.status === "rejected")).toBe(true);
    for (const h of report.hypotheses) {
      expect(h.evidenceIds.length, `${h.id} cites no evidence`).toBeGreaterThan(0);
      for (const id of h.evidenceIds) expect(evidence.has(id), `${h.id} cites ${id}`).toBe(true);
    }

    // The conclusion names the culprit and its line, cites evidence that exists, and says the specific thing.
    const { summary, rootCause } = report.conclusion;
    const text = `${summary} ${rootCause}`;
    const shortName = expected.culprit.split("::").at(-1) as string;
    expect(summary).toContain(shortName);
    expect(summary).toContain(`${path.basename(report.crash.culprit.file ?? "")}:${culpritLine(name)}`);
    const cited = text.match(/\bE\d+\b/g) ?? [];
    expect(cited.length).toBeGreaterThan(0);
    for (const id of cited) expect(evidence.has(id), `the conclusion cites ${id}`).toBe(true);
    for (const pattern of expected.says) expect(text).toMatch(pattern);
    expect(report.conclusion.confidence).toBeGreaterThanOrEqual(expected.alternativesStayOpen ? 0.7 : 0.75);
    expect(report.conclusion.recommendations.length).toBeGreaterThanOrEqual(2);

    // Two critic rounds; what round 2 still found became 3–5 questions.
    expect(report.critique.rounds.map((r) => r.round)).toEqual([1, 2]);
    expect(report.critique.unresolved).toEqual(report.critique.rounds[1]?.issues);
    if ((report.critique.rounds[1]?.issues.length ?? 0) > 0) {
      expect(report.followUpQuestions.length).toBeGreaterThanOrEqual(3);
      expect(report.followUpQuestions.length).toBeLessThanOrEqual(5);
    }

    // A deadlock shows the cycle's stacks side by side from the waiting frames, and draws its graph.
    if (expected.kind === "deadlock") {
      const markdown = readFileSync(path.join(dir, "reports", `${report.session.id}.md`), "utf8");
      const columns = [...new Set(report.crash.deadlock?.cycle.map((e) => e.thread))].map((t) => `Thread ${t}`);
      expect(markdown).toContain(`### The cycle's stacks, side by side\n\n| ${columns.join(" | ")} |`);
      expect(markdown).toMatch(new RegExp(`^\\| #\\d+ \`${expected.culprit}\` at `, "m"));
      const html = readFileSync(path.join(dir, "reports", `${report.session.id}.html`), "utf8");
      expect(html).toMatch(/<figure class="picture"><svg [\s\S]*?<\/svg><figcaption>Who waits for whom/);
    }

    // Real measurements, no model.
    expect(report.usage.llmCalls).toBe(0);
    expect(report.timings.totalMs).toBeGreaterThan(0);
    expect(report.timings.debuggerMs).toBeGreaterThan(0);
    expect(report.timings.debuggerMs).toBeLessThanOrEqual(report.timings.totalMs);

    // Progress on stderr: which agent, which command, how long.
    expect(stderr).toMatch(/^\[hypothesis\] \d hypothes/m);
    expect(stderr).toMatch(/^\[tester\] H1: .+ \(E\d+, (\d+ ms|cached)\)$/m);
    expect(stderr).toMatch(/^\[critic\] round 2: /m);

    // The follow-up chat on the same session, offline: it answers from the report through the
    // same probes, and every answer cites evidence of this session.
    const questions = ["why did it crash?", "show me the registers", "list the threads"];
    const chat = await pipeChat(["chat", report.session.id, "--sessions-dir", "sessions", "--out", "reports", "--provider", "offline"], dir, `${questions.join("\n")}\n`);
    expect(chat.code, chat.stderr).toBe(0);
    const answers = chat.stdout.trim().split("\n\n");
    expect(answers).toHaveLength(questions.length);
    expect(answers[0]).toContain(shortName);
    for (const answer of answers) expect(answer, answer).toMatch(/\[E\d+/);
    expect(answers[1]).toMatch(/\b(rip|pc)\b/);
  });

  it("reads like a senior engineer wrote it: the null dereference's Markdown report", async () => {
    const { report, dir } = await analyzeOffline("null-deref");
    const markdown = readFileSync(path.join(dir, "reports", `${report.session.id}.md`), "utf8");
    expect(markdown).toMatch(/^# Null dereference in `send_to_client` \(`null-deref\.c:27`\)$/m);
    expect(markdown).toContain("## Hypotheses");
    expect(markdown).toMatch(/H1 · confirmed\*\* — `session->client` was NULL/);
    expect(markdown).toMatch(/H2 · rejected/);
    expect(markdown).toContain("## Follow-up questions");
    expect(markdown).toMatch(/`client_disconnect` sets it to NULL at null-deref\.c:22/);
  });
});
