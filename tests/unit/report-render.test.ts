import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Marked } from "marked";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  renderHtml,
  renderJson,
  renderMarkdown,
  ReportConflictError,
  writeReports,
  type ReportDocument,
} from "../../src/report/index.js";
import { drawPictures } from "../../src/report/pictures.js";
import { ReportSchema, type Report } from "../../src/report/schema.js";
import { excerptOf } from "../../src/agents/playbooks/source.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "dumpdbg-report-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const SERVER_C = [
  "#include <stdio.h>",
  "#include <stdlib.h>",
  "",
  "struct conn { int id; int fd; };",
  "",
  "static struct conn *clients[64];",
  "",
  "int handle_client(int slot) {",
  "    struct conn *c = clients[slot];",
  "    /* the client may have disconnected */",
  "    return c->fd;",
  "}",
  "",
  "int main(void) { return handle_client(3); }",
].join("\n");

function baseReport(): Report {
  return {
    schemaVersion: 1,
    session: {
      id: "20250301-101500-a1b2",
      dump: "/var/crash/core.server.4242",
      executable: "/opt/server/bin/server",
      debugger: "gdb 13.1",
      startedAt: "2025-03-01T10:15:00.000Z",
      finishedAt: "2025-03-01T10:15:41.250Z",
    },
    issue: "server dies when a client disconnects",
    crash: {
      kind: "null-dereference",
      signal: "SIGSEGV",
      signalCode: "SEGV_MAPERR",
      faultAddress: "0x4",
      access: "read",
      message: null,
      thread: { id: 1, lwp: 4242, name: "server" },
      culprit: { function: "handle_client", file: "/src/server.c", line: 11, column: null, frame: 0, module: "/opt/server/bin/server", language: null }, runtime: null,
      origin: { type: "fault", sender: null, evidence: "the signal record says SIGSEGV SEGV_MAPERR, the kernel's code for a fault of the instruction at the pc" },
      exploitability: { rating: "probably-not-exploitable", reasons: ["a read near NULL (0x4): the first page is never mapped"] },
      annotations: null,
      cut: null,
      signature: "null-dereference | handle_client | main | __libc_start_call_main",
      deadlock: null,
    },
    hypotheses: [
      { id: "H1", statement: "clients[3] is NULL after the client disconnected", status: "confirmed", evidenceIds: ["e1", "e2"] },
      { id: "H2", statement: "The stack is corrupted", status: "rejected", evidenceIds: ["e3"] },
      { id: "H3", statement: "Another thread freed the slot concurrently", status: "inconclusive", evidenceIds: [] },
    ],
    conclusion: {
      summary: "handle_client read c->fd through a NULL slot: the disconnect path clears clients[3] but the slot is still served.",
      rootCause: "The disconnect handler sets clients[slot] to NULL without removing the slot from the poll set.\n\nThe next event on that slot dereferences NULL at offset 4 (fd).",
      confidence: 0.9,
      recommendations: ["Remove the slot from the poll set before clearing it", "Check clients[slot] for NULL in handle_client"],
    },
    critique: {
      rounds: [
        { round: 1, issues: ["H3 was not tested against the other threads' stacks"] },
        { round: 2, issues: [] },
      ],
      unresolved: ["Whether a second thread touches clients[] at all"],
    },
    followUpQuestions: ["Which code path clears clients[slot]?"],
    evidence: [
      { id: "e1", command: "bt", summary: "3 frames; culprit handle_client at server.c:11", bytes: 412, path: null },
      { id: "e2", command: "print clients[3]", summary: "clients[3] is 0x0", bytes: 21, path: null },
      {
        id: "e3",
        command: "info proc mappings",
        summary: "stack mapping intact",
        bytes: 183_500,
        path: path.join("/tmp/dumpdbg-sessions/20250301-101500-a1b2/evidence/e3.txt"),
      },
    ],
    usage: { llmCalls: 7, local: { inputTokens: 5200, outputTokens: 800 }, cloud: { inputTokens: 12_400, outputTokens: 2100 }, modelsDown: [] },
    redactions: { count: 3, kinds: { token: 2, "aws-key": 1 } },
    timings: { totalMs: 41_250, debuggerMs: 3100, llmMs: 36_900 },
  };
}

