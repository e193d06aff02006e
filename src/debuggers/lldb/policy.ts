/**
 * lldb's part of the command safety policy. Commands are resolved the way lldb 16 resolves them: an
 * exact command or alias name wins, else a prefix of exactly one command, else a prefix of exactly
 * one command or alias; a subcommand by its exact name or a prefix of exactly one. The tables hold
 * every name lldb 16 knows, hidden ones too, so an abbreviation ("fr v", "reg w") resolves to the
 * command lldb would run. Options are read as lldb's getopt_long_only reads them: "-count" and
 * "--cou" both mean "--count".
 */

import { C_EXPRESSIONS, closingQuote, expressionProblem, type ExpressionLanguage } from "../policy/expression.js";
import {
  ALLOWED,
  CALLS_FUNCTION,
  CHANGES_SETTINGS,
  CHANGES_TARGET,
  CONTROLS_PROCESS,
  ENDS_SESSION,
  NOT_READ_ONLY,
  RUNS_PROGRAM,
  RUNS_PYTHON,
  RUNS_SHELL,
  SETS_BREAKPOINTS,
  WRITES_FILE,
  quoted,
  refuse,
  type PolicyVerdict,
} from "../policy/verdict.js";
import { parsePlaced } from "../place-text.js";

// lldb compiles an expression with clang as the body of a function, and runs it.
const LLDB_EXPRESSIONS: ExpressionLanguage = { ...C_EXPRESSIONS, compiled: true };

/**
 * Checks what follows a command's name. `shown` names the command for refusals, as typed and, when
 * that was an abbreviation or alias, its full name; `format` is a "/FMT" suffix on it.
 */
type LldbCheck = (rest: string, shown: string, format: string | undefined) => PolicyVerdict;
/** A refusal reason, a check of the arguments, or the subcommands of a command. */
type LldbRule = string | LldbCheck | LldbTable;
type LldbTable = ReadonlyMap<string, LldbRule>;

export function checkLldbCommand(placed: string): PolicyVerdict {
  // dumpdbg's `[thread T, frame F]` prefix only selects where the command runs: the command is what is checked.
  const { command } = parsePlaced(placed);
  // lldb evaluates `...` anywhere in a command as an expression before the command runs.
  if (command.includes("`")) return refuse("the command", "uses backticks, which make lldb evaluate an expression");
  let next = commandWord(command);
  if (!next) return refuse(quoted(command.trim()), "does not start with an lldb command name");
  const first = resolveCommand(next.name);
  if (Array.isArray(first)) return ambiguous(next.name, first);
  if (!first) return refuse(quoted(next.name), "is not an lldb command");
  let { label, rule } = first;
  let spelled = next.name;
  while (typeof rule !== "string" && typeof rule !== "function") {
    const table = rule;
    if (next.format !== undefined) return refuse(quoted(spelled + next.format), "is not an lldb command");
    const word = commandWord(next.rest);
    if (!word) {
      const typed = /^[^ \t]*/.exec(next.rest.trim())?.[0] ?? "";
      if (typed !== "") return refuse(quoted(`${spelled} ${typed}`), "is not an lldb command");
      return refuse(shownAs(spelled, label), "needs a subcommand");
    }
    next = word;
    spelled = `${spelled} ${next.name}`;
    const found = resolveSubcommand(table, next.name);
    if (Array.isArray(found)) return ambiguous(spelled, found);
    if (!found) return refuse(quoted(spelled), "is not an lldb command");
    label = `${label} ${found}`;
    rule = table.get(found) ?? NOT_READ_ONLY;
  }
  const shown = shownAs(spelled, label);
  return typeof rule === "string" ? refuse(shown, rule) : rule(next.rest, shown, next.format);
}

/** A command as typed and, when that was an abbreviation or an alias, the command it stands for. */
const shownAs = (spelled: string, label: string): string =>
  spelled === label ? quoted(spelled) : `${quoted(spelled)} (${label})`;

