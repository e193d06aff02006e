/**
 * The Markdown report: one analysis written up the way an engineer would, facts first.
 *
 * Everything that came from the dump or a model is data. Inline strings are escaped so they cannot
 * make links, images, HTML, headings, lists or tables; identifiers go in code spans and outputs in
 * fences longer than any backtick run they contain.
 */
import path from "node:path";
import { waiterWord, type ReportDetails, type ReportDocument, type SourceExcerpt, type StackFrame } from "./document.js";
import { thousands } from "./numbers.js";
import { annotationsText } from "./annotations.js";
import { senderText } from "./origin.js";
import type { CrashKind, Report } from "./schema.js";

export interface RenderOptions {
  /** The folder the report is written to, which links to evidence files are relative to. Default: cwd. */
  linkBase?: string;
}

/** Section headings; the HTML renderer collapses the subsections of some of them. */
export const SECTION = {
  summary: "Summary",
  crash: "Crash",
  rootCause: "Root cause",
  recommendations: "Recommendations",
  hypotheses: "Hypotheses",
  evidence: "Evidence",
  critique: "Critique",
  followUp: "Follow-up questions",
  chat: "Chat",
  technical: "Technical details",
  usage: "Usage",
} as const;

/** First line of every Markdown report: how `writeReports` knows a file is ours to replace. */
export const MARKDOWN_MARKER = "<!-- dumpdbg report -->";

/** A backtrace longer than this is cut in the report; the full one is in the evidence. */
const MAX_FRAMES = 30;
/** Frames shown above a recursion's summary. */
const RECURSION_FRAMES = 6;

export function renderMarkdown(doc: ReportDocument, options: RenderOptions = {}): string {
  return `${MARKDOWN_MARKER}\n\n${markdownBody(doc, options)}`;
}

/** The report without the marker comment, for the HTML renderer, which shows no raw HTML. */
export function markdownBody({ report, details }: ReportDocument, options: RenderOptions = {}): string {
  const linkBase = path.resolve(options.linkBase ?? ".");
  const blocks = [
    `# ${verdict(report, code)}`,
    sessionLine(report),
    ...summarySection(report),
    ...crashSection(report, details),
    heading(2, SECTION.rootCause),
    prose(report.conclusion.rootCause) || "Not determined.",
    ...listSection(SECTION.recommendations, report.conclusion.recommendations, true),
    ...hypothesesSection(report),
    ...evidenceSection(report, details, linkBase),
    ...critiqueSection(report),
    ...listSection(SECTION.followUp, report.followUpQuestions, false),
    ...chatSection(report, details),
    ...technicalSection(report, details),
    ...usageSection(report),
  ];
  return `${blocks.join("\n\n")}\n`;
}

/** The one-line verdict of the title; `literal` formats the values that came from the dump. */
export function verdict(report: Report, literal: (s: string) => string): string {
  const { crash } = report;
  const cycle = crash.deadlock ? waitCycle(crash.deadlock.cycle) : [];
  if (crash.kind === "deadlock" && cycle.length > 1) {
    const threads = [...new Set(cycle)].map(String);
    const between = `${waiterWord(report)}s ${threads.slice(0, -1).join(", ")} and ${threads.at(-1)}`;
    // Named by what the threads were doing and what they wait for, where the dump tells it.
    const edges = crash.deadlock?.cycle ?? [];
    const functions = [...new Set(edges.map((e) => e.function).filter((f): f is string => Boolean(f)))];
    const locks = [...new Set(edges.map((e) => e.lockName).filter((l): l is string => Boolean(l)))];
    if (functions.length === 0) return `Deadlock between ${between}`;
    const over = locks.length > 0 ? ` over ${andList(locks.map(literal))}` : "";
    return `Deadlock in ${andList(functions.map(literal))}${over} (${between})`;
  }
  const { function: fn, file, line } = crash.culprit;
  const where = fn ? ` in ${literal(fn)}` : "";
  const at = file ? ` (${literal(line === null ? basename(file) : `${basename(file)}:${line}`)})` : "";
  // A hang without a lock cycle, or a signal a process sent: neither is a crash, and the title says so.
  if (crash.kind === "hang") return "Hang: every thread is blocked waiting, with no lock cycle";
  if (crash.kind === "unknown" && crash.origin?.type === "requested") return `Dump taken on request, not at a crash${where}${at}`;
  const origin = crash.origin?.type;
  if (crash.kind === "unknown" && crash.signal && crash.origin && (origin === "sent" || origin === "raised")) {
    return origin === "raised" ? `${crash.signal} raised by the program itself${where}${at}` : `${crash.signal} sent ${senderText(crash.origin, false)}, not a crash: it arrived${where}${at}`;
  }
  return `${KIND_LABEL[crash.kind]}${where}${at}`;
}

