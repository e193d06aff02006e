/**
 * The report laid out: one analysis written up the way an engineer would, facts first, as blocks
 * of inline content (inline.ts). The Markdown and the HTML reports are both written from these
 * blocks, so they say the same things in the same order.
 */
import path from "node:path";
import { waiterWord, type ReportDetails, type ReportDocument, type SourceExcerpt, type StackFrame } from "./document.js";
import { anchorOf, clean, code, joined, line, link, paragraphsOf, strong, text, words, type Inline } from "./inline.js";
import { listed, thousands } from "./numbers.js";
import { annotationsText } from "./annotations.js";
import { cutText } from "./cut.js";
import { senderText } from "./origin.js";
import type { CrashKind, Report } from "./schema.js";

export type Block =
  | { kind: "heading"; depth: 1 | 2 | 3; spans: Inline }
  | { kind: "paragraph"; spans: Inline }
  | { kind: "list"; ordered: boolean; items: Inline[] }
  | { kind: "table"; head: Inline[]; rows: Inline[][] }
  /** Preformatted text (an output, a listing), shown as it is. */
  | { kind: "fence"; text: string };

export interface RenderOptions {
  /** The folder the report is written to, which links to evidence files are relative to. Default: cwd. */
  linkBase?: string;
  /** The report's blocks, when they were laid out already with the same `linkBase` (writeReports, once for both formats). */
  blocks?: Block[];
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

/** A backtrace longer than this is cut in the report; the full one is in the evidence. */
const MAX_FRAMES = 30;
/** Frames shown above a recursion's summary. */
const RECURSION_FRAMES = 6;
/** Frames of each deadlocked thread shown side by side. */
const CYCLE_STACK_FRAMES = 12;
/** Load warnings listed in a report; the rest are counted. */
const MAX_DEBUGGER_WARNINGS = 12;

export function reportBlocks({ report, details }: ReportDocument, options: RenderOptions = {}): Block[] {
  const linkBase = path.resolve(options.linkBase ?? ".");
  return [
    heading(1, verdict(report)),
    paragraph(sessionLine(report)),
    ...summarySection(report),
    ...crashSection(report, details),
    heading(2, SECTION.rootCause),
    ...orElse(prose(report.conclusion.rootCause), "Not determined."),
    ...listSection(SECTION.recommendations, report.conclusion.recommendations, true),
    ...hypothesesSection(report),
    ...evidenceSection(report, details, linkBase),
    ...critiqueSection(report),
    ...listSection(SECTION.followUp, report.followUpQuestions, false),
    ...chatSection(report, details),
    ...technicalSection(report, details),
    ...usageSection(report),
  ];
}

/** The one-line verdict of the title, the values that came from the dump in code. */
export function verdict(report: Report): Inline {
  const { crash } = report;
  const cycle = crash.deadlock ? waitCycle(crash.deadlock.cycle) : [];
  if (crash.kind === "deadlock" && cycle.length > 1) {
    const threads = [...new Set(cycle)].map(String);
    const between = `${waiterWord(report)}s ${listed(threads)}`;
    // Named by what the threads were doing and what they wait for, where the dump tells it.
    const edges = crash.deadlock?.cycle ?? [];
    const functions = [...new Set(edges.map((e) => e.function).filter((f): f is string => Boolean(f)))];
    const locks = [...new Set(edges.map((e) => e.lockName).filter((l): l is string => Boolean(l)))];
    if (functions.length === 0) return line(`Deadlock between ${between}`);
    const over = locks.length > 0 ? line(" over ", andList(locks.map((l) => [code(l)]))) : null;
    return line("Deadlock in ", andList(functions.map((f) => [code(f)])), over, ` (${between})`);
  }
  const { function: fn, file, line: at } = crash.culprit;
  const where = fn ? line(" in ", code(fn)) : null;
  const place = file ? line(" (", code(at === null ? basename(file) : `${basename(file)}:${at}`), ")") : null;
  // A hang without a lock cycle, or a signal a process sent: neither is a crash, and the title says so.
  if (crash.kind === "hang") return line("Hang: every thread is blocked waiting, with no lock cycle");
  if (crash.kind === "unknown" && crash.origin?.type === "requested") return line("Dump taken on request, not at a crash", where, place);
  if (crash.kind === "unknown" && crash.origin?.type === "unreadable") return line("Stop not readable: the debugger read no registers of the dump", where, place);
  const origin = crash.origin?.type;
  if (crash.kind === "unknown" && crash.signal && crash.origin && (origin === "sent" || origin === "raised")) {
    return origin === "raised"
      ? line(crash.signal, " raised by the program itself", where, place)
      : line(crash.signal, ` sent ${senderText(crash.origin, false)}, not a crash: it arrived`, where, place);
  }
  return line(KIND_LABEL[crash.kind], where, place);
}

function andList(items: Inline[]): Inline {
  return items.length <= 1 ? (items[0] ?? []) : line(joined(items.slice(0, -1), ", "), " and ", items.at(-1)!);
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
  "out-of-memory": "Out of memory",
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

function sessionLine({ session }: Report): Inline {
  const parts: Inline[] = [
    line("Session ", code(session.id)),
    line("dump ", code(session.dump)),
    session.executable ? line("executable ", code(session.executable)) : [],
    session.debugger ? [text(session.debugger)] : [],
    line("started ", code(session.startedAt)),
    session.finishedAt ? line("finished ", code(session.finishedAt)) : line("unfinished"),
  ];
  return joined(
    parts.filter((p) => p.length > 0),
    " · ",
  );
}

function summarySection({ conclusion, issue }: Report): Block[] {
  return [
    heading(2, SECTION.summary),
    ...orElse(prose(conclusion.summary), "No summary."),
    paragraph(line(strong("Confidence:"), ` ${Math.round(conclusion.confidence * 100)}%`)),
    ...(issue ? [paragraph(line(strong("Reported issue:"), " ", text(issue)))] : []),
  ];
}

function crashSection(report: Report, details: ReportDetails): Block[] {
  const { crash } = report;
  const { culprit, thread } = crash;
  const facts: [string, Inline][] = [
    ["Kind", [code(crash.kind)]],
    ["Signal", crash.signal ? [code([crash.signal, crash.signalCode].filter(Boolean).join(" / "))] : dash()],
    ["Origin", crash.origin ? line(text(crash.origin.type), ": ", text(crash.origin.evidence)) : dash()],
    ["Fault address", orDash(crash.faultAddress, (v) => [code(v)])],
    ["Access", orDash(crash.access, (v) => [text(v)])],
    ["Message", orDash(crash.message, (v) => [text(v)])],
    ["Thread", threadLabel(thread)],
    ["Culprit", culpritLabel(culprit)],
    ["Module", orDash(culprit.module, (v) => [code(v)])],
    ["Signature", [code(crash.signature)]],
    ["Exploitability", crash.exploitability ? line(text(crash.exploitability.rating), ": ", text(crash.exploitability.reasons.join("; "))) : dash()],
    ...(crash.annotations ? [["Annotations", [text(annotationsText(crash.annotations))]] as [string, Inline]] : []),
    ...(crash.cut ? [["Dump", [text(`core ${cutText(crash.cut)}; what that memory held is unknown`)]] as [string, Inline]] : []),
  ];
  return [
    heading(2, SECTION.crash),
    table(["Fact", "Value"], facts.map(([fact, value]) => [line(fact), value])),
    ...sourceBlock(details.sourceExcerpt ?? null),
    ...(crash.deadlock ? deadlockBlock(crash.deadlock.cycle, waiterWord(report)) : []),
    ...cycleStacksBlock(details.cycleStacks ?? []),
    ...stackBlock(crash.culprit.frame, details),
  ];
}

function threadLabel(thread: Report["crash"]["thread"]): Inline {
  const parts: Inline[] = [
    thread.id === null ? [] : line(`${thread.id}`),
    thread.lwp === null ? [] : line(`LWP ${thread.lwp}`),
    thread.name ? [code(thread.name)] : [],
  ];
  const shown = parts.filter((p) => p.length > 0);
  return shown.length ? joined(shown, " · ") : dash();
}

function culpritLabel(culprit: Report["crash"]["culprit"]): Inline {
  if (!culprit.function && !culprit.file) return dash();
  const parts: Inline[] = [
    culprit.function ? [code(culprit.function)] : line("unknown function"),
    culprit.file ? line("at ", code(location(culprit.file, culprit.line, culprit.column))) : [],
    culprit.frame === null ? [] : line(`(frame ${culprit.frame})`),
  ];
  return joined(
    parts.filter((p) => p.length > 0),
    " ",
  );
}

function sourceBlock(excerpt: SourceExcerpt | null): Block[] {
  if (!excerpt || excerpt.lines.length === 0) return [];
  const width = String(Math.max(...excerpt.lines.map((l) => l.n))).length;
  const listing = excerpt.lines.map((l) => `${l.n === excerpt.line ? ">" : " "} ${String(l.n).padStart(width)}  ${l.text}`).join("\n");
  return [heading(3, "Source"), paragraph(line(code(excerpt.file), `, line ${excerpt.line}:`)), fence(listing)];
}

type DeadlockEdge = NonNullable<Report["crash"]["deadlock"]>["cycle"][number];

function deadlockBlock(edges: DeadlockEdge[], waiter: "goroutine" | "thread"): Block[] {
  const cycle = waitCycle(edges);
  const diagram = cycle.length > 1 ? paragraph(line(strong("Cycle:"), ` ${cycle.map((t) => `${waiter} ${t}`).join(" → ")}`)) : null;
  const rows = edges.map((e): Inline[] => [
    line(`${e.thread}`),
    e.lock === null ? dash() : e.lockName ? line(code(e.lockName), " (", code(e.lock), ")") : [code(e.lock)],
    e.heldByThread === null ? dash() : line(`${waiter} ${e.heldByThread}`),
    waitingIn(e),
  ]);
  return [
    heading(3, "Wait-for cycle"),
    ...(diagram ? [diagram] : []),
    table([waiter === "goroutine" ? "Goroutine" : "Thread", "Waits for lock", "Held by", "Waiting in"], rows),
  ];
}

function waitingIn(edge: DeadlockEdge): Inline {
  const parts = [edge.function ? [code(edge.function)] : [], edge.file ? [code(location(edge.file, edge.line))] : []].filter((p) => p.length > 0);
  return parts.length ? joined(parts, " at ") : dash();
}

/** The cycle's stacks side by side: one column per thread, innermost frame first. */
function cycleStacksBlock(stacks: { thread: number; frames: StackFrame[] }[]): Block[] {
  if (stacks.length < 2) return [];
  const depth = Math.min(CYCLE_STACK_FRAMES, Math.max(...stacks.map((s) => s.frames.length)));
  const rows = Array.from({ length: depth }, (_, i) =>
    stacks.map((s): Inline => {
      const frame = s.frames[i];
      if (!frame) return [];
      const called = line(`#${frame.level} `, frame.function ? code(frame.function) : "??");
      return frame.file ? line(called, " at ", code(location(frame.file, frame.line))) : called;
    }),
  );
  return [
    heading(3, "The cycle's stacks, side by side"),
    table(
      stacks.map((s) => `Thread ${s.thread}`),
      rows,
    ),
  ];
}

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
function inlinedText(frame: StackFrame): Inline {
  const chain = frame.inlinedInto ?? [];
  return chain.flatMap((outer) => line(" (inlined into ", code(outer.function), outer.file ? line(" at ", code(location(outer.file, outer.line))) : null, ")"));
}

/** What ran a runtime's frame, by its language. */
const RUNTIME_CODE: Record<string, string> = { java: "Java code (run by the JVM)", python: "Python code (run by CPython)", javascript: "JavaScript (run by Node.js)" };

/** "Java code (run by the JVM)", "Python code (run by CPython)", "JavaScript (run by Node.js)" for a runtime's frame. */
function runtimeCode(language: string): string {
  return RUNTIME_CODE[language] ?? `${language} code`;
}

function stackBlock(culpritFrame: number | null, details: ReportDetails): Block[] {
  const frames = details.frames ?? [];
  const recursion = details.recursion ?? null;
  if (frames.length === 0 && !recursion) return [];
  const shown = frames.slice(0, recursion ? RECURSION_FRAMES : MAX_FRAMES);
  const hidden = recursion ? Math.max(recursion.frames, frames.length) - shown.length : frames.length - shown.length;
  const rows = shown.map((f): Inline[] => [
    f.level === culpritFrame ? [strong(`${f.level}`)] : line(`${f.level}`),
    f.function ? line(code(f.function), f.level === culpritFrame ? " ← culprit" : null, inlinedText(f)) : line("??"),
    f.file ? [code(location(f.file, f.line, f.column))] : dash(),
    // A runtime's frame (a Java method, a Python function) runs in no module of its own: its language says where it ran.
    f.module ? [code(basename(f.module))] : f.runtimeLanguage ? line(runtimeCode(f.runtimeLanguage)) : dash(),
  ]);
  const blocks = [heading(3, "Stack")];
  if (recursion) {
    const turn = joined(
      [...recursion.cycle, ...recursion.cycle.slice(0, 1)].map((fn) => [code(fn)]),
      " → ",
    );
    blocks.push(paragraph(line(strong("Recursion:"), ` ${thousands(recursion.frames)} frames deep`, turn.length ? line(", repeating ", turn) : null, ".")));
  }
  if (rows.length) blocks.push(table(["#", "Function", "Location", "Module"], rows));
  if (hidden > 0) {
    const why = recursion ? "the recursion above repeats" : "see the backtrace evidence";
    blocks.push(paragraph(line(`… ${thousands(hidden)} more frames (${why}).`)));
  }
  return blocks;
}

function hypothesesSection(report: Report): Block[] {
  if (report.hypotheses.length === 0) return [];
  const anchors = evidenceAnchors(report);
  const items = report.hypotheses.map((h) => {
    const cited = h.evidenceIds.map((id) => evidenceRef(id, anchors));
    const evidence = cited.length ? line(" (evidence: ", joined(cited, ", "), ")") : null;
    return line(strong(text(h.id), ` · ${h.status}`), " — ", words(h.statement), evidence);
  });
  return [heading(2, SECTION.hypotheses), list(false, items)];
}

function evidenceSection(report: Report, details: ReportDetails, linkBase: string): Block[] {
  if (report.evidence.length === 0) return [];
  const redactions = details.redactions;
  const blocks = [heading(2, SECTION.evidence)];
  if (redactions && redactions.count > 0) {
    const kinds = Object.entries(redactions.kinds).map(([kind, n]) => line(text(kind), ` ${n}`));
    const values = redactions.count === 1 ? "1 value" : `${redactions.count} values`;
    blocks.push(paragraph(line(`${values} redacted before any model saw them: `, joined(kinds, ", "), ".")));
  }
  for (const e of report.evidence) {
    const citedBy = report.hypotheses.filter((h) => h.evidenceIds.includes(e.id)).map((h) => [text(h.id)]);
    const facts = [
      line(formatBytes(e.bytes)),
      citedBy.length ? line("cited by ", joined(citedBy, ", ")) : [],
      e.path ? [link(fileHref(e.path, linkBase), "full output")] : line("full output in the session's evidence store"),
    ].filter((p) => p.length > 0);
    blocks.push(heading(3, evidenceHeading(e)), ...prose(e.summary), paragraph(joined(facts, " · ")));
    const excerpt = details.evidenceExcerpts?.[e.id];
    if (excerpt) blocks.push(fence(excerpt));
  }
  return blocks;
}

function evidenceHeading(e: Report["evidence"][number]): Inline {
  return line(text(e.id), " · ", code(e.command));
}

/** Evidence id → in-document anchor of its heading. */
function evidenceAnchors(report: Report): Map<string, string> {
  return new Map(report.evidence.map((e) => [e.id, anchorOf(evidenceHeading(e))]));
}

function evidenceRef(id: string, anchors: Map<string, string>): Inline {
  const anchor = anchors.get(id);
  return anchor ? [link(`#${anchor}`, text(id))] : [text(id)];
}

function critiqueSection({ critique }: Report): Block[] {
  if (critique.rounds.length === 0 && critique.unresolved.length === 0) return [];
  const blocks = [heading(2, SECTION.critique)];
  for (const round of critique.rounds) {
    if (round.issues.length) blocks.push(paragraph(line(strong(`Round ${round.round}:`))), bullets(round.issues));
    else blocks.push(paragraph(line(strong(`Round ${round.round}:`), " no issues.")));
  }
  const { unresolved } = critique;
  if (unresolved.length) blocks.push(paragraph(line(strong("Unresolved:"))), bullets(unresolved));
  else blocks.push(paragraph(line(strong("Unresolved:"), " none.")));
  return blocks;
}

function chatSection(report: Report, details: ReportDetails): Block[] {
  const chat = details.chat ?? [];
  if (chat.length === 0) return [];
  const anchors = evidenceAnchors(report);
  const blocks = [heading(2, SECTION.chat)];
  for (const exchange of chat) {
    const cited = exchange.evidenceIds.map((id) => evidenceRef(id, anchors));
    blocks.push(paragraph(line(strong("Q:"), " ", text(exchange.question))), ...orElse(prose(exchange.answer), "No answer."));
    if (cited.length) blocks.push(paragraph(line("Evidence: ", joined(cited, ", "), ".")));
  }
  return blocks;
}

function technicalSection(report: Report, details: ReportDetails): Block[] {
  const blocks: Block[] = [];
  const registers = details.registers ?? [];
  if (registers.length) {
    const rows = registers.map((r) => [[code(r.name)], [code(r.value)]]);
    blocks.push(heading(3, "Registers"), table(["Register", "Value"], rows));
  }
  const threads = details.threads ?? [];
  if (threads.length) {
    const crashed = report.crash.thread.id;
    const rows = threads.map((t): Inline[] => [
      t.id === crashed ? line(strong(`${t.id}`), " (crashed)") : line(`${t.id}`),
      orDash(t.name, (v) => [code(v)]),
      orDash(t.function, (v) => [code(v)]),
      orDash(t.state, (v) => [text(v)]),
    ]);
    blocks.push(heading(3, `Threads (${threads.length})`), table(["Thread", "Name", "Function", "State"], rows));
  }
  const modules = details.modules ?? [];
  if (modules.length) {
    const rows = modules.map((m) => [[code(m.path)], [code(m.from)], [code(m.to)]]);
    blocks.push(heading(3, `Modules (${modules.length})`), table(["Path", "From", "To"], rows));
  }
  const symbols = details.symbols ?? [];
  if (symbols.length) {
    const rows = symbols.map((s) => [[code(s.module)], line(s.status), s.detail ? [code(s.detail)] : dash()]);
    blocks.push(heading(3, `Symbols (${symbols.length} modules)`), table(["Module", "Symbols", "From / why"], rows));
  }
  const source = details.dumpSource ?? [];
  if (source.length) blocks.push(heading(3, "The dump as it was found"), list(false, source.map((s) => line(s))));
  const warnings = details.debuggerWarnings ?? [];
  if (warnings.length) {
    const shown = warnings.slice(0, MAX_DEBUGGER_WARNINGS);
    const more = warnings.length > shown.length ? `\n… ${warnings.length - shown.length} more` : "";
    blocks.push(heading(3, `Debugger warnings while loading the dump (${warnings.length})`), fence(`${shown.join("\n")}${more}`));
  }
  return blocks.length ? [heading(2, SECTION.technical), ...blocks] : [];
}

function usageSection({ usage, timings }: Report): Block[] {
  const tokens = (t: { inputTokens: number; outputTokens: number }) => `${thousands(t.inputTokens)} in / ${thousands(t.outputTokens)} out`;
  const items: Inline[] = [
    line(usage.llmCalls === 0 ? "Model calls: none (offline engine)" : `Model calls: ${usage.llmCalls}`),
    line(`Tokens, local: ${tokens(usage.local)}`),
    line(`Tokens, cloud: ${tokens(usage.cloud)}`),
    line(`Time: ${seconds(timings.totalMs)} total; debugger ${seconds(timings.debuggerMs)}, models ${seconds(timings.llmMs)}`),
    ...(usage.modelsDown ?? []).map((down) =>
      line(
        text(`${down.provider} ${down.model}`),
        " at ",
        text(down.url),
        ` ${down.answered === 0 ? "never answered" : `stopped answering after ${down.answered} ${down.answered === 1 ? "call" : "calls"}`} (`,
        text(down.reason.replace(/^\S+ \S+: /, "")),
        "): the rest of the analysis ran offline.",
      ),
    ),
  ];
  return [heading(2, SECTION.usage), list(false, items)];
}

function listSection(title: string, items: string[], ordered: boolean): Block[] {
  if (items.length === 0) return [];
  return [heading(2, title), list(ordered, items.map(words))];
}

function bullets(items: string[]): Block {
  return list(false, items.map(words));
}

// --- Blocks ---

function heading(depth: 1 | 2 | 3, content: string | Inline): Block {
  return { kind: "heading", depth, spans: typeof content === "string" ? line(content) : content };
}

function paragraph(spans: Inline): Block {
  return { kind: "paragraph", spans };
}

function list(ordered: boolean, items: Inline[]): Block {
  return { kind: "list", ordered, items };
}

function table(head: string[], rows: Inline[][]): Block {
  return { kind: "table", head: head.map((h) => line(h)), rows };
}

/** Preformatted text, its line endings and control characters made safe. */
function fence(content: string): Block {
  return { kind: "fence", text: clean(content).replace(/\n+$/, "") };
}

/** Paragraphs of agent or model prose. */
function prose(s: string): Block[] {
  return paragraphsOf(s).map(paragraph);
}

function orElse(blocks: Block[], otherwise: string): Block[] {
  return blocks.length > 0 ? blocks : [paragraph(line(otherwise))];
}

function dash(): Inline {
  return line("—");
}

function orDash<T>(value: T | null, format: (v: T) => Inline): Inline {
  return value === null || value === "" ? dash() : format(value);
}

/** A path made relative to the report's folder, percent-encoded so it is one safe link destination. */
function fileHref(file: string, linkBase: string): string {
  return path
    .relative(linkBase, path.resolve(file))
    .split(path.sep)
    .map((segment) => encodeURIComponent(segment).replace(/\(/g, "%28").replace(/\)/g, "%29"))
    .join("/");
}

function location(file: string, line: number | null, column?: number | null): string {
  return line === null ? file : `${file}:${line}${column != null ? `:${column}` : ""}`;
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