const ambiguous = (spelled: string, names: string[]): PolicyVerdict =>
  refuse(quoted(spelled), `is ambiguous in lldb (${names.join(", ")}); spell the command out`);

/** The next command word, split like lldb does into a name and a gdb-style "/FMT" suffix. */
function commandWord(text: string): { name: string; format: string | undefined; rest: string } | null {
  const trimmed = text.replace(/^[ \t]+/, "");
  const word = /^[^ \t]*/.exec(trimmed)?.[0] ?? "";
  const parts = /^([A-Za-z0-9_-]+)(\/[A-Za-z0-9]*)?$/.exec(word);
  if (!parts?.[1]) return null;
  return { name: parts[1], format: parts[2], rest: trimmed.slice(word.length) };
}

/** The first word: its exact name, else a prefix of one command, else of one command or alias. */
function resolveCommand(word: string): { label: string; rule: LldbRule } | string[] | undefined {
  const command = LLDB_COMMANDS.get(word);
  if (command) return { label: word, rule: command };
  const exactAlias = LLDB_ALIASES.get(word);
  if (exactAlias) return exactAlias;
  const commands = [...LLDB_COMMANDS.keys()].filter((name) => name.startsWith(word));
  const [onlyCommand] = commands;
  if (commands.length === 1 && onlyCommand !== undefined) return resolveCommand(onlyCommand);
  const names = [...commands, ...[...LLDB_ALIASES.keys()].filter((name) => name.startsWith(word))];
  const [only] = names;
  if (names.length === 1 && only !== undefined) return resolveCommand(only);
  return names.length > 1 ? names.sort() : undefined;
}

function resolveSubcommand(table: LldbTable, word: string): string | string[] | undefined {
  if (table.has(word)) return word;
  const names = [...table.keys()].filter((name) => name.startsWith(word));
  return names.length > 1 ? names.sort() : names[0];
}

// ---------------------------------------------------------------------------------------------
// Arguments and options.

interface LldbOption {
  short: string;
  long: string;
  value: "none" | "required" | "optional";
  /** Why the option is refused; absent when it only changes how values are shown. */
  refusal?: string;
}

/**
 * Every option of a command, allowed ones in `allowed`, the others keyed by spec in `refused`. A
 * spec is "c:count=" (takes a value), "Y:no-summary-depth?" (an optional value, attached only),
 * ":show-tags" (no short name) or "T:show-types" (a flag). All of them are needed to read options
 * as lldb does: "-o" alone means "--object-description" when no short option is called "o".
 */
function lldbOptions(allowed: string, refused: Readonly<Record<string, string>> = {}): LldbOption[] {
  const parse = (spec: string, refusal?: string): LldbOption => {
    const [, short = "", long = "", value = ""] = /^(\w?):([\w-]+)([=?]?)$/.exec(spec) ?? [];
    const takes = value === "=" ? "required" : value === "?" ? "optional" : "none";
    return { short, long, value: takes, ...(refusal ? { refusal } : {}) };
  };
  return [
    ...allowed.split(" ").filter(Boolean).map((spec) => parse(spec)),
    ...Object.entries(refused).map(([spec, why]) => parse(spec, why)),
  ];
}

type Operands = "expressions" | "text";

/** A parsed command: options (or "any" when none of them can write or run), then operands. */
function parsed(options: readonly LldbOption[] | "any", operands: Operands): LldbCheck {
  return (rest, shown, format) => {
    if (format !== undefined && (options === "any" || !options.some((o) => o.long === "gdb-format"))) {
      return refuse(shown, `takes no ${quoted("/FORMAT")} suffix`);
    }
    const words = lldbWords(rest);
    if (!words) return refuse(shown, "has an unterminated quote");
    return checkArguments(words.map((w) => w.text), shown, options, operands);
  };
}