function andList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

const KIND_LABEL = {
  "null-dereference": "Null dereference",
  "bad-jump": "Jump to a bad address",
  "invalid-memory-access": "Invalid memory access",
  "stack-overflow": "Stack overflow",
  "stack-buffer-overflow": "Stack buffer overflow",
  "double-free": "Double free",
  "heap-corruption": "Heap corruption",
  "assertion-failure": "Assertion failure",
  abort: "Abort",
  "uncaught-exception": "Uncaught exception",
  "pure-virtual-call": "Pure virtual call",
  "division-by-zero": "Division by zero",
  "illegal-instruction": "Illegal instruction",
  "bus-error": "Bus error",
  panic: "Panic",
  deadlock: "Deadlock",
  hang: "Hang",
  breakpoint: "Breakpoint trap",
  "fortify-failure": "Fortify check failure",
  unknown: "Crash of unknown kind",
} satisfies Record<CrashKind, string>;

function sessionLine({ session }: Report): string {
  const parts = [
    `Session ${code(session.id)}`,
    `dump ${code(session.dump)}`,
    session.executable ? `executable ${code(session.executable)}` : null,
    session.debugger ? text(session.debugger) : null,
    `started ${code(session.startedAt)}`,
    session.finishedAt ? `finished ${code(session.finishedAt)}` : "unfinished",
  ];
  return parts.filter((p) => p !== null).join(" · ");
}

function summarySection({ conclusion, issue }: Report): string[] {
  return [
    heading(2, SECTION.summary),
    prose(conclusion.summary) || "No summary.",
    `**Confidence:** ${Math.round(conclusion.confidence * 100)}%`,
    ...(issue ? [`**Reported issue:** ${text(issue)}`] : []),
  ];
}

function crashSection(report: Report, details: ReportDetails): string[] {
  const { crash } = report;
  const { culprit, thread } = crash;
  const facts: [string, string][] = [
    ["Kind", cellCode(crash.kind)],
    ["Signal", crash.signal ? cellCode([crash.signal, crash.signalCode].filter(Boolean).join(" / ")) : "—"],
    ["Origin", crash.origin ? `${text(crash.origin.type)}: ${text(crash.origin.evidence)}` : "—"],
    ["Fault address", orDash(crash.faultAddress, cellCode)],
    ["Access", orDash(crash.access, text)],
    ["Message", orDash(crash.message, text)],
    ["Thread", threadLabel(thread)],
    ["Culprit", culpritLabel(culprit)],
    ["Module", orDash(culprit.module, cellCode)],
    ["Signature", cellCode(crash.signature)],
    ["Exploitability", crash.exploitability ? `${text(crash.exploitability.rating)}: ${text(crash.exploitability.reasons.join("; "))}` : "—"],
    ...(crash.annotations ? [["Annotations", text(annotationsText(crash.annotations))] as [string, string]] : []),
  ];
  return [
    heading(2, SECTION.crash),
    table(["Fact", "Value"], facts),
    ...sourceBlock(details.sourceExcerpt ?? null),
    ...(crash.deadlock ? deadlockBlock(crash.deadlock.cycle, waiterWord(report)) : []),
    ...cycleStacksBlock(details.cycleStacks ?? []),
    ...stackBlock(crash.culprit.frame, details),
  ];
}

function threadLabel(thread: Report["crash"]["thread"]): string {
  const parts = [
    thread.id === null ? null : `${thread.id}`,
    thread.lwp === null ? null : `LWP ${thread.lwp}`,
    thread.name ? cellCode(thread.name) : null,
  ].filter((p) => p !== null);
  return parts.length ? parts.join(" · ") : "—";
}

