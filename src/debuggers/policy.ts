/**
 * The command safety policy: an allowlist of read-only debugger commands per backend. Every command
 * a model, the chat or `exec` sends passes through `checkCommand` before it reaches a debugger.
 */

import type { Backend } from "./session.js";

export type PolicyVerdict = { allowed: true } | { allowed: false; reason: string };

export function checkCommand(backend: Backend, command: string): PolicyVerdict {
  // Checked on the raw string first: a newline or other control character could smuggle a second
  // command past everything below. Tab is the one allowed, as the debuggers read it as a space.
  const control = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/u.exec(command);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
    return refuse("the command", `contains a control character (U+${code})`);
  }
  if (command.trim() === "") {
    return { allowed: false, reason: "empty command: there is nothing to run (gdb would repeat the previous command)" };
  }
  switch (backend) {
    case "gdb":
      return checkGdb(command);
    case "lldb":
      return checkLldb(command);
    case "cdb":
      return checkCdb(command);
  }
}

const ALLOWED: PolicyVerdict = { allowed: true };

function refuse(what: string, why: string): PolicyVerdict {
  return { allowed: false, reason: `${what} ${why}; refused by the safety policy (use --unsafe to allow)` };
}

const quoted = (text: string): string => `"${text}"`;

// ---------------------------------------------------------------------------------------------
// Expressions: the same tokenizer serves gdb, lldb and cdb. It refuses assignment, increment and
// decrement, and anything that looks like a call; string and character literals are skipped.

interface ExpressionRules {
  /** Names that may precede "(" without calling anything (sizeof, pure convenience functions). */
  notCalls: ReadonlySet<string>;
  /** "[obj msg]" sends an Objective-C message, which runs code; cdb has no such syntax. */
  objcMessages: boolean;
}

type TokenKind = "name" | "variable" | "number" | "literal" | "operator" | "other";
interface Token {
  kind: TokenKind;
  text: string;
}

const C_RULES: ExpressionRules = {
  notCalls: new Set([
    "sizeof", "alignof", "_Alignof", "__alignof__", "__alignof", "typeof", "__typeof__", "__typeof",
    "decltype", "__decltype", "typeid",
    // gdb's convenience functions that only compare or read; $_shell, $_as_string and friends stay out.
    "$_streq", "$_strlen", "$_memeq", "$_regex", "$_isvoid", "$_creal", "$_cimag",
    "$_caller_is", "$_caller_matches", "$_any_caller_is", "$_any_caller_matches",
  ]),
  objcMessages: true,
};

// MASM's memory-reading pseudo-functions.
const CDB_RULES: ExpressionRules = {
  notCalls: new Set(["poi", "by", "wo", "dwo", "qwo", "hi", "low", "sizeof"]),
  objcMessages: false,
};

const MULTI_CHAR_OPERATORS = [
  "<<=", ">>=", "::", "->", "++", "--", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>",
  "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ":=",
];
const ASSIGNMENTS = new Set(["=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", ":="]);
// A function cannot be named after a builtin type, so "int(" is a functional cast or a type.
const TYPE_KEYWORDS = new Set([
  "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "bool", "_Bool",
  "wchar_t", "char8_t", "char16_t", "char32_t", "__int128", "const", "volatile",
]);
const TAG_KEYWORDS = new Set(["struct", "union", "enum", "class"]);
const CPP_CASTS = new Set(["static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"]);

const NAME = /[\p{L}_][\p{L}\p{N}_]*/uy;
const VARIABLE = /\$[\p{L}\p{N}_$]*/uy;
const NUMBER = /[0-9][\p{L}\p{N}_.]*/uy;

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

function closingQuote(text: string, start: number): number {
  const quote = text.charAt(start);
  for (let i = start + 1; i < text.length; i++) {
    if (text.charAt(i) === "\\") i += 1;
    else if (text.charAt(i) === quote) return i;
  }
  return -1;
}

/** Why the expression is refused, or null when it only reads. */
function expressionProblem(text: string, rules: ExpressionRules): string | null {
  const tokens = tokenize(text);
  if (typeof tokens === "string") return tokens;
  const openParens: number[] = [];
  const openOf = new Map<number, number>();
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (!token || token.kind !== "operator") continue;
    if (ASSIGNMENTS.has(token.text)) return `assigns with ${quoted(token.text)}`;
    if (token.text === "++" || token.text === "--") return `changes a value with ${quoted(token.text)}`;
    if (token.text === "(") {
      const problem = callBefore(tokens, i, openOf, rules);
      if (problem) return problem;
      openParens.push(i);
    } else if (token.text === ")") {
      const open = openParens.pop();
      if (open !== undefined) openOf.set(i, open);
    } else if (token.text === "[" && rules.objcMessages && !endsOperand(tokens[i - 1])) {
      return `sends an Objective-C message (${quoted("[")})`;
    }
  }
  return null;
}