function checkArguments(
  words: string[],
  shown: string,
  options: readonly LldbOption[] | "any",
  operands: Operands,
): PolicyVerdict {
  // Option values are checked like operands: lldb evaluates some of them (addresses).
  const check = (text: string): PolicyVerdict => {
    const problem = operands === "expressions" ? expressionProblem(text, LLDB_EXPRESSIONS) : null;
    return problem ? refuse(`${shown} argument`, problem) : ALLOWED;
  };
  const values: string[] = [];
  for (let i = 0, operandsOnly = false; i < words.length; i++) {
    const word = words[i] ?? "";
    if (operandsOnly || !/^-./.test(word)) {
      values.push(word);
    } else if (word === "--") {
      operandsOnly = true;
    } else if (options === "any") {
      const body = word.replace(/^--?/, "");
      values.push(body.includes("=") ? body.slice(body.indexOf("=") + 1) : body);
    } else {
      const read = readOption(word, options);
      if (typeof read === "string") return refuse(`option ${quoted(word)} of ${shown}`, read);
      values.push(...read.values);
      if (read.takesNext) values.push(words[++i] ?? "");
    }
  }
  for (const value of values) {
    const verdict = check(value);
    if (!verdict.allowed) return verdict;
  }
  return ALLOWED;
}

/** One option word as getopt_long_only reads it: its attached values, or why it is refused. */
function readOption(word: string, options: readonly LldbOption[]): { values: string[]; takesNext: boolean } | string {
  const long = word.startsWith("--");
  const body = word.slice(long ? 2 : 1);
  const short = options.find((o) => o.short !== "" && o.short === body.charAt(0));
  // "-x" with a short option x is that option; anything longer is tried as a long option first.
  if (long || body.length > 1 || !short) {
    const name = body.split("=", 1)[0] ?? "";
    const exact = options.find((o) => o.long === name);
    const matches = exact ? [exact] : options.filter((o) => o.long.startsWith(name));
    if (matches.length > 1) return `is ambiguous in lldb (${matches.map((o) => `--${o.long}`).join(", ")})`;
    const [option] = matches;
    if (option) {
      if (option.refusal) return option.refusal;
      const attached = body.includes("=") ? body.slice(name.length + 1) : undefined;
      if (attached !== undefined) return { values: [attached], takesNext: false };
      return { values: [], takesNext: option.value === "required" };
    }
    if (long || !short) return NOT_READ_ONLY;
  }
  // Short options combine ("-LT") and take a value attached or as the next word ("-c10", "-c 10").
  for (let i = 1; i < word.length; i++) {
    const option = options.find((o) => o.short === word.charAt(i));
    if (!option) return NOT_READ_ONLY;
    if (option.refusal) return option.refusal;
    if (option.value === "none") continue;
    const attached = word.slice(i + 1);
    if (option.value === "optional" || attached !== "") return { values: [attached], takesNext: false };
    return { values: [], takesNext: true };
  }
  return { values: [], takesNext: false };
}

/** lldb's argument words: blank-separated, with "..." (backslash escapes) and '...' quoting. */
function lldbWords(text: string): Array<{ text: string; quoted: boolean; end: number }> | null {
  const words: Array<{ text: string; quoted: boolean; end: number }> = [];
  let i = 0;
  while (i < text.length) {
    if (text.charAt(i) === " " || text.charAt(i) === "\t") {
      i += 1;
      continue;
    }
    let word = "";
    let wasQuoted = false;
    while (i < text.length && text.charAt(i) !== " " && text.charAt(i) !== "\t") {
      const ch = text.charAt(i);
      if (ch === '"' || ch === "'") {
        const end = ch === '"' ? closingQuote(text, i) : text.indexOf("'", i + 1);
        if (end < 0) return null;
        word += text.slice(i + 1, end);
        wasQuoted = true;
        i = end + 1;
      } else {
        word += ch;
        i += 1;
      }
    }
    words.push({ text: word, quoted: wasQuoted, end: i });
  }
  return words;
}