function culpritLabel(culprit: Report["crash"]["culprit"]): string {
  if (!culprit.function && !culprit.file) return "—";
  const parts = [
    culprit.function ? cellCode(culprit.function) : "unknown function",
    culprit.file ? `at ${cellCode(location(culprit.file, culprit.line))}` : null,
    culprit.frame === null ? null : `(frame ${culprit.frame})`,
  ];
  return parts.filter((p) => p !== null).join(" ");
}

function sourceBlock(excerpt: SourceExcerpt | null): string[] {
  if (!excerpt || excerpt.lines.length === 0) return [];
  const width = String(Math.max(...excerpt.lines.map((l) => l.n))).length;
  const listing = excerpt.lines
    .map((l) => `${l.n === excerpt.line ? ">" : " "} ${String(l.n).padStart(width)}  ${l.text}`)
    .join("\n");
  return [heading(3, "Source"), `${code(excerpt.file)}, line ${excerpt.line}:`, fence(listing)];
}

type DeadlockEdge = NonNullable<Report["crash"]["deadlock"]>["cycle"][number];

function deadlockBlock(edges: DeadlockEdge[], waiter: "goroutine" | "thread"): string[] {
  const cycle = waitCycle(edges);
  const diagram = cycle.length > 1 ? `**Cycle:** ${cycle.map((t) => `${waiter} ${t}`).join(" → ")}` : null;
  const rows = edges.map((e) => [
    `${e.thread}`,
    e.lock === null ? "—" : e.lockName ? `${cellCode(e.lockName)} (${cellCode(e.lock)})` : cellCode(e.lock),
    e.heldByThread === null ? "—" : `${waiter} ${e.heldByThread}`,
    [e.function ? cellCode(e.function) : null, e.file ? cellCode(location(e.file, e.line)) : null]
      .filter((p) => p !== null)
      .join(" at ") || "—",
  ]);
  return [
    heading(3, "Wait-for cycle"),
    ...(diagram ? [diagram] : []),
    table([waiter === "goroutine" ? "Goroutine" : "Thread", "Waits for lock", "Held by", "Waiting in"], rows),
  ];
}

/** The cycle's stacks side by side: one column per thread, innermost frame first. */
function cycleStacksBlock(stacks: { thread: number; frames: StackFrame[] }[]): string[] {
  if (stacks.length < 2) return [];
  const depth = Math.min(CYCLE_STACK_FRAMES, Math.max(...stacks.map((s) => s.frames.length)));
  const rows = Array.from({ length: depth }, (_, i) =>
    stacks.map((s) => {
      const frame = s.frames[i];
      if (!frame) return "";
      return [`#${frame.level} ${frame.function ? cellCode(frame.function) : "??"}`, frame.file ? cellCode(location(frame.file, frame.line)) : null].filter(Boolean).join(" at ");
    }),
  );
  return [heading(3, "The cycle's stacks, side by side"), table(stacks.map((s) => `Thread ${s.thread}`), rows)];
}

/** Frames of each deadlocked thread shown side by side. */
const CYCLE_STACK_FRAMES = 12;

/** Threads in wait-for order from the first edge, closing on the thread the cycle returns to. */
function waitCycle(edges: DeadlockEdge[]): number[] {
  const first = edges[0];
  if (!first) return [];
  const holder = new Map(edges.map((e) => [e.thread, e.heldByThread]));
  const order = [first.thread];
  for (let next = holder.get(first.thread); next != null; next = holder.get(next)) {
    order.push(next);
    if (order.indexOf(next) !== order.length - 1) break;
  }
  return order;
}

/** Where an inlined function was inlined: ` (inlined into main at net.c:21)`. */
function inlinedText(frame: StackFrame): string {
  const chain = frame.inlinedInto ?? [];
  return chain.map((outer) => ` (inlined into ${cellCode(outer.function)}${outer.file ? ` at ${cellCode(location(outer.file, outer.line))}` : ""})`).join("");
}