async function nullDereference(): Promise<ReportDocument> {
  const source = path.join(dir, "server.c");
  await writeFile(source, SERVER_C);
  return {
    report: baseReport(),
    details: {
      frames: [
        { level: 0, function: "handle_client", file: "/src/server.c", line: 11, module: "/opt/server/bin/server" },
        { level: 1, function: "main", file: "/src/server.c", line: 14, module: "/opt/server/bin/server" },
        { level: 2, function: "__libc_start_call_main", file: null, line: null, module: "/lib/x86_64-linux-gnu/libc.so.6" },
      ],
      recursion: null,
      registers: [
        { name: "rip", value: "0x555555555139" },
        { name: "rax", value: "0x0" },
      ],
      threads: [
        { id: 1, name: "server", function: "handle_client", state: "crashed (SIGSEGV)" },
        { id: 2, name: "poller", function: "epoll_wait", state: "waiting" },
      ],
      modules: [
        { path: "/opt/server/bin/server", from: "0x555555555000", to: "0x555555556000" },
        { path: "/lib/x86_64-linux-gnu/libc.so.6", from: "0x7ffff7dc5000", to: "0x7ffff7f3a000" },
      ],
      sourceExcerpt: excerptOf({ path: source, lines: SERVER_C.split("\n") }, 11, 3),
      evidenceExcerpts: {
        e1: "#0  handle_client (slot=3) at /src/server.c:11\n#1  main () at /src/server.c:14",
        e2: "$1 = (struct conn *) 0x0",
      },
      redactions: { count: 2, kinds: { "api-key": 1, email: 1 } },
      chat: [{ question: "Why slot 3?", answer: "The client on slot 3 disconnected first.", evidenceIds: ["e2"] }],
    },
  };
}

function stackOverflow(): ReportDocument {
  const report = baseReport();
  report.crash = {
    ...report.crash,
    kind: "stack-overflow",
    faultAddress: "0x7ffe3b5fdff8",
    access: "write",
    culprit: { function: "walk", file: "/src/tree.c", line: 20, column: null, frame: 0, module: "/opt/server/bin/server", language: null }, runtime: null,
    signature: "stack-overflow | walk | visit | walk",
  };
  report.conclusion = {
    summary: "walk and visit recurse without end on a tree whose parent link points back at a child.",
    rootCause: "The tree has a cycle, so walk never reaches a leaf and exhausts the 8 MiB stack.",
    confidence: 0.8,
    recommendations: ["Track visited nodes in walk", "Reject cycles when a node is re-parented"],
  };
  const frames = Array.from({ length: 50 }, (_, level) => ({
    level,
    function: level % 2 === 0 ? "walk" : "visit",
    file: "/src/tree.c",
    line: level % 2 === 0 ? 20 : 31,
    module: "/opt/server/bin/server",
  }));
  return { report, details: { frames, recursion: { frames: 10_000, cycle: ["walk", "visit"] } } };
}

function deadlock(): ReportDocument {
  const report = baseReport();
  report.crash = {
    ...report.crash,
    kind: "deadlock",
    signal: "SIGQUIT",
    signalCode: null,
    faultAddress: null,
    access: null,
    culprit: { function: "transfer", file: "/src/bank.c", line: 18, column: null, frame: 2, module: "/opt/server/bin/server", language: null }, runtime: null,
    signature: "deadlock | transfer | worker | start_thread",
    deadlock: {
      cycle: [
        { thread: 2, function: "transfer", file: "/src/bank.c", line: 18, lock: "0x5555555580a0", lockName: "accounts+0", heldByThread: 3 },
        { thread: 3, function: "transfer", file: "/src/bank.c", line: 18, lock: "0x5555555580e0", heldByThread: 2 },
      ],
    },
  };
  report.conclusion = {
    summary: "Two transfers in opposite directions each hold one account's lock and wait for the other's.",
    rootCause: "transfer locks the source account first, so transfers a→b and b→a take the two locks in opposite orders.",
    confidence: 0.95,
    recommendations: ["Lock the two accounts in address order"],
  };
  return { report, details: {} };
}

/** The Markdown's structure as marked (GFM) sees it. */
function lex(markdown: string) {
  return new Marked({ gfm: true }).lexer(markdown);
}

function headings(markdown: string): string[] {
  return lex(markdown).flatMap((t) => (t.type === "heading" ? [`${"#".repeat(t.depth)} ${t.text}`] : []));
}