/** Commands whose whole text is one expression: "p", "print", "dwim-print", "parray". */
const wholeExpression: LldbCheck = (rest, shown) => {
  const problem = expressionProblem(rest, LLDB_EXPRESSIONS);
  return problem ? refuse(`${shown} expression`, problem) : ALLOWED;
};

/** "expression [OPTION]... -- EXPR": options only before the first unquoted "--" word. */
function expressionCommand(options: readonly LldbOption[]): LldbCheck {
  return (rest, shown, format) => {
    // With a "/FMT" suffix lldb puts "--gdb-format=FMT --" before everything typed.
    if (format !== undefined || !/^[ \t]*-/.test(rest)) return wholeExpression(rest, shown, format);
    const words = lldbWords(rest);
    if (!words) return refuse(shown, "has an unterminated quote");
    const delimiter = words.findIndex((w) => w.text === "--" && !w.quoted);
    const end = words[delimiter]?.end;
    if (end === undefined) {
      return refuse(shown, "could read this as options; put expression options before \"--\"");
    }
    const verdict = checkArguments(words.slice(0, delimiter).map((w) => w.text), shown, options, "text");
    return verdict.allowed ? wholeExpression(rest.slice(end), shown, format) : verdict;
  };
}

/** "l"/"list": lldb matches the text against patterns and pastes it into "source list" options. */
const sourceListing: LldbCheck = (rest, shown, format) =>
  format === undefined ? wholeExpression(rest, shown, format) : refuse(shown, `takes no ${quoted("/FORMAT")} suffix`);

// ---------------------------------------------------------------------------------------------
// The commands.

const DESCRIBES_OBJECT = "runs code in the program to describe the object";
const DYNAMIC_TYPE = "can run code in the program to find the dynamic type";
const SUMMARY = "chooses a summary, which can run Python";
const RUNS_EXPRESSION = "changes how lldb compiles or runs code in the program";
const MOVES_PC = "moves the program counter";
const STOP_HOOKS = "adds or removes stop hooks, which run commands when the program stops";
const WATCHPOINTS = "sets or changes watchpoints";
const FORMATTERS = "manages data formatters, which can run Python";
const CONNECTS = "connects to a remote target";
const ENVIRONMENT = "shows or sets the environment of a launched program, which holds this host's variables";

const VALUE_DISPLAY = "A:show-all-children D:depth= F:flat G:gdb-format= L:location P:ptr-depth= R:raw-output " +
  "S:synthetic-type= T:show-types V:validate= Y:no-summary-depth? Z:element-count= f:format=";
const VALUE_REFUSALS = { "O:object-description": DESCRIBES_OBJECT, "d:dynamic-type=": DYNAMIC_TYPE };
const VARIABLE_REFUSALS = { ...VALUE_REFUSALS, "y:summary=": SUMMARY, "z:summary-string=": SUMMARY };

