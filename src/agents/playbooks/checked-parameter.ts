/**
 * A check recorded by a function the culprit called: an invalid-parameter report names the checker
 * and the check on its parameter (`format != NULL` failed in `log_line`). The culprit passed that
 * parameter's value; its own expression for it, read from the call on its line and the checker's
 * parameter list, is what to evaluate in the culprit's frame.
 */
import type { Facts } from "./facts.js";
import { codeOf, escape, identifiers, insideParentheses, splitTopLevel, type SourceFile } from "./source.js";

/** Lines a definition's parameter list may run over. */
const MAX_SIGNATURE_LINES = 8;

/** The invalid-parameter message the minidump's assertion stream gives: the check and the function that made it. */
export function invalidParameter(message: string): { check: string; checker: string } | null {
  const match = /^invalid parameter: `(.+)` failed in ([A-Za-z_][\w:]*)/s.exec(message);
  return match?.[1] && match[2] ? { check: match[1], checker: match[2] } : null;
}

/**
 * The expression the culprit's line passes for `parameter` of `checker`: `log_line(status_templates[state], load)`
 * passes `status_templates[state]` as `format`. Null when the line makes no such call, the checker's
 * definition is not in `source`, or the parameter is not one of its named ones.
 */
export function passedFor(source: SourceFile, callLine: string, checker: string, parameter: string): string | null {
  const names = parameterNames(source, checker);
  const index = names?.indexOf(parameter) ?? -1;
  if (index < 0) return null;
  const passed = callArguments(callLine, checker)?.[index];
  return passed && passed !== "" ? passed : null;
}

/** The arguments a line passes in its call to `callee`; null without a complete call on the line. */
export function callArguments(line: string, callee: string): string[] | null {
  const code = codeOf(line);
  const match = new RegExp(`\\b${escape(callee)}\\s*\\(`).exec(code);
  if (!match) return null;
  const inside = insideParentheses(code, match.index + match[0].length);
  return inside === null ? null : splitTopLevel(inside);
}

/**
 * The names of a function's parameters from its definition in the source: `static int log_line(const
 * char *format, ...)` → `format`, `...`. The definition is the line naming the function after a type
 * and whose parameter list is followed by its body, not by `;`.
 */
export function parameterNames(source: SourceFile, fn: string): string[] | null {
  const head = new RegExp(`^\\s*[A-Za-z_][\\w\\s*&:<>,]*[\\s*&]${escape(fn)}\\s*\\(`);
  for (let n = 0; n < source.lines.length; n++) {
    const first = codeOf(source.lines[n] ?? "");
    const match = head.exec(first);
    if (!match || /^\s*(return|else|case)\b/.test(first)) continue;
    const text = [first, ...source.lines.slice(n + 1, n + MAX_SIGNATURE_LINES).map(codeOf)].join(" ");
    const inside = insideParentheses(text, match[0].length);
    if (inside === null) continue;
    const after = text.slice(match[0].length + inside.length + 1).trimStart();
    if (after.startsWith(";")) continue;
    return splitTopLevel(inside).map((p) => (p === "..." ? p : (/([A-Za-z_]\w*)\s*(?:\[[^\]]*\])*\s*$/.exec(p)?.[1] ?? "")));
  }
  return null;
}

/**
 * The recorded check rewritten on the culprit's arguments (`format != NULL` → `status_templates[state]
 * != NULL`), with how each parameter was bound; null when the culprit's line does not show the call.
 */
export function checkInCulprit(facts: Pick<Facts, "source" | "line" | "fn">, recorded: { check: string; checker: string }): { expression: string; said: string } | null {
  if (!facts.source || !facts.line || recorded.checker === facts.fn) return null;
  let expression = recorded.check;
  const bound: string[] = [];
  for (const name of new Set(identifiers(recorded.check))) {
    const passed = passedFor(facts.source, facts.line, recorded.checker, name);
    if (passed === null) continue;
    const operand = /^[\w\s.\->[\]]+$/.test(passed) ? passed : `(${passed})`;
    expression = expression.replace(new RegExp(`(?<![\\w.>])${escape(name)}\\b`, "g"), operand);
    bound.push(`\`${passed}\` for \`${name}\``);
  }
  return bound.length > 0 ? { expression, said: bound.join(", ") } : null;
}

/** The value of a literal operand (`NULL`, `nullptr`, `0`, `0x10`, `'\0'` left out); null for anything the program holds. */
export function literalOf(operand: string): bigint | null {
  const text = operand.trim();
  if (/^(NULL|nullptr|false)$/.test(text)) return 0n;
  if (text === "true") return 1n;
  const number = /^(0x[0-9a-f]+|\d+)[uUlL]*$/i.exec(text)?.[1];
  return number === undefined ? null : BigInt(number);
}