describe("renderMarkdown", () => {
  it("writes up a null dereference: verdict, facts, source, hypotheses, evidence, critique, details, usage", async () => {
    const md = renderMarkdown(await nullDereference(), { linkBase: "/tmp/reports" });

    expect(headings(md)).toEqual([
      "# Null dereference in `handle_client` (`server.c:11`)",
      "## Summary",
      "## Crash",
      "### Source",
      "### Stack",
      "## Root cause",
      "## Recommendations",
      "## Hypotheses",
      "## Evidence",
      "### e1 · `bt`",
      "### e2 · `print clients[3]`",
      "### e3 · `info proc mappings`",
      "## Critique",
      "## Follow-up questions",
      "## Chat",
      "## Technical details",
      "### Registers",
      "### Threads (2)",
      "### Modules (2)",
      "## Usage",
    ]);
    expect(md).toContain("Session `20250301-101500-a1b2` · dump `/var/crash/core.server.4242`");
    expect(md).toContain("**Confidence:** 90%");
    expect(md).toContain("**Reported issue:** server dies when a client disconnects");
    expect(md).toContain("| Signal | `SIGSEGV / SEGV_MAPERR` |");
    expect(md).toContain("| Fault address | `0x4` |");
    expect(md).toContain("| Access | read |");
    expect(md).toContain("| Thread | 1 · LWP 4242 · `server` |");
    expect(md).toContain("| Culprit | `handle_client` at `/src/server.c:11` (frame 0) |");
    expect(md).toContain("> 11      return c->fd;");
    expect(md).toContain("   8  int handle_client(int slot) {");
    expect(md).toContain("| **0** | `handle_client` ← culprit | `/src/server.c:11` | `server` |");
    expect(md).toContain("1. Remove the slot from the poll set before clearing it");
    expect(md).toContain("- **H1 · confirmed** — clients\\[3\\] is NULL after the client disconnected (evidence: [e1](#e1--bt), [e2](#e2--print-clients3))");
    expect(md).toContain("- **H2 · rejected** — The stack is corrupted (evidence: [e3](#e3--info-proc-mappings))");
    expect(md).toContain("- **H3 · inconclusive** — Another thread freed the slot concurrently");
    expect(md).toContain("2 values redacted before any model saw them: api-key 1, email 1.");
    expect(md).toContain("```text\n$1 = (struct conn *) 0x0\n```");
    expect(md).toContain("179.2 KiB · cited by H2 · [full output](../dumpdbg-sessions/20250301-101500-a1b2/evidence/e3.txt)");
    expect(md).toContain("full output in the session's evidence store");
    expect(md).toContain("**Round 1:**\n\n- H3 was not tested against the other threads' stacks");
    expect(md).toContain("**Round 2:** no issues.");
    expect(md).toContain("**Unresolved:**\n\n- Whether a second thread touches clients\\[\\] at all");
    expect(md).toContain("**Q:** Why slot 3?\n\nThe client on slot 3 disconnected first.\n\nEvidence: [e2](#e2--print-clients3).");
    expect(md).toContain("| **1** (crashed) | `server` | `handle_client` | crashed (SIGSEGV) |");
    expect(md).toContain("| `rip` | `0x555555555139` |");
    expect(md).toContain("- Model calls: 7\n- Tokens, local: 5,200 in / 800 out\n- Tokens, cloud: 12,400 in / 2,100 out");
    expect(md).toContain("- Time: 41.3 s total; debugger 3.1 s, models 36.9 s");
  });

  it("keeps the root cause's paragraphs", async () => {
    const md = renderMarkdown(await nullDereference());
    expect(md).toContain("without removing the slot from the poll set.\n\nThe next event on that slot");
  });

  it("titles what is no crash by where it came from: a hang, a signal another process sent, a dump on request", () => {
    const titled = (crash: Partial<Report["crash"]>) => {
      const report = baseReport();
      return renderMarkdown({ report: { ...report, crash: { ...report.crash, ...crash } }, details: {} }).split("\n")[2];
    };
    expect(titled({ kind: "hang", signal: null, origin: { type: "requested", sender: null, evidence: "no signal" } })).toBe("# Hang: every thread is blocked waiting, with no lock cycle");
    expect(titled({ kind: "unknown", signal: "SIGTERM", origin: { type: "sent", sender: { pid: 4242, uid: 0 }, evidence: "SI_USER" } })).toBe("# SIGTERM sent by pid 4242, not a crash: it arrived in `handle_client` (`server.c:11`)");
    expect(titled({ kind: "unknown", signal: "SIGSEGV", origin: { type: "raised", sender: { pid: 7, uid: 0 }, evidence: "SI_TKILL" } })).toBe("# SIGSEGV raised by the program itself in `handle_client` (`server.c:11`)");
    expect(titled({ kind: "unknown", signal: null, origin: { type: "requested", sender: null, evidence: "no signal" } })).toBe("# Dump taken on request, not at a crash in `handle_client` (`server.c:11`)");
  });

  it("summarises a stack overflow's recursion instead of listing its frames", () => {
    const md = renderMarkdown(stackOverflow());
    expect(md.startsWith("<!-- dumpdbg report -->\n\n# Stack overflow in `walk` (`tree.c:20`)\n")).toBe(true);
    expect(md).toContain("**Recursion:** 10,000 frames deep, repeating `walk` → `visit` → `walk`.");
    const stack = lex(md).find((t) => t.type === "table" && t.header[0]?.text === "#");
    expect(stack?.type === "table" && stack.rows.length).toBe(6);
    expect(md).toContain("… 9,994 more frames (the recursion above repeats).");
  });

  it("shows a deadlock's wait-for cycle as a diagram line and a table", () => {
    const md = renderMarkdown(deadlock());
    // Named by the function and the lock the dump names; the second lock has no name.
    expect(headings(md)[0]).toBe("# Deadlock in `transfer` over `accounts+0` (threads 2 and 3)");
    expect(md).toContain("**Cycle:** thread 2 → thread 3 → thread 2");
    expect(md).toContain(
      [
        "| Thread | Waits for lock | Held by | Waiting in |",
        "| --- | --- | --- | --- |",
        "| 2 | `accounts+0` (`0x5555555580a0`) | thread 3 | `transfer` at `/src/bank.c:18` |",
        "| 3 | `0x5555555580e0` | thread 2 | `transfer` at `/src/bank.c:18` |",
      ].join("\n"),
    );
    expect(md).not.toContain("side by side");
  });

  it("shows the cycle's stacks side by side, one column per thread", () => {
    const doc = deadlock();
    const frame = (level: number, fn: string, line: number) => ({ level, function: fn, file: "/src/bank.c", line, module: null });
    doc.details.cycleStacks = [
      { thread: 2, frames: [frame(0, "futex_wait", 1), frame(1, "transfer", 18), frame(2, "worker", 40)] },
      { thread: 3, frames: [frame(0, "futex_wait", 1), frame(1, "transfer", 18)] },
    ];
    expect(renderMarkdown(doc)).toContain(
      [
        "### The cycle's stacks, side by side",
        "",
        "| Thread 2 | Thread 3 |",
        "| --- | --- |",
        "| #0 `futex_wait` at `/src/bank.c:1` | #0 `futex_wait` at `/src/bank.c:1` |",
        "| #1 `transfer` at `/src/bank.c:18` | #1 `transfer` at `/src/bank.c:18` |",
        "| #2 `worker` at `/src/bank.c:40` |  |",
      ].join("\n"),
    );
  });

  it("leaves out what it was not given and says when nothing ran a model", () => {
    const report = baseReport();
    report.hypotheses = [];
    report.evidence = [];
    report.critique = { rounds: [], unresolved: [] };
    report.followUpQuestions = [];
    report.usage = { llmCalls: 0, local: { inputTokens: 0, outputTokens: 0 }, cloud: { inputTokens: 0, outputTokens: 0 } };
    const md = renderMarkdown({ report, details: {} });
    expect(headings(md)).toEqual([
      "# Null dereference in `handle_client` (`server.c:11`)",
      "## Summary",
      "## Crash",
      "## Root cause",
      "## Recommendations",
      "## Usage",
    ]);
    expect(md).toContain("- Model calls: none (offline engine)");
  });
});