function stackBlock(culpritFrame: number | null, details: ReportDetails): string[] {
  const frames = details.frames ?? [];
  const recursion = details.recursion ?? null;
  if (frames.length === 0 && !recursion) return [];
  const shown = frames.slice(0, recursion ? RECURSION_FRAMES : MAX_FRAMES);
  const hidden = recursion ? Math.max(recursion.frames, frames.length) - shown.length : frames.length - shown.length;
  const rows = shown.map((f) => [
    f.level === culpritFrame ? `**${f.level}**` : `${f.level}`,
    f.function ? cellCode(f.function) + (f.level === culpritFrame ? " ← culprit" : "") + inlinedText(f) : "??",
    f.file ? cellCode(location(f.file, f.line)) : "—",
    orDash(f.module && basename(f.module), cellCode),
  ]);
  const blocks = [heading(3, "Stack")];
  if (recursion) {
    const turn = [...recursion.cycle, ...recursion.cycle.slice(0, 1)].map(code).join(" → ");
    const repeating = turn ? `, repeating ${turn}` : "";
    blocks.push(`**Recursion:** ${thousands(recursion.frames)} frames deep${repeating}.`);
  }
  if (rows.length) blocks.push(table(["#", "Function", "Location", "Module"], rows));
  if (hidden > 0) {
    const why = recursion ? "the recursion above repeats" : "see the backtrace evidence";
    blocks.push(`… ${thousands(hidden)} more frames (${why}).`);
  }
  return blocks;
}

function hypothesesSection(report: Report): string[] {
  if (report.hypotheses.length === 0) return [];
  const anchors = evidenceAnchors(report);
  const items = report.hypotheses.map((h) => {
    const cited = h.evidenceIds.map((id) => evidenceRef(id, anchors));
    const evidence = cited.length ? ` (evidence: ${cited.join(", ")})` : "";
    return `- **${text(h.id)} · ${h.status}** — ${words(h.statement)}${evidence}`;
  });
  return [heading(2, SECTION.hypotheses), items.join("\n")];
}

function evidenceSection(report: Report, details: ReportDetails, linkBase: string): string[] {
  if (report.evidence.length === 0) return [];
  const redactions = details.redactions;
  const blocks = [heading(2, SECTION.evidence)];
  if (redactions && redactions.count > 0) {
    const kinds = Object.entries(redactions.kinds).map(([kind, n]) => `${text(kind)} ${n}`);
    const values = redactions.count === 1 ? "1 value" : `${redactions.count} values`;
    blocks.push(`${values} redacted before any model saw them: ${kinds.join(", ")}.`);
  }
  for (const e of report.evidence) {
    const citedBy = report.hypotheses.filter((h) => h.evidenceIds.includes(e.id)).map((h) => text(h.id));
    const facts = [
      formatBytes(e.bytes),
      citedBy.length ? `cited by ${citedBy.join(", ")}` : null,
      e.path ? `[full output](${fileHref(e.path, linkBase)})` : "full output in the session's evidence store",
    ].filter((p) => p !== null);
    blocks.push(heading(3, evidenceHeading(e)), [prose(e.summary), facts.join(" · ")].filter(Boolean).join("\n\n"));
    const excerpt = details.evidenceExcerpts?.[e.id];
    if (excerpt) blocks.push(fence(excerpt));
  }
  return blocks;
}

function evidenceHeading(e: Report["evidence"][number]): string {
  return `${text(e.id)} · ${code(e.command)}`;
}

/** Evidence id → in-document anchor of its heading. */
function evidenceAnchors(report: Report): Map<string, string> {
  return new Map(report.evidence.map((e) => [e.id, slug(evidenceHeading(e))]));
}

function evidenceRef(id: string, anchors: Map<string, string>): string {
  const anchor = anchors.get(id);
  return anchor ? `[${text(id)}](#${anchor})` : text(id);
}

function critiqueSection({ critique }: Report): string[] {
  if (critique.rounds.length === 0 && critique.unresolved.length === 0) return [];
  const blocks = [heading(2, SECTION.critique)];
  for (const round of critique.rounds) {
    blocks.push(
      round.issues.length
        ? `**Round ${round.round}:**\n\n${bullets(round.issues)}`
        : `**Round ${round.round}:** no issues.`,
    );
  }
  const { unresolved } = critique;
  blocks.push(unresolved.length ? `**Unresolved:**\n\n${bullets(unresolved)}` : "**Unresolved:** none.");
  return blocks;
}

