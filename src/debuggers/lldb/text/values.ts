/**
 * LLDB's printed values, read into the one-line C form the model's readers share with gdb
 * (`{id = 1, client = 0x0}`, `(session *) 0x55a0c8e2b2f0`, `0x55 "text"`): lldb prints aggregates
 * over several lines (or as `(a = 1, b = 2)` when short), arrays with `[N] = ` labels, pointers
 * zero-padded and a null pointer as `NULL` (`nullptr` in C++).
 */
import type { Variable } from "../../model.js";

/** A value as lldb printed it (maybe over several lines), as one line of C. */
export function normalizeValue(text: string): string {
  const joined = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join("\n")
    .replace(/\{\n/g, "{")
    .replace(/\n\}/g, "}")
    .replace(/\n/g, ", ");
  return rewrite(joined);
}

/** Rewrites outside string literals: one-liner parentheses to braces, labels, pointers. */
function rewrite(text: string): string {
  let out = "";
  let index = 0;
  const closers: string[] = [];
  while (index < text.length) {
    const ch = text[index] ?? "";
    if (ch === '"' || ch === "'") {
      const end = closingQuote(text, index);
      out += text.slice(index, end + 1);
      index = end + 1;
      continue;
    }
    const rest = text.slice(index);
    // `(a = 1, b = 2)` and `([0] = 1, [1] = 2)`: lldb's one-line aggregates.
    if (ch === "(" && /^\((?:[A-Za-z_][\w.]*|\[\d+\]) = /.test(rest) && (out === "" || /(?:= |[{,] ?)$/.test(out))) {
      out += "{";
      closers.push("}");
      index++;
      continue;
    }
    if (ch === "(") closers.push(")");
    if (ch === ")" || ch === "}") {
      out += closers.pop() ?? ch;
      index++;
      continue;
    }
    if (ch === "{") closers.push("}");
    const label = /^\[\d+\] = /.exec(rest);
    if (label && /(?:^|[{,] ?)$/.test(out)) {
      index += label[0].length;
      continue;
    }
    const pointer = /^0x0*([0-9a-fA-F]+)\b/.exec(rest);
    if (pointer && !/[\w]$/.test(out)) {
      out += `0x${(pointer[1] ?? "0").toLowerCase()}`;
      index += pointer[0].length;
      // A function pointer: `0x... (prog\`handler at f.c:3:1)` is gdb's `0x... <handler>`.
      const target = /^ \((?:[^`()]+`)?([^()]*?)(?: at [^()]*)?\)/.exec(text.slice(index));
      if (target) {
        out += ` <${target[1]}>`;
        index += target[0].length;
      }
      continue;
    }
    // C's `NULL` and C++'s `nullptr` (`this = nullptr`).
    const nil = /^(?:NULL|nullptr)\b/.exec(rest);
    if (nil && !/[\w]$/.test(out)) {
      out += "0x0";
      index += nil[0].length;
      continue;
    }
    out += ch;
    index++;
  }
  return out;
}

function closingQuote(text: string, start: number): number {
  const quote = text[start];
  for (let index = start + 1; index < text.length; index++) {
    if (text[index] === "\\") index++;
    else if (text[index] === quote) return index;
  }
  return text.length - 1;
}

/** `(type) $N = value`, or `(type) name = value`: the type, the name and the value's text. */
function typedLine(text: string): { type: string; name: string; value: string } | null {
  if (!text.startsWith("(")) return null;
  let depth = 0;
  for (let index = 0; index < text.length; index++) {
    if (text[index] === "(") depth++;
    else if (text[index] === ")" && --depth === 0) {
      const named = /^ (\S+) = ([\s\S]*)$/.exec(text.slice(index + 1));
      return named ? { type: text.slice(1, index), name: named[1] ?? "", value: named[2] ?? "" } : null;
    }
  }
  return null;
}

/**
 * `expression -- EXPR`: `(session *) $0 = 0x000055b582e732f0` → `(session *) 0x55b582e732f0` (a
 * pointer keeps its type, as gdb prints it; a string, a number or an aggregate does not).
 */
export function parseExpressionValue(output: string): string | null {
  // `expression` names the result `$N`; `frame variable` by the path it read.
  const start = output.search(/^\(.*\) \S+ = /m);
  if (start < 0) return null;
  const typed = typedLine(output.slice(start).replace(/\n+$/, ""));
  if (!typed) return null;
  // `<parent is NULL>`, `<read memory from 0x20 failed (0 of 8 bytes read)>`: no value, as gdb's error says.
  if (/^<(?:parent is NULL|read memory from .* failed.*|unavailable|no value available|invalid address.*)>$/.test(typed.value.trim())) return null;
  const value = withCharCode(typed.type, normalizeValue(typed.value));
  if (/\*\s*(?:const\s*)?$/.test(typed.type) && /^0x[0-9a-f]+$/.test(value)) return `(${typed.type}) ${value}`;
  return value;
}

const ESCAPED: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, e: 27, "0": 0, "\\": 92, "'": 39, '"': 34 };

/** A char printed as `'\t'` reads as gdb prints it, with its code first: `9 '\t'`. */
function withCharCode(type: string, value: string): string {
  if (!/^(?:const\s+)?(?:(?:un)?signed\s+)?char$/.test(type.trim())) return value;
  const literal = /^'(\\x[0-9a-fA-F]{1,2}|\\[0-7]{1,3}|\\.|[^'\\])'$/.exec(value)?.[1];
  if (literal === undefined) return value;
  let code: number | undefined;
  if (!literal.startsWith("\\")) code = literal.charCodeAt(0);
  else if (/^\\x/.test(literal)) code = parseInt(literal.slice(2), 16);
  else if (/^\\[0-7]/.test(literal)) code = parseInt(literal.slice(1), 8);
  else code = ESCAPED[literal.slice(1)];
  if (code === undefined) return value;
  // A plain char is signed on x86-64: 0xff is -1.
  const signed = !/unsigned/.test(type) && code > 127 ? code - 256 : code;
  return `${signed} ${value}`;
}

/** `frame variable`: `(int) count = 3` per variable, aggregates over several lines. */
export function parseVariables(output: string): Variable[] {
  const variables: Variable[] = [];
  let current: { name: string; type: string; lines: string[] } | null = null;
  const flush = () => {
    if (current) variables.push({ name: current.name, value: withCharCode(current.type, normalizeValue(current.lines.join("\n"))) });
    current = null;
  };
  for (const line of output.split("\n")) {
    const typed = /^\(/.test(line) ? typedLine(line) : null;
    if (typed) {
      flush();
      current = { name: typed.name, type: typed.type, lines: [typed.value] };
    } else if (current && line.trim() !== "") {
      (current as { lines: string[] }).lines.push(line);
    }
  }
  flush();
  return variables;
}