describe("renderHtml", () => {
  it("is one self-contained document with a strict CSP, dark and print styles", async () => {
    const html = renderHtml(await nullDereference());
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">`,
    );
    expect(html).toContain("<title>Null dereference in handle_client (server.c:11) · dumpdbg</title>");
    expect(html).toContain("@media (prefers-color-scheme: dark)");
    expect(html).toContain("@media print");
    expect(html).not.toMatch(/<script|<link|<img|<iframe|\bsrc=|url\(/i);
    expect(html).not.toContain("<!-- dumpdbg report -->");
  });

  it("folds each evidence item and technical detail into <details>, keeping the headline sections open", async () => {
    const html = renderHtml(await nullDereference());
    expect(html).toContain('<details><summary><h3 id="e1--bt">e1 · <code>bt</code></h3>\n<p>3 frames; culprit handle_client at server.c:11</p>\n</summary>');
    expect(html).toContain('<details><summary><h3 id="registers">Registers</h3>');
    expect(html.match(/<details>/g)).toHaveLength(6);
    expect(html.match(/<\/details>/g)).toHaveLength(6);
    expect(html).toContain('<h3 id="source">Source</h3>');
    expect(html).not.toMatch(/<details><summary><h3 id="(source|stack)"/);
  });

  it("links every in-document anchor to an element that exists, and evidence files relatively", async () => {
    const html = renderHtml(await nullDereference(), { linkBase: "/tmp/reports" });
    const ids = new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]));
    const anchors = [...html.matchAll(/ href="#([^"]+)"/g)].map((m) => m[1]);
    expect(anchors.length).toBeGreaterThan(3);
    for (const anchor of anchors) expect(ids).toContain(anchor);
    expect(html).toContain('<a href="../dumpdbg-sessions/20250301-101500-a1b2/evidence/e3.txt">full output</a>');
  });

  it("encodes evidence paths, so any file name stays one working link", () => {
    const doc = deadlock();
    doc.report.evidence = [{ id: "e9", command: "bt", summary: "", bytes: 1, path: "/tmp/old sessions (2)/e9 [full].txt" }];
    const href = "../old%20sessions%20%282%29/e9%20%5Bfull%5D.txt";
    expect(renderMarkdown(doc, { linkBase: "/tmp/reports" })).toContain(`[full output](${href})`);
    expect(renderHtml(doc, { linkBase: "/tmp/reports" })).toContain(`<a href="${href}">full output</a>`);
  });

  it("shows what a Markdown renderer makes of the Markdown report: the two are written from one layout", async () => {
    // marked (GFM) stands for GitHub here; the HTML adds only heading anchors and the folding.
    const unfolded = (html: string) =>
      html
        .slice(html.indexOf("<main>\n") + "<main>\n".length, html.indexOf("</main>"))
        .replace(/<details><summary>|<\/summary>\n|<\/details>\n/g, "")
        .replace(/ id="[^"]*"/g, "");
    for (const doc of [await nullDereference(), stackOverflow(), deadlock()]) {
      const markdown = renderMarkdown(doc, { linkBase: "/tmp/reports" }).replace("<!-- dumpdbg report -->\n\n", "");
      expect(unfolded(renderHtml(doc, { linkBase: "/tmp/reports" }))).toBe(new Marked({ gfm: true }).parse(markdown));
    }
  });

  it("renders the stack overflow and deadlock samples", () => {
    expect(renderHtml(stackOverflow())).toContain("<strong>Recursion:</strong> 10,000 frames deep, repeating <code>walk</code>");
    expect(renderHtml(deadlock())).toContain("<td>2</td>\n<td><code>accounts+0</code> (<code>0x5555555580a0</code>)</td>\n<td>thread 3</td>");
  });
});

