/**
 * The check every debugger's policy makes on an expression in the program's language: it refuses
 * assignment (compound ones too), increment and decrement, and anything that looks like a call,
 * wherever it hides (behind a comma, a cast or a template); string and character literals are
 * skipped, so "a=b" in quotes is only text.
 */

import { quoted } from "./verdict.js";

export interface ExpressionLanguage {
  /** Names that may precede "(" without calling anything (sizeof, pure built-in functions). */
  notCalls: ReadonlySet<string>;
  /** "[obj msg]" sends an Objective-C message, which runs code; MASM has no such syntax. */
  objcMessages: boolean;
  /**
   * Whether the text is compiled as the body of a function and run (lldb's clang-based evaluator):
   * there statements, blocks, declarations and C++'s new, delete, throw and dynamic_cast are code too.
   */
  compiled: boolean;
  /**
   * Go as Delve reads it: parentheses only convert (`uintptr(p)`, `(*T)(a)`) or apply a builtin
   * (`len(s)`); a function runs only behind this keyword (`call f()`), which is what is refused.
   */
  callKeyword?: string;
}

/** C, C++ and Objective-C as gdb and lldb read them. */
export const C_EXPRESSIONS: ExpressionLanguage = {
  notCalls: new Set([
    "sizeof", "alignof", "_Alignof", "__alignof__", "__alignof", "typeof", "__typeof__", "__typeof",
    "decltype", "__decltype", "typeid",
  ]),
  objcMessages: true,
  compiled: false,
};

type TokenKind = "name" | "variable" | "number" | "literal" | "operator" | "other";
interface Token {
  kind: TokenKind;
  text: string;
}

const MULTI_CHAR_OPERATORS = [
  "<<=", ">>=", "::", "->", "++", "--", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>",
  "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ":=",
];
const ASSIGNMENTS = new Set(["=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", ":="]);
// C++'s alternative spellings of &=, |= and ^=.
const ASSIGNMENT_WORDS = new Set(["and_eq", "or_eq", "xor_eq"]);
// A function cannot be named after a builtin type, so "int(" is a functional cast or a type.
const TYPE_KEYWORDS = new Set([
  "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "bool", "_Bool",
  "wchar_t", "char8_t", "char16_t", "char32_t", "__int128", "const", "volatile",
]);
const TAG_KEYWORDS = new Set(["struct", "union", "enum", "class"]);
const CPP_CASTS = new Set(["static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"]);
// Words that, in compiled code, run something in the program: allocation, exceptions, jumps, the
// C++ runtime, inline assembly.
const CODE_KEYWORDS = new Set(["new", "delete", "throw", "goto", "asm", "__asm", "__asm__", "dynamic_cast"]);
// Words a name may follow without the pair declaring a variable ("struct foo", "sizeof x", "a and b").
const PRECEDE_NAMES = new Set([
  ...TYPE_KEYWORDS, ...TAG_KEYWORDS, ...C_EXPRESSIONS.notCalls, "typename", "template", "return",
  "and", "or", "xor", "not", "bitand", "bitor", "compl", "not_eq",
]);

const NAME = /[\p{L}_][\p{L}\p{N}_]*/uy;
const VARIABLE = /\$[\p{L}\p{N}_$]*/uy;
const NUMBER = /[0-9][\p{L}\p{N}_.]*/uy;

/** Why the expression is refused, or null when it only reads. */
export function expressionProblem(text: string, language: ExpressionLanguage): string | null {
  const tokens = tokenize(text);
  if (typeof tokens === "string") return tokens;
  const openParens: number[] = [];
  const openOf = new Map<number, number>();
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (!token) continue;
    if (token.kind === "name" && language.callKeyword === token.text) return `calls a function (${quoted(token.text)})`;
    if (token.kind === "name" || token.kind === "variable") {
      const problem = nameProblem(tokens, i, language);
      if (problem) return problem;
      continue;
    }
    if (token.kind !== "operator") continue;
    if (ASSIGNMENTS.has(token.text)) return `assigns with ${quoted(token.text)}`;
    if (token.text === "++" || token.text === "--") return `changes a value with ${quoted(token.text)}`;
    if (token.text === "(") {
      const problem = language.callKeyword ? null : (operatorCall(tokens, i) ?? callBefore(tokens, i, openOf, language));
      if (problem) return problem;
      openParens.push(i);
    } else if (token.text === ")") {
      const open = openParens.pop();
      if (open !== undefined) openOf.set(i, open);
    } else if (token.text === "[" && language.objcMessages && !endsOperand(tokens[i - 1])) {
      return `sends an Objective-C message (${quoted("[")})`;
    } else if (language.compiled && [";", "{", "}"].includes(token.text)) {
      return `has a statement, block or initialiser (${quoted(token.text)}), which is compiled and run as code`;
    }
  }
  return null;
}

/** The index of the quote that closes the literal opening at `start`, or -1; "\" escapes. */
export function closingQuote(text: string, start: number): number {
  const quote = text.charAt(start);
  for (let i = start + 1; i < text.length; i++) {
    if (text.charAt(i) === "\\") i += 1;
    else if (text.charAt(i) === quote) return i;
  }
  return -1;
}

