/**
 * Reading the crashed program's source the way an engineer glances at it: the culprit's line, the
 * function around it, the pointers a line dereferences. C-family and Rust syntax, by pattern, not
 * by parsing: a wrong guess only costs a hypothesis that the debugger then rejects.
 */
import { sourceLines } from "../../debuggers/source-files.js";
import type { SourceExcerpt } from "../../report/document.js";

export interface SourceFile {
  path: string;
  /** 1-based: `lines[n - 1]` is line n. */
  lines: string[];
}

export function readSource(path: string | null): SourceFile | null {
  const lines = path === null ? null : sourceLines(path);
  return path !== null && lines ? { path, lines } : null;
}

/** Lines `line - context` to `line + context` of `source`, clamped to the file, for the report; null past its end. */
export function excerptOf(source: SourceFile, line: number, context = 5): SourceExcerpt | null {
  if (line < 1 || line > source.lines.length) return null;
  const first = Math.max(1, line - context);
  const last = Math.min(source.lines.length, line + context);
  return { file: source.path, line, lines: source.lines.slice(first - 1, last).map((text, i) => ({ n: first + i, text })) };
}

export function lineOf(source: SourceFile | null, n: number | null): string | null {
  if (source === null || n === null) return null;
  return source.lines[n - 1] ?? null;
}

/** The code of a line without comments, and with string and char literals emptied. */
/**
 * A line of source as a person would quote it: comments removed, string and character literals
 * kept whole (`'A'`, `"http://host"` are code, not the start of a comment).
 */
export function withoutComments(line: string): string {
  let out = "";
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === '"' || ch === "'") {
      let end = i + 1;
      while (end < line.length && line[end] !== ch) end += line[end] === "\\" ? 2 : 1;
      out += line.slice(i, end + 1);
      i = end;
    } else if (ch === "/" && line[i + 1] === "/") {
      break;
    } else if (ch === "/" && line[i + 1] === "*") {
      const close = line.indexOf("*/", i + 2);
      if (close < 0) break;
      out += " ";
      i = close + 1;
    } else {
      out += ch;
    }
  }
  return out.replace(/\s+$/, "").replace(/^\s+/, "");
}

export function codeOf(line: string): string {
  return line
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/'(?:[^'\\]|\\.){1,4}'/g, "''")
    .replace(/\/\*.*?\*\//g, " ")
    .replace(/\/\/.*$/, "")
    .trim();
}

export interface Dereference {
  /** The pointer expression, e.g. `session->client`. */
  pointer: string;
  /** The member read through it, e.g. `fd`; null for a plain `*p`. */
  member: string | null;
}

const NAME = "[A-Za-z_][A-Za-z0-9_]*";
const CHAIN = `${NAME}(?:\\s*(?:->|\\.)\\s*${NAME}|\\s*\\[[^\\]]*\\])*`;

/**
 * The pointers a line dereferences, in the order it reads them: `a->b->c` reads through `a`, then
 * `a->b`; `(*node).value` and `*p` read through `node` and `p`.
 */
export function dereferences(line: string): Dereference[] {
  const code = codeOf(line);
  const found: { at: number; deref: Dereference }[] = [];
  for (const match of code.matchAll(new RegExp(CHAIN, "g"))) {
    const parts = splitChain(match[0]);
    let prefix = parts[0] ?? "";
    for (const part of parts.slice(1)) {
      if (part.startsWith("->")) found.push({ at: match.index, deref: { pointer: prefix, member: part.slice(2) } });
      prefix += part.startsWith("[") ? part : part.startsWith("->") ? `->${part.slice(2)}` : `.${part.slice(1)}`;
    }
  }
  for (const match of code.matchAll(new RegExp(`\\(\\s*\\*\\s*(${CHAIN})\\s*\\)\\s*\\.\\s*(${NAME})`, "g"))) {
    found.push({ at: match.index, deref: { pointer: compact(match[1] ?? ""), member: match[2] ?? null } });
  }
  for (const match of code.matchAll(new RegExp(`(?:^|[=(,;!]|return)\\s*\\*\\s*(${CHAIN})`, "g"))) {
    found.push({ at: match.index, deref: { pointer: compact(match[1] ?? ""), member: null } });
  }
  const seen = new Set<string>();
  return found
    .sort((a, b) => a.at - b.at || a.deref.pointer.length - b.deref.pointer.length)
    .map((f) => f.deref)
    .filter((d) => !seen.has(`${d.pointer}|${d.member}`) && seen.add(`${d.pointer}|${d.member}`));
}

