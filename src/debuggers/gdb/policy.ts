/**
 * gdb's part of the command safety policy. Commands are resolved the way gdb 13's lookup_cmd does:
 * an exact name (aliases included) wins, otherwise a prefix must match exactly one name, counting
 * aliases as names of their own. The tables hold every name gdb 13 knows (hidden ones too), so a
 * prefix resolves to the command gdb would run; names missing from the allowlist are refused.
 */

import { C_EXPRESSIONS, expressionProblem, type ExpressionLanguage } from "../policy/expression.js";
import {
  ALLOWED,
  CALLS_FUNCTION,
  CHANGES_SETTINGS,
  CHANGES_TARGET,
  CONTROLS_PROCESS,
  ENDS_SESSION,
  NOT_READ_ONLY,
  RUNS_BLOCK,
  RUNS_PROGRAM,
  RUNS_PYTHON,
  RUNS_SHELL,
  WRITES_FILE,
  quoted,
  refuse,
  type PolicyVerdict,
} from "../policy/verdict.js";

// gdb's convenience functions that only compare or read; $_shell, $_as_string and friends stay out.
const GDB_EXPRESSIONS: ExpressionLanguage = {
  ...C_EXPRESSIONS,
  notCalls: new Set([
    ...C_EXPRESSIONS.notCalls,
    "$_streq", "$_strlen", "$_memeq", "$_regex", "$_isvoid", "$_creal", "$_cimag",
    "$_caller_is", "$_caller_matches", "$_any_caller_is", "$_any_caller_matches",
  ]),
};

export function checkGdbCommand(command: string): PolicyVerdict {
  const text = command.replace(/^[ \t]+/, "");
  return text.startsWith("-") ? checkGdbMi(text) : checkGdbConsole(text, 0);
}

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
    const problem = expressionProblem(afterOptions(args, options).replace(FORMAT, ""), GDB_EXPRESSIONS);
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
  ...refusedAs(ENDS_SESSION, "quit exit q"),

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
    const problem = expressionProblem(operand, GDB_EXPRESSIONS);
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