/** Whether the "(" at `index` calls something, judged by the token before it. */
function callBefore(
  tokens: Token[],
  index: number,
  openOf: Map<number, number>,
  rules: ExpressionRules,
): string | null {
  const previous = tokens[index - 1];
  if (!previous) return null;
  const calls = `calls a function (${quoted(`${previous.text}(`)})`;
  switch (previous.kind) {
    case "name":
      return rules.notCalls.has(previous.text) || TYPE_KEYWORDS.has(previous.text) ? null : calls;
    case "variable":
      return rules.notCalls.has(previous.text) ? null : calls;
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

// ---------------------------------------------------------------------------------------------
// GDB. Commands are resolved the way gdb 13's lookup_cmd does: an exact name (aliases included)
// wins, otherwise a prefix must match exactly one name, counting aliases as names of their own.
// The tables hold every name gdb 13 knows (hidden ones too), so a prefix resolves to the command
// gdb would run; names missing from the allowlist are refused.

// Refusal reasons shared by several commands (and by lldb and cdb).
const RUNS_SHELL = "runs a shell command";
const RUNS_PYTHON = "runs Python code";
const RUNS_BLOCK = "runs a block of commands";
const WRITES_FILE = "writes a file";
const RUNS_PROGRAM = "runs or resumes the program";
const CONTROLS_PROCESS = "attaches to, detaches from or kills a process";
const CALLS_FUNCTION = "calls a function in the program";
const CHANGES_TARGET = "changes the debugged target, its files or where the debugger finds them";
const CHANGES_SETTINGS = "changes the debugger's settings";
const NOT_READ_ONLY = "is not on the read-only allowlist";

/** Checks a command's arguments; `label` names the command, `depth` counts apply nesting. */
type GdbCheck = (args: string, label: string, depth: number) => PolicyVerdict;
/** A refusal reason, or a check of the arguments. */
type GdbRule = string | GdbCheck;
interface GdbEntry {
  canonical: string;
  rule: GdbRule;
}
type GdbTable = ReadonlyMap<string, GdbEntry>;

function gdbTable(entries: ReadonlyArray<readonly [string, GdbRule]>): GdbTable {
  const table = new Map<string, GdbEntry>();
  for (const [names, rule] of entries) {
    const [canonical = names] = names.split(" ");
    for (const name of names.split(" ")) table.set(name, { canonical, rule });
  }
  return table;
}

function resolve(table: GdbTable, word: string): GdbEntry | string[] | undefined {
  const exact = table.get(word);
  if (exact) return exact;
  const matches = [...table.keys()].filter((name) => name.startsWith(word));
  const [only] = matches;
  if (matches.length === 1 && only !== undefined) return table.get(only);
  return matches.length > 1 ? matches.sort() : undefined;
}

/** Splits off the next command word as gdb's lexer does: "!" and "|" stand alone. */
function splitWord(text: string): { word: string; rest: string } {
  const trimmed = text.replace(/^[ \t]+/, "");
  const word = /^(?:[!|]|[A-Za-z0-9_.+<>$-]*)/.exec(trimmed)?.[0] ?? "";
  return { word, rest: trimmed.slice(word.length).replace(/^[ \t]+/, "") };
}

/** Splits off the next blank-separated token, for thread lists, counts and options. */
function splitToken(text: string): { token: string; rest: string } {
  const trimmed = text.replace(/^[ \t]+/, "");
  const token = /^[^ \t]*/.exec(trimmed)?.[0] ?? "";
  return { token, rest: trimmed.slice(token.length) };
}

// thread apply all shell id -> thread apply all thread apply all ...: deep enough for real use.
const MAX_NESTING = 8;

const LOWER_CASE = "is not a gdb command (gdb's command names are lower case)";

function checkGdb(command: string): PolicyVerdict {
  const text = command.replace(/^[ \t]+/, "");
  return text.startsWith("-") ? checkGdbMi(text) : checkGdbConsole(text, 0);
}

function checkGdbConsole(text: string, depth: number): PolicyVerdict {
  if (depth > MAX_NESTING) {
    return refuse("the command", `nests "thread apply"/"frame apply" more than ${MAX_NESTING} deep`);
  }
  return dispatch(GDB_COMMANDS, text, "", depth);
}

/**
 * Resolves the next word of `text` in `table` and applies its rule. `otherwise` takes the whole
 * text when the word is no subcommand, as gdb does for "frame 3" or "thread 2".
 */
function dispatch(
  table: GdbTable,
  text: string,
  prefix: string,
  depth: number,
  otherwise?: GdbCheck,
): PolicyVerdict {
  const { word, rest } = splitWord(text);
  const spelled = prefix ? `${prefix} ${word}` : word;
  if (word === "") {
    if (otherwise) return otherwise(text, prefix, depth);
    if (prefix) return refuse(quoted(prefix), "needs a subcommand");
    return refuse(quoted(text.trim()), "does not start with a gdb command name");
  }
  // gdb 13 rejects upper case; older versions lowercased, so "SHELL" must never pass as "shell".
  if (/[A-Z]/.test(word)) return refuse(quoted(spelled), LOWER_CASE);
  const found = resolve(table, word);
  if (Array.isArray(found)) {
    return refuse(quoted(spelled), `is ambiguous in gdb (${found.join(", ")}); spell the command out`);
  }
  if (!found) {
    if (otherwise) return otherwise(text, prefix, depth);
    return refuse(quoted(spelled), "is not a gdb command");
  }
  const label = prefix ? `${prefix} ${found.canonical}` : found.canonical;
  if (typeof found.rule === "string") {
    return refuse(found.canonical === word ? quoted(spelled) : `${quoted(spelled)} (${label})`, found.rule);
  }
  return found.rule(rest, label, depth);
}

// gdb's "/FMT" (print/x, x/-4xg, ptype/o): digits, then lowercase letters only, so "p/xFoo(1)"
// still leaves "Foo(1)" for the check.
const FORMAT = /^[ \t]*\/-?[0-9]*[a-z]*/;

/** Arguments gdb evaluates as expressions (or that the policy treats so, to be safe). */
function expression(options: readonly string[] = []): GdbCheck {
  return (args, label) => {
    const problem = expressionProblem(afterOptions(args, options).replace(FORMAT, ""), C_RULES);
    return problem ? refuse(`${quoted(label)} expression`, problem) : ALLOWED;
  };
}

/** Regular expressions, symbol names, help topics: gdb does not evaluate them. */
const freeText: GdbCheck = () => ALLOWED;

/** For commands that decode a location: gdb 13 hits an internal error on a probe location there and dumps core. */
function withoutProbes(check: GdbCheck): GdbCheck {
  return (args, label, depth) => {
    const probe = args.split(/[ \t,]+/).find((word) => /^-p(?:robe(?:-stap|-dtrace)?)?$/.test(word));
    if (probe) {
      const why = "crashes gdb 13 (an internal error that writes a core file)";
      return refuse(`${quoted(label)} location ${quoted(probe)}`, why);
    }
    return check(args, label, depth);
  };
}

/** A linespec is only evaluated after "*" ("list *0x1234", "info line *$pc"). */
const linespec = withoutProbes((args, label, depth) =>
  args.includes("*") ? expression()(args, label, depth) : ALLOWED,
);

const BOOLEAN_VALUES = new Set(["on", "off", "yes", "no", "enable", "disable", "1", "0"]);

/** gdb's options take unique prefixes: "-p" is "-pretty". */
function matchOption(token: string, names: readonly string[]): string | undefined {
  if (!token.startsWith("-") || token.length < 2) return undefined;
  const name = token.slice(1);
  if (names.includes(name)) return name;
  const matches = names.filter((candidate) => candidate.startsWith(name));
  return matches.length === 1 ? matches[0] : undefined;
}

/**
 * The expression after "[OPTION]... --". Only a section made of known options and their values
 * counts as options; otherwise the "--" stays, and the expression check refuses it as a decrement.
 */
function afterOptions(args: string, names: readonly string[]): string {
  const delimiter = /(^|[ \t])--(?=[ \t]|$)/.exec(args);
  if (!delimiter || names.length === 0) return args;
  let valueAllowed = false;
  for (const word of args.slice(0, delimiter.index).split(/[ \t]+/).filter(Boolean)) {
    if (matchOption(word, names)) valueAllowed = true;
    else if (valueAllowed && /^[\w.]+$/.test(word)) valueAllowed = false;
    else return args;
  }
  return args.slice(delimiter.index + delimiter[0].length);
}

const PRINT_OPTIONS = [
  "address", "array", "array-indexes", "nibbles", "elements", "max-depth", "memory-tag-violations",
  "null-stop", "object", "pretty", "raw-values", "repeats", "static-members", "symbol", "union", "vtbl",
];
const BACKTRACE_OPTIONS = [
  "entry-values", "frame-arguments", "raw-frame-arguments", "frame-info", "past-main", "past-entry",
  "full", "no-filters", "hide",
];
// Option name -> whether it takes an optional boolean value.
const THREAD_APPLY_OPTIONS = new Map([["ascending", false], ["q", false], ["c", false], ["s", false]]);
const FRAME_APPLY_OPTIONS = new Map([
  ["q", false], ["c", false], ["s", false], ["past-main", true], ["past-entry", true],
]);

/**
 * "[OPTION]... [--] COMMAND" of thread/frame apply: the inner command must itself be allowed.
 * The policy never strips more than gdb would; where gdb strips less, what is left for gdb starts
 * with an option-like word that is no command, so gdb fails.
 */
function applyInner(args: string, label: string, depth: number, options: ReadonlyMap<string, boolean>): PolicyVerdict {
  let rest = args;
  for (;;) {
    const { token, rest: after } = splitToken(rest);
    if (token === "--") {
      rest = after;
      break;
    }
    const option = matchOption(token, [...options.keys()]);
    if (!option) break;
    rest = after;
    const value = splitToken(rest);
    if (options.get(option) && BOOLEAN_VALUES.has(value.token)) rest = value.rest;
  }
  if (rest.trim() === "") return refuse(quoted(label), "needs a command to apply");
  return checkGdbConsole(rest, depth + 1);
}

const THREAD_APPLY_SPECS = gdbTable([
  ["all", (args, label, depth) => applyInner(args, label, depth, THREAD_APPLY_OPTIONS)],
]);

// gdb's thread-list parser takes every word that starts with a digit, "$" or "*".
const threadApply: GdbCheck = (args, label, depth) =>
  dispatch(THREAD_APPLY_SPECS, args, label, depth, (list, listLabel) => {
    let rest = list;
    let ids = 0;
    for (let next = splitToken(rest); /^[\d$*]/.test(next.token); next = splitToken(rest)) {
      rest = next.rest;
      ids += 1;
    }
    if (ids === 0) return refuse(quoted(listLabel), "needs \"all\" or a list of thread ids");
    return applyInner(rest, listLabel, depth, THREAD_APPLY_OPTIONS);
  });

const FRAME_APPLY_SPECS = gdbTable([
  ["all", (args, label, depth) => applyInner(args, label, depth, FRAME_APPLY_OPTIONS)],
  ["level", (args, label, depth) => {
    let rest = args;
    let levels = 0;
    for (let next = splitToken(rest); /^[\d$]/.test(next.token); next = splitToken(rest)) {
      rest = next.rest;
      levels += 1;
    }
    if (levels === 0) return refuse(quoted(label), "needs a list of frame levels");
    return applyInner(rest, label, depth, FRAME_APPLY_OPTIONS);
  }],
]);

const frameApply: GdbCheck = (args, label, depth) =>
  dispatch(FRAME_APPLY_SPECS, args, label, depth, (countAndCommand, countLabel) => {
    const { token, rest } = splitToken(countAndCommand);
    if (!/^-?[\d$]/.test(token)) return refuse(quoted(countLabel), "needs \"all\", \"level\" or a frame count");
    return applyInner(rest, countLabel, depth, FRAME_APPLY_OPTIONS);
  });

const FRAME_SELECTORS: ReadonlyArray<readonly [string, GdbRule]> = [
  ["address", expression()],
  ["function", linespec],
  ["level", expression()],
  ["view", expression()],
];
const FRAME_SUBCOMMANDS = gdbTable([...FRAME_SELECTORS, ["apply", frameApply]]);
const SELECT_FRAME_SUBCOMMANDS = gdbTable(FRAME_SELECTORS);

const THREAD_SUBCOMMANDS = gdbTable([
  ["apply", threadApply],
  ["find", freeText],
  ["name", "renames a thread"],
]);

const subcommands = (table: GdbTable, otherwise?: GdbCheck): GdbCheck =>
  (args, label, depth) => dispatch(table, args, label, depth, otherwise);

const INFO_PROC_SUBCOMMANDS = gdbTable(
  ["all", "cmdline", "cwd", "exe", "files", "mappings", "stat", "status"].map((name) => [name, noArguments] as const),
);

// With a process id, "info proc" reads /proc of a live process on this host instead of the dump.
function noArguments(args: string, label: string): PolicyVerdict {
  if (args.trim() === "") return ALLOWED;
  return refuse(quoted(`${label} ${args.trim()}`), "reads a live process on this host, not the dump");
}

const showSettings: GdbCheck = (args, label, depth) => {
  const { word } = splitWord(args);
  // Bare "show" (and "info set") lists every setting, the environment among them.
  if (word === "") {
    return refuse(quoted(label), "lists gdb's environment variables, which may hold secrets; name a setting");
  }
  if (/[A-Z]/.test(word)) return refuse(quoted(`${label} ${word}`), LOWER_CASE);
  if ("environment".startsWith(word)) {
    return refuse(quoted(`${label} ${word}`), "shows gdb's environment variables, which may hold secrets");
  }
  // "show values N" and "show commands N" evaluate N.
  return expression()(args, label, depth);
};

const INFO_SUBCOMMANDS = gdbTable([
  ["address", freeText],
  ["all-registers", expression()],
  ["args", freeText],
  ["auto-load", freeText],
  ["auto-load-scripts", freeText],
  ["auxv", expression()],
  ["bookmarks", expression()],
  ["breakpoints b", expression()],
  ["checkpoints", expression()],
  ["classes", freeText],
  ["common", freeText],
  ["connections", expression()],
  ["copying", expression()],
  ["dcache", expression()],
  ["display", expression()],
  ["exceptions", freeText],
  ["extensions", expression()],
  ["files", expression()],
  ["float", expression()],
  ["frame f", withoutProbes(expression())],
  ["frame-filter", freeText],
  ["functions", freeText],
  ["guile gu", NOT_READ_ONLY],
  ["inferiors", expression()],
  ["line", linespec],
  ["locals", freeText],
  ["macro", freeText],
  ["macros", linespec],
  ["mem", expression()],
  ["module", freeText],
  ["modules", freeText],
  ["os", "lists processes and resources of this host, not the dump"],
  ["pretty-printer", freeText],
  ["probes", freeText],
  ["proc", subcommands(INFO_PROC_SUBCOMMANDS, noArguments)],
  ["program", expression()],
  ["record rec", expression()],
  ["registers r", expression()],
  ["scope", linespec],
  ["selectors", freeText],
  ["set", showSettings],
  ["sharedlibrary dll", freeText],
  ["signals handle", expression()],
  ["skip", expression()],
  ["source", expression()],
  ["sources", freeText],
  ["stack s", expression(BACKTRACE_OPTIONS)],
  ["static-tracepoint-markers", "talks to the in-process agent of a live target, which can resume it"],
  ["symbol", expression()],
  ["target", expression()],
  ["tasks", expression()],
  ["terminal", expression()],
  ["threads", expression()],
  ["tracepoints tp", expression()],
  ["tvariables", expression()],
  ["type-printers", freeText],
  ["types", freeText],
  ["unwinder", freeText],
  ["variables", freeText],
  ["vector", expression()],
  ["vtbl", expression()],
  ["warranty", expression()],
  ["watchpoints", expression()],
  ["win", NOT_READ_ONLY],
  ["xmethod", freeText],
]);

const MAINTENANCE_INFO_SUBCOMMANDS = gdbTable([
  ["bfds", expression()],
  ["breakpoints", expression()],
  ["btrace", expression()],
  ["jit", expression()],
  ["line-table", freeText],
  ["program-spaces", expression()],
  ["psymtabs", freeText],
  ["sections", freeText],
  ["selftests", freeText],
  ["symtabs", freeText],
  ["target-sections", expression()],
]);

// Only "maintenance info" is read-only; its full spelling is required rather than mirroring the
// large table of maintenance subcommands.
const maintenance: GdbCheck = (args, label, depth) => {
  const { word, rest } = splitWord(args);
  if (word !== "info" && word !== "i") {
    return refuse(quoted(`${label} ${word}`.trim()), `is not allowed; only "maintenance info" is`);
  }
  return dispatch(MAINTENANCE_INFO_SUBCOMMANDS, rest, `${label} info`, depth);
};


/** Table entries that all refuse with the same reason; each string is a command and its aliases. */
const refusedAs = (reason: string, ...commands: string[]): Array<readonly [string, GdbRule]> =>
  commands.map((names) => [names, reason] as const);

const GDB_COMMANDS = gdbTable([
  // Read-only inspection.
  ["backtrace bt where", expression(BACKTRACE_OPTIONS)],
  ["frame f", subcommands(FRAME_SUBCOMMANDS, expression())],
  ["select-frame", subcommands(SELECT_FRAME_SUBCOMMANDS, expression())],
  ["up", expression()],
  ["down dow do", expression()],
  ["up-silently", expression()],
  ["down-silently", expression()],
  ["thread t", subcommands(THREAD_SUBCOMMANDS, expression())],
  ["taas", (args, label, depth) => applyInner(args, label, depth, THREAD_APPLY_OPTIONS)],
  ["faas", (args, label, depth) => applyInner(args, label, depth, FRAME_APPLY_OPTIONS)],
  ["tfaas", (args, label, depth) => applyInner(args, label, depth, FRAME_APPLY_OPTIONS)],
  ["info inf i", subcommands(INFO_SUBCOMMANDS)],
  ["show", showSettings],
  ["print inspect p", expression(PRINT_OPTIONS)],
  // "output" takes no options: in "output -- x" the "--" decrements x.
  ["output", expression()],
  ["printf", expression()],
  ["x", expression()],
  ["ptype", expression()],
  ["whatis", expression()],
  ["disassemble", expression()],
  ["find", expression()],
  ["list l", linespec],
  ["forward-search fo search", freeText],
  ["reverse-search rev", freeText],
  ["echo", freeText],
  ["help h", freeText],
  ["apropos", freeText],
  ["demangle", freeText],
  ["pwd", freeText],
  ["maintenance mt", maintenance],

  // Shells and scripts.
  ...refusedAs(RUNS_SHELL, "shell !"),
  ...refusedAs("pipes a command's output through a shell command", "pipe |"),
  ...refusedAs("runs make through the shell", "make"),
  ...refusedAs("starts an external editor", "edit"),
  ...refusedAs(RUNS_PYTHON, "python py", "python-interactive pi", "explore"),
  ...refusedAs("runs Guile code", "guile gu", "guile-repl gr"),
  ...refusedAs("runs the commands or script in a file", "source"),
  ...refusedAs("builds a command at run time, out of the policy's sight", "eval"),
  ...refusedAs("runs a command with temporarily changed settings", "with w"),
  ...refusedAs("runs commands through another interpreter, out of the policy's sight", "interpreter-exec"),
  ...refusedAs("opens another user interface on a terminal or file", "new-ui"),
  ...refusedAs("compiles code and runs it in the program", "compile expression"),
  ...refusedAs("defines or changes commands", "define", "define-prefix", "document", "alias", "dont-repeat"),
  ...refusedAs(RUNS_BLOCK, "if", "while", "end"),
  ...refusedAs("loads a shared library into gdb", "jit-reader-load"),
  ...refusedAs(
    "lets gdb auto-load scripts from more places",
    "add-auto-load-safe-path", "add-auto-load-scripts-directory",
  ),

  // Files.
  ...refusedAs("writes memory or values to a file", "dump", "append"),
  ...refusedAs(WRITES_FILE, "save", "save-tracepoints", "tsave"),
  ...refusedAs("writes a core file", "generate-core-file gcore"),
  ...refusedAs("writes a file's contents into the program's memory", "restore"),

  // Processes.
  ...refusedAs(
    RUNS_PROGRAM,
    "run r", "start", "starti", "continue fg c", "next n", "step s", "stepi si", "nexti ni", "finish fin", "until u",
    "advance", "jump j", "signal", "queue-signal", "interrupt", "reverse-continue rc", "reverse-finish",
    "reverse-next rn", "reverse-nexti rni", "reverse-step rs", "reverse-stepi rsi", "record rec", "bookmark",
    "goto-bookmark", "checkpoint", "restart",
  ),
  ...refusedAs("pops frames and changes the program's registers", "return"),
  ...refusedAs(CONTROLS_PROCESS, "kill", "attach", "detach", "disconnect"),
  ...refusedAs(CALLS_FUNCTION, "call", "print-object po"),

  // Targets, files and paths.
  ...refusedAs(
    CHANGES_TARGET,
    "target", "file", "exec-file", "symbol-file", "add-symbol-file", "add-symbol-file-from-memory",
    "remove-symbol-file", "core-file", "sharedlibrary", "nosharedlibrary", "load", "cd", "directory", "path",
    "section", "inferior", "add-inferior", "clone-inferior", "remove-inferiors", "flash-erase", "compare-sections",
  ),
  ...refusedAs("transfers files to or from a remote target", "remote"),
  ...refusedAs("sends a command to a remote monitor", "monitor"),

  // Settings, memory and the session.
  ...refusedAs("changes settings, variables, registers or memory (set var, set logging, set debuginfod, ...)", "set"),
  ...refusedAs(CHANGES_SETTINGS, "unset", "tty", "handle"),
  ...refusedAs("assigns a convenience variable", "init-if-undefined"),
  ...refusedAs("changes memory region attributes", "mem"),
  ...refusedAs("reads or writes memory tags of a live process", "memory-tag"),
  ...refusedAs("changes the auto-display list", "display", "undisplay"),
  ...refusedAs("ends the debugger session", "quit exit q"),

  // Breakpoints, tracepoints and stepping rules.
  ...refusedAs(
    "sets or changes breakpoints, tracepoints or stepping rules",
    "break brea bre br b", "tbreak", "hbreak", "thbreak", "rbreak", "break-range", "dprintf", "watch", "rwatch",
    "awatch", "catch", "tcatch", "clear cl", "commands", "condition", "delete del d", "disable disa dis", "enable en",
    "ignore", "skip", "trace trac tra tr tp", "ftrace", "strace", "actions", "collect", "while-stepping stepping ws",
    "passcount", "teval", "tvariable", "tstart", "tstop", "tstatus", "tfind", "tdump",
  ),

  // The text user interface.
  ...refusedAs(
    "controls the text user interface",
    "tui", "layout", "focus fs", "refresh", "winheight wh", "winwidth", "tabset", "update", "+", "-", "<", ">",
  ),

  // Everything else gdb 13 knows.
  ...refusedAs(
    NOT_READ_ONLY,
    "agent-printf", "complete", "flushregs", "function", "jit-reader-unload", "macro", "overlay ov ovly", "stop",
    "task",
  ),
]);

// GDB/MI commands are matched exactly, as gdb does; expression arguments get the same check.
const GDB_MI_COMMANDS = new Set([
  "-stack-list-frames", "-stack-list-variables", "-stack-list-locals", "-stack-list-arguments",
  "-stack-info-frame", "-stack-info-depth", "-stack-select-frame", "-thread-info", "-thread-select",
  "-data-read-memory-bytes", "-data-list-register-names", "-data-list-register-values",
  "-data-disassemble", "-data-evaluate-expression",
]);

const GDB_MI_OPTIONS = new Set([
  "--", "--thread", "--frame", "--language", "--simple-values", "--all-values", "--no-values", "--skip-unavailable",
  "--no-frame-filters", "-s", "-e", "-a", "-f", "-l", "-n", "-o",
]);

function checkGdbMi(command: string): PolicyVerdict {
  const name = /^-[A-Za-z0-9_-]*/.exec(command)?.[0] ?? "-";
  if (!GDB_MI_COMMANDS.has(name)) {
    const why = name.startsWith("-exec-")
      ? "runs or controls the program"
      : name.startsWith("-target-")
        ? "attaches to or changes the target"
        : name === "-interpreter-exec"
          ? "runs a command through another interpreter, out of the policy's sight"
          : "is not one of the read-only MI commands";
    return refuse(quoted(name), why);
  }
  const args = miArguments(command.slice(name.length));
  if (!args) {
    return refuse(quoted(name), "has arguments the policy cannot read (only \\\" and \\\\ escapes are accepted)");
  }
  // Only real option names are skipped: gdb evaluates "--x" anywhere else, decrementing x.
  const operands = args.filter((arg) => !GDB_MI_OPTIONS.has(arg));
  // Each operand alone and all of them together: gdb joins some arguments into one expression.
  for (const operand of [...operands, operands.join(" ")]) {
    const problem = expressionProblem(operand, C_RULES);
    if (problem) return refuse(`${quoted(name)} expression`, problem);
  }
  return ALLOWED;
}

/** MI arguments: blank-separated words or C strings. */
function miArguments(text: string): string[] | null {
  const args: string[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text.charAt(i);
    if (ch === " " || ch === "\t") {
      i += 1;
    } else if (ch === '"') {
      let value = "";
      for (i += 1; text.charAt(i) !== '"'; i += 1) {
        if (i >= text.length) return null;
        if (text.charAt(i) === "\\") {
          i += 1;
          if (!['"', "\\"].includes(text.charAt(i))) return null;
        }
        value += text.charAt(i);
      }
      args.push(value);
      i += 1;
    } else {
      const word = /^[^ \t]*/.exec(text.slice(i))?.[0] ?? "";
      if (word.includes('"')) return null;
      args.push(word);
      i += word.length;
    }
  }
  return args;
}

// ---------------------------------------------------------------------------------------------
// LLDB. lldb accepts abbreviations too; this policy accepts only full names and lldb's standard
// aliases, which keeps it simple and conservative.

interface LldbRule {
  /** Option name (short letter or long name) -> whether it takes a value; "any" when none can write or run. */
  options: ReadonlyMap<string, boolean> | "any";
  /** Whether operands go through the expression check (addresses and counts are evaluated). */
  expressions: boolean;
}

const lldbOptions = (spec: string): ReadonlyMap<string, boolean> =>
  new Map(spec.split(" ").filter(Boolean).map((name) => [name.replace(/=$/, ""), name.endsWith("=")] as const));

const BACKTRACE_RULE: LldbRule = { options: lldbOptions("c= count= s= start= e= extended="), expressions: true };
// -O (object description) and -d (dynamic type run-target) run code in the program.
const VARIABLE_RULE: LldbRule = {
  options: lldbOptions(
    "A show-all-children D= depth= F flat L location P= ptr-depth= R raw-output T show-types Z= element-count= " +
      "a no-args c show-declaration f= format= g show-globals l no-locals r regex s scope",
  ),
  expressions: true,
};
const MEMORY_READ_RULE: LldbRule = {
  options: lldbOptions("c= count= s= size= f= format= l= num-per-line= t= type= force"),
  expressions: true,
};
const LISTING_RULE: LldbRule = { options: "any", expressions: true };
const NO_OPTIONS_RULE: LldbRule = { options: lldbOptions(""), expressions: true };
const TEXT_RULE: LldbRule = { options: "any", expressions: false };

const LLDB_COMMANDS = new Map<string, LldbRule>([
  ["bt", BACKTRACE_RULE],
  ["thread backtrace", BACKTRACE_RULE],
  ["thread list", NO_OPTIONS_RULE],
  ["thread select", NO_OPTIONS_RULE],
  ["thread info", { options: lldbOptions("j json s stop-info"), expressions: true }],
  ["frame select", { options: lldbOptions("r= relative="), expressions: true }],
  ["f", NO_OPTIONS_RULE],
  ["up", NO_OPTIONS_RULE],
  ["down", NO_OPTIONS_RULE],
  ["frame info", NO_OPTIONS_RULE],
  ["frame variable", VARIABLE_RULE],
  ["v", VARIABLE_RULE],
  ["var", VARIABLE_RULE],
  ["target variable", VARIABLE_RULE],
  ["register read", { options: lldbOptions("a all f= format= s= set="), expressions: true }],
  ["memory read", MEMORY_READ_RULE],
  ["x", MEMORY_READ_RULE],
  ["image list", LISTING_RULE],
  ["image lookup", LISTING_RULE],
  ["target modules list", LISTING_RULE],
  ["target modules lookup", LISTING_RULE],
  ["disassemble", LISTING_RULE],
  ["di", LISTING_RULE],
  ["dis", LISTING_RULE],
  ["target list", NO_OPTIONS_RULE],
  ["process status", NO_OPTIONS_RULE],
  ["settings show", TEXT_RULE],
  ["help", TEXT_RULE],
  ["version", TEXT_RULE],
]);

const LLDB_EXPRESSION_COMMANDS = new Set(["p", "print", "expression", "expr", "dwim-print"]);

/** Turns [reason, "name name ..."] groups into a name -> reason table. */
const byName = (groups: ReadonlyArray<readonly [string, string]>): ReadonlyMap<string, string> =>
  new Map(groups.flatMap(([reason, names]) => names.split(" ").map((name) => [name, reason] as const)));

const LLDB_REFUSALS = byName([
  ["runs shell commands or connects to platforms", "platform"],
  [RUNS_SHELL, "shell"],
  [RUNS_PYTHON, "script"],
  ["runs command files or scripts, or defines commands", "command"],
  [CALLS_FUNCTION, "po call"],
  ["runs, attaches to or changes a process", "process"],
  [RUNS_PROGRAM, "run r continue c next n step s si ni finish"],
  ["runs or changes the program's threads", "thread"],
  [CONTROLS_PROCESS, "attach detach kill"],
  [CHANGES_TARGET, "target"],
  ["connects to a remote target", "gdb-remote"],
  ["writes memory or to files", "memory"],
  ["writes registers", "register"],
  [CHANGES_SETTINGS, "settings"],
  ["writes logs to files", "log"],
  [WRITES_FILE, "session"],
  ["loads plugins into lldb", "plugin"],
]);

function checkLldb(command: string): PolicyVerdict {
  if (command.includes("`")) return refuse("the command", "uses backticks, which make lldb evaluate an expression");
  const text = command.trim();
  const [head = ""] = text.split(/[ \t]/, 1);
  const [name = "", format] = head.split("/", 2);
  if (LLDB_EXPRESSION_COMMANDS.has(name)) return checkLldbExpression(name, text.slice(head.length));
  const words = lldbWords(text);
  if (!words) return refuse("the command", "has an unterminated quote");
  if (format !== undefined) words[0] = name;
  for (const length of [3, 2, 1]) {
    const key = words.slice(0, length).join(" ");
    const rule = words.length >= length ? LLDB_COMMANDS.get(key) : undefined;
    if (rule) return checkLldbArguments(key, words.slice(length), rule);
  }
  const refusal = LLDB_REFUSALS.get(words[0] ?? "");
  const why = refusal ?? "is not on lldb's read-only allowlist (abbreviations are not accepted)";
  return refuse(quoted(words.slice(0, 2).join(" ")), why);
}

function checkLldbArguments(label: string, args: string[], rule: LldbRule): PolicyVerdict {
  for (let i = 0, operandsOnly = false; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (!operandsOnly && arg === "--") {
      operandsOnly = true;
      continue;
    }
    if (!operandsOnly && /^-[A-Za-z-]/.test(arg)) {
      if (rule.options === "any") continue;
      const taken = lldbOptionTakesNext(arg, rule.options);
      if (taken === undefined) return refuse(`option ${quoted(arg)} of ${quoted(label)}`, NOT_READ_ONLY);
      if (!taken) continue;
      i += 1;
    }
    // Option values go through the same check as operands: lldb evaluates some of them.
    const problem = rule.expressions ? expressionProblem(args[i] ?? "", C_RULES) : null;
    if (problem) return refuse(`${quoted(label)} argument`, problem);
  }
  return ALLOWED;
}

/** Whether the option consumes the next word; undefined when it is not allowed. */
function lldbOptionTakesNext(arg: string, options: ReadonlyMap<string, boolean>): boolean | undefined {
  if (arg.startsWith("--")) {
    const [name = "", value] = arg.slice(2).split("=", 2);
    const takesValue = options.get(name);
    return takesValue === undefined ? undefined : takesValue && value === undefined;
  }
  // Short options combine ("-LT") and take their value attached or as the next word ("-c10").
  for (let i = 1; i < arg.length; i++) {
    const takesValue = options.get(arg.charAt(i));
    if (takesValue === undefined) return undefined;
    if (takesValue) return i === arg.length - 1;
  }
  return false;
}

/** lldb's raw expression commands: "[-f FORMAT | -T]... --" may precede the expression. */
function checkLldbExpression(name: string, rest: string): PolicyVerdict {
  let expressionText = rest;
  const delimiter = /(^|[ \t])--(?=[ \t]|$)/.exec(rest);
  if (delimiter) {
    const options = lldbWords(rest.slice(0, delimiter.index));
    const allowed = lldbOptions("f= format= T show-types");
    if (!options) return refuse(quoted(name), "has an unterminated quote");
    for (let i = 0; i < options.length; i++) {
      const taken = lldbOptionTakesNext(options[i] ?? "", allowed);
      if (taken === undefined) return refuse(`option ${quoted(options[i] ?? "")} of ${quoted(name)}`, NOT_READ_ONLY);
      if (taken) i += 1;
    }
    expressionText = rest.slice(delimiter.index + delimiter[0].length);
  } else if (/^[ \t]*-[A-Za-z]/.test(rest)) {
    return refuse(quoted(name), "could read this as options; put expression options before \"--\"");
  }
  const problem = expressionProblem(expressionText, C_RULES);
  return problem ? refuse(`${quoted(name)} expression`, problem) : ALLOWED;
}

/** lldb's argument words: blank-separated, with "..." (backslash escapes) and '...' quoting. */
function lldbWords(text: string): string[] | null {
  const words: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text.charAt(i) === " " || text.charAt(i) === "\t") {
      i += 1;
      continue;
    }
    let word = "";
    while (i < text.length && text.charAt(i) !== " " && text.charAt(i) !== "\t") {
      const ch = text.charAt(i);
      if (ch === '"' || ch === "'") {
        const end = ch === '"' ? closingQuote(text, i) : text.indexOf("'", i + 1);
        if (end < 0) return null;
        word += text.slice(i + 1, end);
        i = end + 1;
      } else {
        word += ch;
        i += 1;
      }
    }
    words.push(word);
  }
  return words;
}

// ---------------------------------------------------------------------------------------------
// CDB. Commands are case-insensitive; ";" chains commands, so it is refused outright rather than
// split, as are alias expansions that could turn into anything.

const CDB_ALLOWED = new Set([
  "?", "??", "r", "d", "da", "db", "dc", "dd", "df", "dp", "dq", "du", "dw", "dyb", "dyd", "dds", "dps", "dqs",
  "dv", "dt", "dl", "ln", "u", "ub", "uf", "x", "vertarget", "version",
  ".ecxr", ".exr", ".cxr", ".lastevent", ".frame", ".time", ".echo", ".chain", ".formats",
  "!analyze", "!address", "!peb", "!teb", "!locks", "!cs", "!gle", "!error", "!heap", "!runaway",
  "!uniqstack", "!handle", "!findstack", "!exchain",
]);

const CDB_REFUSALS = byName([
  [RUNS_SHELL, ".shell"],
  [CONTROLS_PROCESS, ".create .attach .detach .kill .abandon"],
  [RUNS_PROGRAM, ".restart g p t"],
  [CALLS_FUNCTION, ".call"],
  [WRITES_FILE, ".write_cmd_hist .logopen .logappend .dump .writemem"],
  ["writes a file's contents into the program's memory", ".readmem"],
  ["loads an extension into the debugger", ".load .loadby"],
  ["runs a script", ".scriptload .scriptrun"],
  [CHANGES_TARGET, ".opendump .symfix .sympath .srcpath .exepath"],
  ["reloads symbols, possibly from a symbol server on the network", ".reload"],
  [RUNS_BLOCK, ".block .for .foreach .if .while .do"],
  ["can call functions through the debugger data model", "dx"],
  ["ends the debugger session", "q qq qd"],
  ["writes the program's memory", "a e ea eb ed ef ep eq eu ew eza ezu f fp m"],
]);

function checkCdb(command: string): PolicyVerdict {
  const text = command.trim();
  if (text.includes(";")) return refuse("the command", "chains several commands with \";\"");
  if (/\$\{|\$u\d/i.test(text)) return refuse("the command", "expands an alias, which could stand for any command");
  if (text.startsWith("~")) return checkCdbThreads(text);
  const name = /^(?:\?\?|\?|[.!][\w.]*|[A-Za-z]+)/.exec(text)?.[0].toLowerCase() ?? "";
  const args = text.slice(name.length);
  // The stack commands combine letters: k, kb, kp, kv, kn, kbn, kpn, kf, kc, kd, kl, km.
  const allowed = CDB_ALLOWED.has(name) || /^k[bpvndfclm]{0,3}$/.test(name) || /^lm[a-z]*$/.test(name);
  if (!allowed) {
    if (name === "") return refuse(quoted(text), "does not start with a cdb command name");
    const why = CDB_REFUSALS.get(name)
      ?? (name.startsWith("!") ? "is not one of the known read-only extension commands" : "is not on cdb's allowlist");
    return refuse(quoted(name), why);
  }
  const problem = expressionProblem(args, CDB_RULES);
  return problem ? refuse(`${quoted(name)} argument`, problem) : ALLOWED;
}

/** "~" lists threads, "~Ns" selects one, "~N cmd" and "~Ne cmd" run cmd per thread. */
function checkCdbThreads(text: string): PolicyVerdict {
  const spec = /^~(?:\*|\.|#|\d+|~\[([^\]]*)\])?/.exec(text);
  const threadId = spec?.[1];
  if (threadId !== undefined) {
    const problem = expressionProblem(threadId, CDB_RULES);
    if (problem) return refuse(quoted(spec?.[0] ?? "~"), problem);
  }
  const rest = text.slice(spec?.[0].length ?? 1).trim();
  if (rest === "" || rest.toLowerCase() === "s") return ALLOWED;
  const command = /^e[ \t]/i.test(rest) ? rest.slice(1).trim() : rest;
  // After a thread spec, f/u/n/m/g freeze, unfreeze, suspend, resume or run the thread.
  if (command === rest && /^[fungm]/i.test(rest)) return refuse(quoted(text), "changes a thread's state or runs it");
  if (command.startsWith("~")) return refuse(quoted(text), "nests thread commands");
  return checkCdb(command);
}