function chatSection(report: Report, details: ReportDetails): string[] {
  const chat = details.chat ?? [];
  if (chat.length === 0) return [];
  const anchors = evidenceAnchors(report);
  const blocks = [heading(2, SECTION.chat)];
  for (const exchange of chat) {
    const cited = exchange.evidenceIds.map((id) => evidenceRef(id, anchors));
    blocks.push(`**Q:** ${text(exchange.question)}`, prose(exchange.answer) || "No answer.");
    if (cited.length) blocks.push(`Evidence: ${cited.join(", ")}.`);
  }
  return blocks;
}

function technicalSection(report: Report, details: ReportDetails): string[] {
  const blocks: string[] = [];
  const registers = details.registers ?? [];
  if (registers.length) {
    const rows = registers.map((r) => [cellCode(r.name), cellCode(r.value)]);
    blocks.push(heading(3, "Registers"), table(["Register", "Value"], rows));
  }
  const threads = details.threads ?? [];
  if (threads.length) {
    const crashed = report.crash.thread.id;
    const rows = threads.map((t) => [
      t.id === crashed ? `**${t.id}** (crashed)` : `${t.id}`,
      orDash(t.name, cellCode),
      orDash(t.function, cellCode),
      orDash(t.state, text),
    ]);
    blocks.push(heading(3, `Threads (${threads.length})`), table(["Thread", "Name", "Function", "State"], rows));
  }
  const modules = details.modules ?? [];
  if (modules.length) {
    const rows = modules.map((m) => [cellCode(m.path), cellCode(m.from), cellCode(m.to)]);
    blocks.push(heading(3, `Modules (${modules.length})`), table(["Path", "From", "To"], rows));
  }
  const symbols = details.symbols ?? [];
  if (symbols.length) {
    const rows = symbols.map((s) => [cellCode(s.module), s.status, s.detail ? cellCode(s.detail) : "—"]);
    blocks.push(heading(3, `Symbols (${symbols.length} modules)`), table(["Module", "Symbols", "From / why"], rows));
  }
  const warnings = details.debuggerWarnings ?? [];
  if (warnings.length) {
    const shown = warnings.slice(0, MAX_DEBUGGER_WARNINGS);
    const more = warnings.length > shown.length ? `\n… ${warnings.length - shown.length} more` : "";
    blocks.push(heading(3, `Debugger warnings while loading the dump (${warnings.length})`), fence(`${shown.join("\n")}${more}`));
  }
  return blocks.length ? [heading(2, SECTION.technical), ...blocks] : [];
}

/** Load warnings listed in a report; the rest are counted. */
const MAX_DEBUGGER_WARNINGS = 12;

function usageSection({ usage, timings }: Report): string[] {
  const tokens = (t: { inputTokens: number; outputTokens: number }) =>
    `${thousands(t.inputTokens)} in / ${thousands(t.outputTokens)} out`;
  const lines = [
    usage.llmCalls === 0 ? "- Model calls: none (offline engine)" : `- Model calls: ${usage.llmCalls}`,
    `- Tokens, local: ${tokens(usage.local)}`,
    `- Tokens, cloud: ${tokens(usage.cloud)}`,
    `- Time: ${seconds(timings.totalMs)} total; ` +
      `debugger ${seconds(timings.debuggerMs)}, models ${seconds(timings.llmMs)}`,
    ...(usage.modelsDown ?? []).map(
      (down) =>
        `- ${text(`${down.provider} ${down.model}`)} at ${text(down.url)} ${down.answered === 0 ? "never answered" : `stopped answering after ${down.answered} ${down.answered === 1 ? "call" : "calls"}`} (${text(down.reason.replace(/^\S+ \S+: /, ""))}): the rest of the analysis ran offline.`,
    ),
  ];
  return [heading(2, SECTION.usage), lines.join("\n")];
}

function listSection(title: string, items: string[], ordered: boolean): string[] {
  if (items.length === 0) return [];
  const list = ordered ? items.map((item, i) => `${i + 1}. ${words(item)}`).join("\n") : bullets(items);
  return [heading(2, title), list];
}

function bullets(items: string[]): string {
  return items.map((item) => `- ${words(item)}`).join("\n");
}

function heading(depth: number, source: string): string {
  return `${"#".repeat(depth)} ${source}`;
}

/**
 * GitHub's heading anchor for a heading's Markdown source (its text, lower-cased, punctuation
 * dropped, spaces made hyphens), so in-document links work on GitHub and in our HTML alike.
 */
