/**
 * Where a bad pointer came from, read in the source the way an engineer follows it back: the line
 * that assigned it and, when that was a call, the callee's `return NULL`; the lines that store NULL
 * into the field; the caller's line that passed it. Each becomes a probe of that source line, so
 * the conclusion quotes evidence rather than the file on disk.
 */
import { isRuntimeFrame, normalizeFunctionName } from "../../analyzers/index.js";
import type { SourceLine } from "../../debuggers/model.js";
import { probes, type ProbeOf } from "../../debuggers/probe.js";
import type { Evidence, Found } from "../evidence.js";
import type { Facts } from "./facts.js";
import type { Citations } from "./kit.js";
import { basename } from "./prose.js";
import { enclosingFunction, escape, functionSpan, grep, withoutComments, type SourceFile } from "./source.js";

export type OriginKind = "assignment" | "callee-return" | "null-store" | "caller";

export interface OriginLine {
  kind: OriginKind;
  file: string;
  line: number;
  /** The function the line is in, when known. */
  function: string | null;
}

const RETURNS_NULL = /\breturn\b.*\b(NULL|nullptr)\b|\breturn\s+0\s*;|std::ptr::null/;
/** Lines quoted per kind: enough to show the path, few enough to stay readable. */
const PER_KIND = 3;

/**
 * The source lines that explain `pointer`'s value in the culprit. `nullish`: the value was NULL,
 * so stores of NULL and `return NULL` are what to look for.
 */
export function originsOf(facts: Facts, pointer: string, nullish: boolean): OriginLine[] {
  const { source, culprit } = facts;
  const origins: OriginLine[] = [];
  const add = (kind: OriginKind, file: SourceFile | null, lines: number[]) => {
    if (file === null) return;
    for (const line of lines.slice(0, PER_KIND)) {
      if (origins.some((o) => o.file === file.path && o.line === line)) continue;
      origins.push({ kind, file: file.path, line, function: enclosingFunction(file, line)?.name ?? null });
    }
  };
  if (source && culprit?.line != null && facts.fn) {
    const span = functionSpan(source, facts.fn, culprit.line);
    if (span && /^[A-Za-z_]\w*$/.test(pointer)) {
      const assignments = grep(source, new RegExp(`\\b${escape(pointer)}\\s*=(?!=)`), span.start, culprit.line - 1);
      const last = assignments.at(-1);
      if (last !== undefined) {
        add("assignment", source, [last]);
        const callee = new RegExp(`\\b${escape(pointer)}\\s*=\\s*(?:\\([^)]*\\)\\s*)?([A-Za-z_]\\w*)\\s*\\(`).exec(source.lines[last - 1] ?? "")?.[1];
        if (callee) add("callee-return", source, returnLines(source, callee, nullish));
      }
    }
  }
  const member = /(?:->|\.)([A-Za-z_]\w*)$/.exec(pointer)?.[1];
  if (member && nullish) {
    // `x->member = NULL;`, and `x.member = cond ? NULL : y;`
    add("null-store", source, grep(source, new RegExp(`(?:->|\\.)\\s*${escape(member)}\\s*=(?!=)[^;]*\\b(?:NULL|nullptr)\\b`)));
  }
  if (pointer === "this" && facts.callerLine && facts.callerSource && facts.fn) {
    // `manager.find(id)->idle_seconds(now)`: the object came back from `find`.
    const producer = new RegExp(`([A-Za-z_]\\w*)\\s*\\([^()]*\\)\\s*(?:->|\\.)\\s*${escape(facts.fn)}\\s*\\(`).exec(facts.callerLine)?.[1];
    if (producer) add("callee-return", facts.callerSource, returnLines(facts.callerSource, producer, nullish));
  }
  if (facts.caller?.line != null) add("caller", facts.callerSource, [facts.caller.line]);
  return origins;
}

/** The `return` lines of `fn` in `source` (only those that can return NULL when `nullish`). */
function returnLines(source: SourceFile, fn: string, nullish: boolean): number[] {
  const span = functionSpan(source, fn);
  if (!span) return [];
  const returns = grep(source, /\breturn\b/, span.start, span.end);
  if (!nullish) return returns.slice(-2);
  return returns.filter((n) => RETURNS_NULL.test(source.lines[n - 1] ?? ""));
}

/** The probe that shows an origin's line of source. */
export function listing(origin: { file: string; line: number }): ProbeOf<"source"> {
  return probes.source(origin.file, origin.line, origin.line);
}

/** The code of the first line a source probe read (`    session->client = NULL;`), trimmed and without comments. */
export function listedCode(found: Found | null): string | null {
  if (!found?.ok || found.probe.kind !== "source") return null;
  const row = (found.reading as SourceLine[] | null)?.[0];
  const code = row ? withoutComments(row.text) : "";
  return code ? code : null;
}

export interface QuotedOrigin extends OriginLine {
  code: string;
  evidence: Found<ProbeOf<"source">>;
}

/** The origins whose line of source was asked for and read. */
export function quotedOrigins(origins: OriginLine[], evidence: Evidence): QuotedOrigin[] {
  const quoted: QuotedOrigin[] = [];
  for (const origin of origins) {
    const found = evidence.find(listing(origin));
    const code = listedCode(found);
    if (found && code) quoted.push({ ...origin, code, evidence: found });
  }
  return quoted;
}

/** The call lines of the callers further out (the caller's own caller), where an argument is often a literal. */
export function outerCallers(facts: Facts): OriginLine[] {
  return facts.triage.frames.slice(1, 4).flatMap((frame) =>
    frame.file !== null && frame.line !== null && frame.function !== null && !isRuntimeFrame(frame)
      ? [{ kind: "caller" as const, file: frame.file, line: frame.line, function: normalizeFunctionName(frame.function) }]
      : [],
  );
}

/** Sentences that walk the origin lines: assignment, callee's return, stores of NULL, caller. */
export function originStory(origins: QuotedOrigin[], c: Citations, nullish = true): string {
  const sentences: string[] = [];
  const seen = new Set<string>();
  for (const origin of origins) {
    if (seen.has(`${origin.file}:${origin.line}`)) continue;
    seen.add(`${origin.file}:${origin.line}`);
    const at = `${basename(origin.file)}:${origin.line}`;
    const fn = origin.function ? ` in \`${origin.function}\`` : "";
    const quoted = `\`${origin.code}\``;
    switch (origin.kind) {
      case "assignment":
        sentences.push(`It was assigned at ${at}: ${quoted}${c.cite(origin.evidence)}.`);
        break;
      case "callee-return":
        sentences.push(
          nullish
            ? `That function can return NULL: ${quoted} at ${at}${fn}${c.cite(origin.evidence)}.`
            : `That function returns \`${origin.code.replace(/^return\s+/, "").replace(/;$/, "")}\` (${at}${fn})${c.cite(origin.evidence)}.`,
        );
        break;
      case "null-store":
        sentences.push(`The program stores NULL into it at ${at}${fn}: ${quoted}${c.cite(origin.evidence)}.`);
        break;
      case "caller":
        sentences.push(`${origin.function ? `\`${origin.function}\`` : "The caller"} called it at ${at}: ${quoted}${c.cite(origin.evidence)}.`);
        break;
    }
  }
  return sentences.join(" ");
}