const BACKTRACE = parsed(lldbOptions("c:count= e:extended= s:start="), "expressions");
const FRAME_SELECT = parsed(lldbOptions("r:relative="), "expressions");
const NO_OPTIONS = parsed(lldbOptions(""), "expressions");
const FRAME_VARIABLE = parsed(
  lldbOptions(
    `${VALUE_DISPLAY} a:no-args c:show-declaration g:show-globals l:no-locals r:regex s:scope t:no-recognized-args`,
    VARIABLE_REFUSALS,
  ),
  "expressions",
);
const TARGET_VARIABLE = parsed(
  lldbOptions(`${VALUE_DISPLAY} c:show-declaration g:show-globals r:regex s:scope :file= :shlib=`, VARIABLE_REFUSALS),
  "expressions",
);
const MEMORY_READ = parsed(
  lldbOptions(`${VALUE_DISPLAY} E:offset= c:count= l:num-per-line= r:force s:size= t:type= x:language= :show-tags`, {
    ...VALUE_REFUSALS, "o:outfile=": WRITES_FILE, "b:binary": WRITES_FILE, ":append-outfile": WRITES_FILE,
  }),
  "expressions",
);
const LISTING = parsed("any", "expressions");
const TEXT = parsed("any", "text");
const SESSION_HISTORY = parsed(
  lldbOptions("c:count= e:end-index= s:start-index=", { "C:clear": "clears lldb's command history" }),
  "expressions",
);
const EXPRESSION = expressionCommand(lldbOptions(`${VALUE_DISPLAY} l:language=`, {
  ...VALUE_REFUSALS,
  "X:apply-fixits=": RUNS_EXPRESSION, "a:all-threads=": RUNS_EXPRESSION, "g:debug": RUNS_EXPRESSION,
  "i:ignore-breakpoints=": RUNS_EXPRESSION, "j:allow-jit=": RUNS_EXPRESSION, "p:top-level": RUNS_EXPRESSION,
  "r:repl": RUNS_EXPRESSION, "t:timeout=": RUNS_EXPRESSION, "u:unwind-on-error=": RUNS_EXPRESSION,
  "v:description-verbosity?": RUNS_EXPRESSION,
}));

const table = (entries: Readonly<Record<string, LldbRule>>): LldbTable => new Map(Object.entries(entries));

/** Subcommands that all refuse with the same reason. */
const refusedAs = (reason: string, names: string): Record<string, string> =>
  Object.fromEntries(names.split(" ").map((name) => [name, reason]));

const TARGET_MODULES = table({
  ...refusedAs(CHANGES_TARGET, "add load search-paths"),
  dump: table({
    ast: TEXT,
    "line-table": parsed(lldbOptions("v:verbose"), "text"),
    objfile: TEXT,
    "pcm-info": "reads a file on this host, not the dump",
    sections: TEXT,
    symfile: TEXT,
    symtab: parsed(lldbOptions("m:show-mangled-names s:sort="), "text"),
  }),
  list: LISTING,
  lookup: LISTING,
  "show-unwind": parsed(lldbOptions("a:address= n:name="), "expressions"),
});

const REGISTER = table({
  read: parsed(lldbOptions("A:alternate G:gdb-format= a:all f:format= s:set="), "expressions"),
  write: "writes registers",
});