describe("renderJson", () => {
  it("writes a report that passes the schema and reads back equal", () => {
    const report = baseReport();
    const json = renderJson(report);
    expect(ReportSchema.parse(JSON.parse(json))).toEqual(report);
    expect(json.endsWith("}\n")).toBe(true);
  });

  it("keeps fields that do not apply as null", () => {
    const parsed = JSON.parse(renderJson(deadlock().report));
    expect(parsed.crash.faultAddress).toBeNull();
    expect(parsed.crash.access).toBeNull();
    expect(parsed.crash.message).toBeNull();
  });

  it("refuses a report with a missing field", () => {
    const report: Partial<Report["crash"]> = { ...baseReport().crash };
    delete report.signature;
    expect(() => renderJson({ ...baseReport(), crash: report as Report["crash"] })).toThrow(/signature/);
  });

  it("carries what was masked before any model saw it, by kind", () => {
    const json = JSON.parse(renderJson(baseReport()));
    expect(json.redactions).toEqual({ count: 3, kinds: { token: 2, "aws-key": 1 } });
  });

  it("says in the Markdown when a model stopped answering and the rest ran offline", () => {
    const report = baseReport();
    report.usage.modelsDown = [{ tier: "cloud", provider: "openai", model: "gpt-4o-mini", url: "http://127.0.0.1:9/v1", answered: 2, reason: "openai gpt-4o-mini: no answer within 25 s, after 1 retry" }];
    expect(renderMarkdown({ report, details: {} })).toMatch(/openai gpt-4o-mini at http\\?:\/\/127\.0\.0\.1:9\/v1 stopped answering after 2 calls \(no answer within 25 s, after 1 retry\): the rest of the analysis ran offline\./);
  });

  it("orders keys as the schema does, whatever order the report was built in", () => {
    const report = baseReport();
    const shuffled = Object.fromEntries(Object.entries(report).reverse()) as Report;
    shuffled.crash = Object.fromEntries(Object.entries(report.crash).reverse()) as Report["crash"];
    expect(renderJson(shuffled)).toBe(renderJson(report));
    expect(Object.keys(JSON.parse(renderJson(shuffled)))).toEqual(Object.keys(ReportSchema.shape));
  });
});