export interface IndexedAccess {
  /** The pointer or array indexed (`t->slots`). */
  base: string;
  /** The index expression (`key`, `i + 1`). */
  index: string;
}

/** The `base[index]` accesses on a line, in order: `t->slots[key] = v` → `t->slots`, `key`. */
export function indexedAccesses(line: string): IndexedAccess[] {
  const found: IndexedAccess[] = [];
  const pattern = new RegExp(`(${NAME}(?:\\s*(?:->|\\.)\\s*${NAME})*)\\s*\\[([^\\[\\]]+)\\]`, "g");
  for (const match of codeOf(line).matchAll(pattern)) {
    const base = compact(match[1] ?? "");
    const index = (match[2] ?? "").trim();
    if (/^\d+$/.test(index) || found.some((f) => f.base === base && f.index === index)) continue;
    found.push({ base, index });
  }
  return found;
}

export interface PassedPointer {
  /** The function called, as written on the line (`strlen`, `memcpy`). */
  callee: string;
  /** An argument that is a plain pointer expression (`c->name`, `buf`). */
  pointer: string;
}

const NOT_CALLS = new Set(["if", "while", "for", "switch", "return", "sizeof", "alignof", "typeof", "defined"]);

/**
 * The pointer expressions a line passes to functions: `strlen(c->name)` passes `c->name` to
 * `strlen`. Only arguments that are whole variable/field chains; a call nested in an argument
 * is found on its own.
 */
export function passedPointers(line: string): PassedPointer[] {
  const code = codeOf(line);
  const found: PassedPointer[] = [];
  for (const match of code.matchAll(new RegExp(`(${NAME})\\s*\\(`, "g"))) {
    const callee = match[1] ?? "";
    if (NOT_CALLS.has(callee)) continue;
    const start = (match.index ?? 0) + match[0].length;
    const args = splitTopLevel(insideParentheses(code, start) ?? code.slice(start, -1));
    for (const arg of args) {
      const pointer = compact(arg);
      if (new RegExp(`^${CHAIN}$`).test(pointer) && !found.some((f) => f.pointer === pointer)) found.push({ callee, pointer });
    }
  }
  return found;
}

/** The text from `start` up to the parenthesis that closes the one just before it; null when it does not close. */
export function insideParentheses(code: string, start: number): string | null {
  let depth = 1;
  for (let i = start; i < code.length; i++) {
    if (code[i] === "(") depth += 1;
    else if (code[i] === ")" && --depth === 0) return code.slice(start, i);
  }
  return null;
}