const LLDB_COMMANDS: LldbTable = table({
  apropos: TEXT,
  breakpoint: table({
    ...refusedAs(SETS_BREAKPOINTS, "clear command delete disable enable modify name read set"),
    list: parsed(lldbOptions("D:dummy-breakpoints b:brief f:full i:internal v:verbose"), "expressions"),
    write: WRITES_FILE,
  }),
  command: table({
    ...refusedAs("defines or changes commands", "alias container delete regex unalias"),
    script: "imports or defines commands in Python",
    source: "runs the commands in a file",
  }),
  diagnostics: table({ dump: "writes diagnostic files" }),
  disassemble: LISTING,
  "dwim-print": wholeExpression,
  expression: EXPRESSION,
  frame: table({
    diagnose: parsed(lldbOptions("a:address= o:offset= r:register="), "expressions"),
    info: NO_OPTIONS,
    recognizer: "manages frame recognizers, which run Python",
    select: FRAME_SELECT,
    variable: FRAME_VARIABLE,
  }),
  "gdb-remote": CONNECTS,
  gui: "opens lldb's full-screen interface",
  help: TEXT,
  "kdp-remote": CONNECTS,
  language: table({
    cplusplus: table({ demangle: TEXT }),
    ...refusedAs(NOT_READ_ONLY, "objc renderscript"),
  }),
  log: table({
    ...refusedAs("changes lldb's logging, which can write to files", "disable enable timers"),
    dump: WRITES_FILE,
    list: NOT_READ_ONLY,
  }),
  memory: table({
    find: parsed(lldbOptions("c:count= e:expression= o:dump-offset= s:string= :show-tags"), "expressions"),
    history: NOT_READ_ONLY,
    read: MEMORY_READ,
    region: parsed(lldbOptions("a:all"), "expressions"),
    tag: "reads or writes memory tags",
    write: "writes memory",
  }),
  platform: table({
    ...refusedAs("connects to or changes the platform", "connect disconnect select settings"),
    ...refusedAs(
      "reads or writes files on the platform",
      "file file-exists get-file get-permissions get-size mkdir put-file target-install",
    ),
    ...refusedAs(NOT_READ_ONLY, "list status"),
    process: "launches, attaches to or lists processes on the platform",
    shell: RUNS_SHELL,
  }),
  plugin: table({ load: "loads a plugin into lldb", "structured-data": NOT_READ_ONLY }),
  process: table({
    attach: CONTROLS_PROCESS,
    connect: CONNECTS,
    continue: RUNS_PROGRAM,
    detach: CONTROLS_PROCESS,
    handle: CHANGES_SETTINGS,
    interrupt: RUNS_PROGRAM,
    kill: CONTROLS_PROCESS,
    launch: RUNS_PROGRAM,
    load: "loads a shared library into the program",
    plugin: "sends commands to the process plugin (remote packets)",
    "save-core": "writes a core file",
    signal: "sends a signal to the program",
    status: parsed(lldbOptions("v:verbose"), "expressions"),
    trace: "traces the program",
    unload: "unloads a shared library from the program",
  }),
  quit: ENDS_SESSION,
  register: REGISTER,
  script: RUNS_PYTHON,
  session: table({ history: SESSION_HISTORY, save: WRITES_FILE }),
  settings: table({
    ...refusedAs(CHANGES_SETTINGS, "append clear insert-after insert-before read remove replace set"),
    list: TEXT,
    show: TEXT,
    write: WRITES_FILE,
  }),
  source: table({
    info: parsed(lldbOptions("a:address= c:count= e:end-line= f:file= l:line= n:name= s:shlib="), "expressions"),
    list: parsed(
      lldbOptions("a:address= b:show-breakpoints c:count= f:file= l:line= n:name= r:reverse s:shlib= y:joint-specifier="),
      "expressions",
    ),
  }),
  statistics: table({
    ...refusedAs(CHANGES_SETTINGS, "disable enable"),
    dump: parsed(lldbOptions("a:all-targets"), "text"),
  }),
  target: table({
    ...refusedAs(CHANGES_TARGET, "create delete select symbols"),
    dump: NOT_READ_ONLY,
    list: NO_OPTIONS,
    modules: TARGET_MODULES,
    "show-launch-environment": ENVIRONMENT,
    "stop-hook": STOP_HOOKS,
    variable: TARGET_VARIABLE,
  }),
  thread: table({
    backtrace: BACKTRACE,
    ...refusedAs(RUNS_PROGRAM, "continue step-in step-inst step-inst-over step-out step-over step-scripted until"),
    exception: NOT_READ_ONLY,
    info: parsed(lldbOptions("j:json s:stop-info"), "expressions"),
    jump: MOVES_PC,
    list: NO_OPTIONS,
    plan: "changes how the program's threads step",
    return: "pops frames and changes the program's registers",
    select: NO_OPTIONS,
    siginfo: NO_OPTIONS,
    trace: "traces the program",
  }),
  trace: table({
    ...refusedAs(NOT_READ_ONLY, "dump schema"),
    load: "loads a trace of a program",
    save: WRITES_FILE,
  }),
  type: table({
    ...refusedAs(FORMATTERS, "category filter format summary synthetic"),
    lookup: parsed(lldbOptions("h:show-help l:language="), "text"),
  }),
  version: TEXT,
  watchpoint: table({
    ...refusedAs(WATCHPOINTS, "command delete disable enable ignore modify set"),
    list: parsed(lldbOptions("b:brief f:full v:verbose"), "expressions"),
  }),
  // The commands behind lldb's regular-expression aliases.
  "_regexp-attach": CONTROLS_PROCESS,
  "_regexp-break": SETS_BREAKPOINTS,
  "_regexp-bt": BACKTRACE,
  "_regexp-display": STOP_HOOKS,
  "_regexp-down": NO_OPTIONS,
  "_regexp-env": ENVIRONMENT,
  "_regexp-jump": MOVES_PC,
  "_regexp-list": sourceListing,
  "_regexp-tbreak": SETS_BREAKPOINTS,
  "_regexp-undisplay": STOP_HOOKS,
  "_regexp-up": NO_OPTIONS,
});