describe("writeReports", () => {
  it("writes <session-id>.md, .html and .json, and replaces its own reports on a second run", async () => {
    const outDir = path.join(dir, "reports");
    const doc = await nullDereference();
    const first = await writeReports(doc, { outDir });
    expect(first.map(({ format, file }) => ({ format, file }))).toEqual([
      { format: "md", file: path.join(outDir, "20250301-101500-a1b2.md") },
      { format: "html", file: path.join(outDir, "20250301-101500-a1b2.html") },
      { format: "json", file: path.join(outDir, "20250301-101500-a1b2.json") },
    ]);
    // Each says what it wrote: the JSON is the contract's rendering of the report.
    for (const { file, text } of first) expect(text).toBe(await readFile(file, "utf8"));
    expect(first[2]?.text).toBe(renderJson(doc.report));
    doc.report.conclusion.summary = "Second run.";
    await writeReports(doc, { outDir });
    expect(await readFile(path.join(outDir, "20250301-101500-a1b2.md"), "utf8")).toContain("Second run.");
    expect(JSON.parse(await readFile(path.join(outDir, "20250301-101500-a1b2.json"), "utf8")).conclusion.summary).toBe("Second run.");
    expect((await readdir(outDir)).sort()).toEqual(["20250301-101500-a1b2.html", "20250301-101500-a1b2.json", "20250301-101500-a1b2.md"]);
  });

  it("writes the same Markdown and HTML as the renderers, from one layout of the report for both", async () => {
    for (const [name, doc] of [["null", await nullDereference()], ["overflow", stackOverflow()], ["deadlock", deadlock()]] as const) {
      const outDir = path.join(dir, `same-${name}`);
      const [md, html] = await writeReports(doc, { outDir, formats: ["md", "html"] });
      const pictures = await drawPictures(doc).catch(() => []);
      expect(await readFile(md!.file, "utf8")).toBe(renderMarkdown(doc, { linkBase: outDir }));
      expect(await readFile(html!.file, "utf8")).toBe(renderHtml(doc, { linkBase: outDir, pictures }));
    }
  });

  it("writes only the formats asked for", async () => {
    const outDir = path.join(dir, "only-json");
    await writeReports(stackOverflow(), { outDir, formats: ["json"] });
    expect(await readdir(outDir)).toEqual(["20250301-101500-a1b2.json"]);
  });

  it("leaves a user's file of the same name alone and writes nothing", async () => {
    const outDir = path.join(dir, "user-files");
    await mkdir(outDir);
    const mine = path.join(outDir, "20250301-101500-a1b2.html");
    await writeFile(mine, "<p>my notes</p>");
    await expect(writeReports(deadlock(), { outDir })).rejects.toThrow(ReportConflictError);
    expect(await readFile(mine, "utf8")).toBe("<p>my notes</p>");
    expect(await readdir(outDir)).toEqual(["20250301-101500-a1b2.html"]);
  });

  it("writes nothing when the report breaks the JSON contract", async () => {
    const outDir = path.join(dir, "invalid");
    const doc = deadlock();
    doc.report.conclusion.confidence = 1.5;
    await expect(writeReports(doc, { outDir })).rejects.toThrow(/confidence/);
    await expect(readdir(outDir)).rejects.toThrow(/ENOENT/);
  });
});