function tokenize(text: string): Token[] | string {
  const tokens: Token[] = [];
  let i = 0;
  const take = (pattern: RegExp, kind: TokenKind): boolean => {
    pattern.lastIndex = i;
    const match = pattern.exec(text);
    if (!match) return false;
    tokens.push({ kind, text: match[0] });
    i += match[0].length;
    return true;
  };
  while (i < text.length) {
    const ch = text.charAt(i);
    if (ch === " " || ch === "\t") {
      i += 1;
    } else if (ch === '"' || ch === "'") {
      const end = closingQuote(text, i);
      if (end < 0) return `has an unterminated ${ch === '"' ? "string" : "quoted"} literal`;
      tokens.push({ kind: "literal", text: text.slice(i, end + 1) });
      i = end + 1;
    } else if (!(take(NAME, "name") || take(VARIABLE, "variable") || take(NUMBER, "number"))) {
      const operator = MULTI_CHAR_OPERATORS.find((op) => text.startsWith(op, i)) ?? ch;
      tokens.push({ kind: /[\x21-\x7e]/.test(operator) ? "operator" : "other", text: operator });
      i += operator.length;
    }
  }
  return tokens;
}

/** Assignment spelled as a word, and in compiled code the keywords and declarations that run code. */
function nameProblem(tokens: Token[], index: number, language: ExpressionLanguage): string | null {
  const token = tokens[index];
  if (!token) return null;
  if (ASSIGNMENT_WORDS.has(token.text)) return `assigns with ${quoted(token.text)}`;
  if (!language.compiled) return null;
  if (CODE_KEYWORDS.has(token.text)) return `runs code in the program (${quoted(token.text)})`;
  const previous = tokens[index - 1];
  // "Foo x" declares x, and constructing a Foo may run its constructor.
  if (previous?.kind === "name" && !PRECEDE_NAMES.has(previous.text) && !PRECEDE_NAMES.has(token.text)) {
    return `declares a variable (${quoted(`${previous.text} ${token.text}`)}), which may run a constructor in the program`;
  }
  return null;
}

/** "a.operator+(b)", "operator int()", "operator new[](n)": calls written with C++'s operator names. */
function operatorCall(tokens: Token[], index: number): string | null {
  for (let i = index - 1; i >= Math.max(0, index - 4); i--) {
    if (tokens[i]?.kind === "name" && tokens[i]?.text === "operator") {
      // Names side by side keep their space: "operator int(", "operator new[](".
      const spelled = tokens.slice(i, index + 1).reduce(
        (text, t, j, all) => text + (j > 0 && t.kind === "name" && all[j - 1]?.kind === "name" ? " " : "") + t.text,
        "",
      );
      return `calls an operator function (${quoted(spelled)})`;
    }
  }
  return null;
}

/** Whether the "(" at `index` calls something, judged by the token before it. */
function callBefore(
  tokens: Token[],
  index: number,
  openOf: Map<number, number>,
  language: ExpressionLanguage,
): string | null {
  const previous = tokens[index - 1];
  if (!previous) return null;
  const calls = `calls a function (${quoted(`${previous.text}(`)})`;
  switch (previous.kind) {
    case "name":
      return language.notCalls.has(previous.text) || TYPE_KEYWORDS.has(previous.text) ? null : calls;
    case "variable":
      return language.notCalls.has(previous.text) ? null : calls;
    case "number":
    case "literal":
    case "other":
      return calls;
    case "operator":
      break;
  }
  if (previous.text === ")") {
    // "(char *)(p)" is a cast; "(fp)(x)" or "((int (*)(void))f)(x)" calls.
    const open = openOf.get(index - 1);
    const group = open === undefined ? [] : tokens.slice(open + 1, index - 1);
    return looksLikeType(group) ? null : `calls the value of a parenthesised expression (${quoted(")(")})`;
  }
  if (previous.text === "]") return `calls an element of an array (${quoted("](")})`;
  if (previous.text === ">" || previous.text === ">>") return templateCall(tokens, index - 1);
  return null;
}

/** A group that can only parse as a type: names, "*", "&" and "::", ending like a type does. */
function looksLikeType(group: Token[]): boolean {
  const first = group[0];
  const last = group[group.length - 1];
  if (!first || !last) return false;
  if (!group.every((t) => t.kind === "name" || ["*", "&", "&&", "::"].includes(t.text))) return false;
  return ["*", "&", "&&"].includes(last.text) || TYPE_KEYWORDS.has(last.text) || TAG_KEYWORDS.has(first.text);
}

/** ">(" calls a template function unless the "<" it closes belongs to a C++ cast. */
function templateCall(tokens: Token[], close: number): string | null {
  let depth = 0;
  for (let i = close; i >= 0; i--) {
    const text = tokens[i]?.text;
    if (text === ">") depth += 1;
    else if (text === ">>") depth += 2;
    else if (text === "<") depth -= 1;
    else if (text === "<<") depth -= 2;
    if (depth <= 0) {
      const before = tokens[i - 1];
      return before && CPP_CASTS.has(before.text) ? null : `may call a template function (${quoted(">(")})`;
    }
  }
  return null;
}

/** Whether "[" after this token subscripts (a[1], f(x)[1]) rather than opening a message send. */
function endsOperand(token: Token | undefined): boolean {
  if (!token) return false;
  if (token.kind === "operator" || token.kind === "other") return token.text === ")" || token.text === "]";
  return true;
}