/** A list split at its top-level commas: `a[i, j], f(x, y)` → `a[i, j]`, `f(x, y)`. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of text) {
    if (char === "(" || char === "[") depth += 1;
    if (char === ")" || char === "]") depth -= 1;
    if (char === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else current += char;
  }
  if (current.trim() !== "") parts.push(current);
  return parts.map((part) => part.trim());
}

function splitChain(chain: string): string[] {
  return compact(chain).match(/^[A-Za-z_]\w*|->[A-Za-z_]\w*|\.[A-Za-z_]\w*|\[[^\]]*\]/g) ?? [];
}

function compact(expression: string): string {
  return expression.replace(/\s+/g, "");
}

/** Identifiers a piece of code names (keywords and calls left out). */
export function identifiers(code: string): string[] {
  const names = new Set<string>();
  for (const match of codeOf(code).matchAll(/\b([A-Za-z_]\w*)\b(?!\s*\()/g)) {
    const name = match[1] ?? "";
    if (!KEYWORDS.has(name) && !/^\d/.test(name)) names.add(name);
  }
  return [...names];
}

const KEYWORDS = new Set([
  "return", "if", "else", "for", "while", "do", "switch", "case", "default", "break", "continue", "sizeof", "struct", "union",
  "enum", "const", "static", "unsigned", "signed", "int", "long", "short", "char", "void", "float", "double", "bool", "true",
  "false", "NULL", "nullptr", "this", "new", "delete", "unsafe", "let", "mut", "fn", "as", "self", "Self", "auto", "size_t",
]);

export interface FunctionSpan {
  /** The line of the opening brace's function header. */
  header: number;
  /** First and last line of the body, braces included. */
  start: number;
  end: number;
}

/**
 * The definition of function `name` that contains line `line` (or, without `line`, the first one
 * in the file): its header line and its braced body.
 */
export function functionSpan(source: SourceFile | null, name: string, line?: number): FunctionSpan | null {
  if (source === null) return null;
  const header = new RegExp(`\\b${escape(name)}\\s*(?:<[^>]*>)?\\s*\\(`);
  const last = line ?? source.lines.length;
  const headers: number[] = [];
  for (let n = 1; n <= Math.min(last, source.lines.length); n++) {
    if (isHeader(source.lines[n - 1] ?? "", header)) headers.push(n);
  }
  for (const n of line === undefined ? headers : headers.reverse()) {
    const span = bodyFrom(source.lines, n);
    if (span && (line === undefined || (span.start <= line && line <= span.end))) return { header: n, ...span };
  }
  return null;
}

/** The function whose body holds `line`: its name and span. */
export function enclosingFunction(source: SourceFile | null, line: number): { name: string; span: FunctionSpan } | null {
  if (source === null) return null;
  for (let n = Math.min(line, source.lines.length); n >= 1; n--) {
    const name = /\b([A-Za-z_]\w*)\s*(?:<[^>]*>)?\s*\([^;]*$/.exec(codeOf(source.lines[n - 1] ?? ""))?.[1];
    if (!name || CONTROL.test(name) || !isHeader(source.lines[n - 1] ?? "", new RegExp(`\\b${escape(name)}\\s*(?:<[^>]*>)?\\s*\\(`))) continue;
    const span = bodyFrom(source.lines, n);
    if (span && span.start <= line && line <= span.end) return { name, span: { header: n, ...span } };
  }
  return null;
}

const CONTROL = /^(if|for|while|switch|return|sizeof|catch|match)$/;

/** A line that defines the function `header` names, rather than calling it. */
function isHeader(line: string, header: RegExp): boolean {
  const code = codeOf(line);
  const at = code.search(header);
  if (at < 0 || /;\s*$/.test(code)) return false;
  const before = code.slice(0, at);
  return !/[=(,]|\breturn\b|\bif\b|\bwhile\b|->|\.\s*$/.test(before);
}

/** The braced block that opens on the header line or within the next two lines. */
function bodyFrom(lines: string[], header: number): { start: number; end: number } | null {
  let depth = 0;
  let start: number | null = null;
  for (let n = header; n <= lines.length; n++) {
    const code = codeOf(lines[n - 1] ?? "");
    for (const ch of code) {
      if (ch === "{") {
        if (start === null) start = n;
        depth++;
      } else if (ch === "}" && start !== null) {
        depth--;
        if (depth === 0) return { start, end: n };
      } else if (ch === ";" && start === null) return null;
    }
    if (start === null && n - header >= 2) return null;
  }
  return null;
}

/** Lines (1-based) in [from, to] whose code matches `pattern`. */
export function grep(source: SourceFile | null, pattern: RegExp, from = 1, to = Number.MAX_SAFE_INTEGER): number[] {
  if (source === null) return [];
  const hits: number[] = [];
  for (let n = Math.max(1, from); n <= Math.min(to, source.lines.length); n++) {
    if (pattern.test(codeOf(source.lines[n - 1] ?? ""))) hits.push(n);
  }
  return hits;
}

export function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