const alias = (label: string, rule: LldbRule): { label: string; rule: LldbRule } => ({ label, rule });

// lldb 16's aliases, each labelled with the command it stands for.
const LLDB_ALIASES = new Map(Object.entries({
  "add-dsym": alias("target symbols add", CHANGES_TARGET),
  attach: alias("process attach", CONTROLS_PROCESS),
  b: alias("breakpoint set", SETS_BREAKPOINTS),
  bt: alias("thread backtrace", BACKTRACE),
  c: alias("process continue", RUNS_PROGRAM),
  call: alias("expression", CALLS_FUNCTION),
  continue: alias("process continue", RUNS_PROGRAM),
  detach: alias("process detach", CONTROLS_PROCESS),
  di: alias("disassemble", LISTING),
  dis: alias("disassemble", LISTING),
  display: alias("target stop-hook add", STOP_HOOKS),
  down: alias("frame select", NO_OPTIONS),
  env: alias("settings set target.env-vars", ENVIRONMENT),
  exit: alias("quit", ENDS_SESSION),
  f: alias("frame select", FRAME_SELECT),
  file: alias("target create", CHANGES_TARGET),
  finish: alias("thread step-out", RUNS_PROGRAM),
  history: alias("session history", SESSION_HISTORY),
  image: alias("target modules", TARGET_MODULES),
  j: alias("thread jump", MOVES_PC),
  jump: alias("thread jump", MOVES_PC),
  kill: alias("process kill", CONTROLS_PROCESS),
  l: alias("source list", sourceListing),
  list: alias("source list", sourceListing),
  n: alias("thread step-over", RUNS_PROGRAM),
  next: alias("thread step-over", RUNS_PROGRAM),
  nexti: alias("thread step-inst-over", RUNS_PROGRAM),
  ni: alias("thread step-inst-over", RUNS_PROGRAM),
  p: alias("expression", wholeExpression),
  parray: alias("expression", wholeExpression),
  po: alias("expression -O", DESCRIBES_OBJECT),
  poarray: alias("expression -O", DESCRIBES_OBJECT),
  print: alias("expression", wholeExpression),
  q: alias("quit", ENDS_SESSION),
  r: alias("process launch", RUNS_PROGRAM),
  rbreak: alias("breakpoint set", SETS_BREAKPOINTS),
  re: alias("register", REGISTER),
  run: alias("process launch", RUNS_PROGRAM),
  s: alias("thread step-in", RUNS_PROGRAM),
  shell: alias("platform shell", RUNS_SHELL),
  si: alias("thread step-inst", RUNS_PROGRAM),
  sif: alias("thread step-in", RUNS_PROGRAM),
  step: alias("thread step-in", RUNS_PROGRAM),
  stepi: alias("thread step-inst", RUNS_PROGRAM),
  t: alias("thread select", NO_OPTIONS),
  tbreak: alias("breakpoint set", SETS_BREAKPOINTS),
  undisplay: alias("target stop-hook delete", STOP_HOOKS),
  up: alias("frame select", NO_OPTIONS),
  v: alias("frame variable", FRAME_VARIABLE),
  var: alias("frame variable", FRAME_VARIABLE),
  vo: alias("frame variable -O", DESCRIBES_OBJECT),
  x: alias("memory read", MEMORY_READ),
}));