export function slug(headingSource: string): string {
  return headingSource
    .replace(/\\(.)/g, "$1")
    .replace(/`/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** A path made relative to the report's folder, percent-encoded so it is one safe link destination. */
function fileHref(file: string, linkBase: string): string {
  return path
    .relative(linkBase, path.resolve(file))
    .split(path.sep)
    .map((segment) => encodeURIComponent(segment).replace(/\(/g, "%28").replace(/\)/g, "%29"))
    .join("/");
}

// --- Escaping: the only way dump and model strings enter the Markdown. ---

/**
 * Control characters could drive a terminal that `cat`s the report, and bidirectional overrides
 * could make the text read differently than it is: both become U+FFFD.
 */
const UNSAFE_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function clean(s: string): string {
  return s.replace(/\r\n?/g, "\n").replace(UNSAFE_CHARS, "\uFFFD");
}

/**
 * Inline text on one line, verbatim: every Markdown and HTML construct neutralised. Line breaks
 * become spaces, but runs of spaces stay: they can be part of a value (`"   POST"`).
 */
function text(s: string): string {
  return escapeInline(clean(s).replace(/[\t\n]+/g, " ").trim(), true);
}

/**
 * Inline prose written by an agent or a model: verbatim like `text`, except that `code` spans stay
 * code spans, as agents quote identifiers and values that way. A code span is literal by definition.
 */
function words(s: string): string {
  return clean(s)
    .replace(/[\t\n]+/g, " ")
    .trim()
    .split(/`([^`]+)`/)
    .map((part, i) => (i % 2 === 1 ? code(part) : escapeInline(part, i === 0)))
    .join("");
}

function escapeInline(s: string, startsLine: boolean): string {
  const escaped = s
    .replace(/[\\`*[\]<&|~$]/g, "\\$&")
    // An underscore between letters or digits cannot start or end emphasis: identifiers stay legible.
    .replace(/(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, "\\_")
    // GFM links bare URLs and e-mail addresses; breaking the pattern keeps them text.
    .replace(/:\/\//g, "\\://")
    .replace(/\bwww\./gi, (m) => `${m.slice(0, 3)}\\.`)
    .replace(/@/g, "\\@");
  // A value placed at the start of a line or list item must not open a heading or a list.
  return startsLine ? escaped.replace(/^[#+=>-]/, "\\$&").replace(/^(\d+)([.)])/, "$1\\$2") : escaped;
}

/** Paragraphs of agent or model prose. */
function prose(s: string): string {
  return clean(s)
    .split(/\n\s*\n/)
    .map(words)
    .filter(Boolean)
    .join("\n\n");
}

/** A code span on one line: its delimiter is one backtick longer than any run inside. */
function code(s: string): string {
  const body = oneLine(s);
  if (body === "") return "";
  const ticks = "`".repeat(longestRun(body, "`") + 1);
  const pad = /^[`\s]|[`\s]$/.test(body) ? " " : "";
  return `${ticks}${pad}${body}${pad}${ticks}`;
}

/**
 * A code span in a table cell. GFM splits cells at every pipe not preceded by a backslash, even
 * inside code, and no escape yields a literal `\|` in code there, so such a value becomes text.
 */
function cellCode(s: string): string {
  return oneLine(s).includes("\\|") ? text(s) : code(s).replaceAll("|", "\\|");
}

/** A fenced block: the fence is longer than any backtick run inside, so nothing can close it early. */
function fence(content: string): string {
  const body = clean(content).replace(/\n+$/, "");
  const ticks = "`".repeat(Math.max(3, longestRun(body, "`") + 1));
  return `${ticks}text\n${body}\n${ticks}`;
}

function table(head: string[], rows: string[][]): string {
  const row = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [row(head), row(head.map(() => "---")), ...rows.map(row)].join("\n");
}

function oneLine(s: string): string {
  return clean(s).replace(/\s*\n\s*/g, " ");
}

function longestRun(s: string, char: string): number {
  let longest = 0;
  let run = 0;
  for (const c of s) {
    run = c === char ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}

function orDash<T>(value: T | null, format: (v: T) => string): string {
  return value === null || value === "" ? "—" : format(value);
}

function location(file: string, line: number | null): string {
  return line === null ? file : `${file}:${line}`;
}

function basename(file: string): string {
  return file.split(/[\\/]/).at(-1) ?? file;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
