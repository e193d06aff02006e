import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it, expect } from "vitest";
import { checkCommand } from "../../src/debuggers/policy/index.js";
import type { Backend } from "../../src/debuggers/session.js";

const reasonOf = (backend: Backend, command: string): string | null => {
  const verdict = checkCommand(backend, command);
  return verdict.allowed ? null : verdict.reason;
};

const GDB_ALLOWED = [
  // Backtraces, in every spelling gdb accepts.
  "bt", "bt full", "backtrace -full 10", "backtrace full", "bt -full", "bt 5", "bt -5", "where", "wher", "ba",
  "bt -frame-arguments all -- 3", "bt -past-main on -full", "  bt  ", "\tbt", "bt\tfull",
  // Frames and threads.
  "frame", "frame 1", "f 0", "fr 2", "frame function main", "frame level 2", "frame address 0x7ffe0000",
  "select-frame 1", "up", "up 2", "down", "do", "dow 1", "down-silently",
  "thread", "thread 2", "t 1", "thr 3", "thread 1.2", "thread find worker", "thread f worker",
  // thread apply / frame apply whose inner command is allowed.
  "thread apply all bt", "thread apply all bt full", "thread apply 1-3 -q p $pc", "thread apply 1 2 3 bt",
  "thread apply all -ascending bt", "thread apply all -- bt", "thread apply all -q -c -- info registers rip",
  "thread apply * bt", "thread apply 1.* bt", "thread apply $n bt", "thread a all bt", "thread ap al bt",
  "thread  apply   all   bt", "thread apply all frame apply all p $sp",
  "taas bt", "taas -q p $pc", "tfaas p x", "faas info locals", "faas -- info frame",
  "frame apply all p $sp", "frame apply 3 bt 1", "frame apply -2 p $pc", "frame apply level 0-3 info locals",
  "frame apply level 0 2 4 p $sp", "frame apply all -past-main on -q p $pc", "frame ap all -s p x",
  // info, with abbreviations.
  "info registers rip", "i r", "i r rip rsp", "info all-registers", "info threads", "info frame", "info f",
  "info locals", "info args", "info sharedlibrary", "info dll", "info proc mappings", "info proc",
  "info proc stat", "info symbol 0x401000", "info sym $pc", "info line *$pc", "info line main.c:10",
  "info source", "info files", "info target", "info inferiors", "info signals", "info signals SIGSEGV",
  "info breakpoints", "info display", "info s", "info stack full", "info functions ^foo(", "info variables .",
  "info types Foo", "info scope main", "info auxv", "info vtbl obj", "info set print pretty", "inf threads",
  "info auto-load", "info sources", "info macro FOO", "info address main", "info checkpoints",
  // print and friends: expressions that only read.
  "print x", "p x == 1", "p x != 1", "p x <= 1", "p x >= 1", "p (char*)p", "p *(int*)0x1234",
  "p sizeof(int)", "p sizeof (struct foo)", 'p "a=(b)"', "p 'a'", "p '='", "p '('", "p $_siginfo",
  "p $_siginfo._sifields._sigfault.si_addr", "p $pc", "p/x $sp", "p arr[3]", "p *arr@10", "p -pretty -- *obj",
  "p -elements 4 -- arr", "p -p -- x", "p/x (unsigned long)(p)", "p -pretty -- /x (char)(c)", "p/x(x)", 'p $_streq(name, "main")',
  "p static_cast<int>(x)", "p a > (b)", "p x->y.z", "p &x", "p ~mask & 0xff", "p !ok", "p -x", "p 1 - -1",
  "p (struct foo *)(ptr)", "p {int}0x1000", "p $1", "p $$2", "p x@entry", "p 'file.c'::var", "p a && (b || c)",
  "p \"escaped \\\" quote (x=1)\"", "output x", "inspect x", "inspe x", 'printf "%s\\n", name',
  "x/32xg $sp", "x/s *(char **)($sp + 8)", "x/i $pc", "x/4dw &arr[0]", "ptype struct foo", "ptype int(*)(int)",
  "ptype/o struct foo", "whatis x", "wha x", "disassemble $pc-32,$pc+32", "disas /r", "disassemble /s main",
  "list main.c:10", "l", "list foo(int)", "list *0x401000", "li 10,20", "list -function main", "list -pro x", "find &buf[0], +64, 0x41",
  // Text and help.
  "echo hello\\n", "help shell", "h bt", "apropos thread", "show version", "sho version", "show print pretty",
  "info set print", "show paths", "show convenience", "pwd", "demangle _ZN3foo3barEv", "search foo", "rev foo",
  // maintenance info only.
  "maint info sections", "maintenance info sections -all-objects", "mt info line-table", "maint i bfds",
  // GDB/MI.
  "-data-evaluate-expression x", "-stack-list-frames", "-stack-list-frames 0 10", "-stack-list-variables --simple-values",
  "-thread-info", "-data-read-memory-bytes $sp 64", '-data-disassemble -s $pc -e "$pc + 16" -- 0', "-thread-select 2",
  "-stack-select-frame 1", '-data-evaluate-expression "a == b"', '-data-evaluate-expression "\\"a=(b)\\""',
  "-stack-list-variables --thread 1 --frame 0 --all-values", "-data-list-register-values x 0 1", "-stack-info-frame",
];

/** [command, a fragment the reason must contain]. */
const GDB_REFUSED: ReadonlyArray<readonly [string, string]> = [
  // Shells, pipes and scripts, however they are spelled.
  ["shell id", '"shell" runs a shell command'],
  ["she id", '"she" (shell) runs a shell command'],
  ["shel id", "runs a shell command"],
  ["!id", '"!" (shell) runs a shell command'],
  ["! id", "runs a shell command"],
  ["sh id", "is ambiguous in gdb (sharedlibrary, shell, show)"],
  ["SHELL id", "is not a gdb command (gdb's command names are lower case)"],
  ["Shell id", "lower case"],
  ["pipe bt | grep x", "pipes a command's output through a shell command"],
  ["| bt | cat", "pipes"],
  ["python print(1)", "runs Python code"],
  ["Python", "lower case"],
  ["py print(1)", '"py" (python) runs Python code'],
  ["pi", '"pi" (python-interactive) runs Python code'],
  ["pyt", "is ambiguous in gdb (python, python-interactive)"],
  ["python-interactive", "runs Python code"],
  ["explore x", "runs Python code"],
  ["guile", "runs Guile code"],
  ["gu", "runs Guile code"],
  ["gr", "runs Guile code"],
  ["source /tmp/x", "runs the commands or script in a file"],
  ["so /tmp/x", '"so" (source)'],
  ['eval "shell id"', "builds a command at run time"],
  ["ev \"bt\"", "builds a command at run time"],
  ["with print pretty -- shell id", "runs a command with temporarily changed settings"],
  ["with print pretty -- bt", "temporarily changed settings"],
  ["w print pretty -- bt", '"w" (with)'],
  ["wit print pretty -- bt", "temporarily changed settings"],
  ["define foo", "defines or changes commands"],
  ["document foo", "defines or changes commands"],
  ["alias x = shell", "defines or changes commands"],
  ["ali x = shell", "defines or changes commands"],
  ["compile code x", "compiles code and runs it in the program"],
  ["expression 1", "compiles code"],
  ["interpreter-exec console \"shell id\"", "another interpreter"],
  ["new-ui console /dev/pts/1", "opens another user interface"],
  ["make", "runs make through the shell"],
  ["edit main", "starts an external editor"],
  ["if 1", "runs a block of commands"],
  ["while 1", "runs a block of commands"],
  ["jit-reader-load /tmp/x.so", "loads a shared library into gdb"],
  ["add-auto-load-safe-path /", "auto-load scripts"],
  // Files written.
  ["dump memory /tmp/x 0 10", "writes memory or values to a file"],
  ["append value /tmp/x x", "writes memory or values to a file"],
  ["save breakpoints /tmp/x", "writes a file"],
  ["generate-core-file", "writes a core file"],
  ["gcore", '"gcore" (generate-core-file) writes a core file'],
  ["gcor /tmp/core", "writes a core file"],
  ["restore /tmp/x binary 0", "writes a file's contents into the program's memory"],
  ["tsave /tmp/x", "writes a file"],
  ["set logging on", "set logging"],
  ["set logging file /tmp/x", "changes settings"],
  // Processes.
  ["run", "runs or resumes the program"],
  ["r", '"r" (run)'],
  ["ru", '"ru" (run)'],
  ["start", "runs or resumes the program"],
  ["starti", "runs or resumes the program"],
  ["star", "is ambiguous in gdb (start, starti)"],
  ["continue", "runs or resumes the program"],
  ["c", '"c" (continue)'],
  ["fg", '"fg" (continue)'],
  ["next", "runs or resumes the program"],
  ["n", "runs or resumes the program"],
  ["step", "runs or resumes the program"],
  ["s", '"s" (step)'],
  ["stepi", "runs or resumes the program"],
  ["si", "runs or resumes the program"],
  ["finish", "runs or resumes the program"],
  ["until", "runs or resumes the program"],
  ["advance 10", "runs or resumes the program"],
  ["jump 10", "runs or resumes the program"],
  ["signal SIGINT", "runs or resumes the program"],
  ["record", "runs or resumes the program"],
  ["checkpoint", "runs or resumes the program"],
  ["return", "pops frames"],
  ["kill", "attaches to, detaches from or kills a process"],
  ["attach 1", "attaches to, detaches from or kills a process"],
  ["detach", "attaches to, detaches from or kills a process"],
  ["call abort()", "calls a function in the program"],
  ["po obj", '"po" (print-object) calls a function'],
  // Targets, symbols, network.
  ["target remote :1234", "changes the debugged target"],
  ["target core /x", "changes the debugged target"],
  ["tar remote :1234", '"tar" (target)'],
  ["file /bin/ls", "changes the debugged target"],
  ["exec-file /bin/ls", "changes the debugged target"],
  ["symbol-file x", "changes the debugged target"],
  ["add-symbol-file x", "changes the debugged target"],
  ["core-file x", "changes the debugged target"],
  ["core x", '"core" (core-file)'],
  ["sharedlibrary", "changes the debugged target"],
  ["load", "changes the debugged target"],
  ["cd /", "changes the debugged target"],
  ["directory /tmp", "changes the debugged target"],
  ["remote put a b", "transfers files to or from a remote target"],
  ["monitor reset", "sends a command to a remote monitor"],
  ["set debuginfod enabled on", "set debuginfod"],
  // Assignment, in set and in expressions.
  ["set var x = 1", "changes settings, variables, registers or memory"],
  ["set $rax = 0", "changes settings"],
  ["set print pretty on", "changes settings"],
  ["print x = 1", '"print" expression assigns with "="'],
  ["p x=1", 'assigns with "="'],
  ["p x+=1", 'assigns with "+="'],
  ["p x<<=1", 'assigns with "<<="'],
  ["p x >>= 1", 'assigns with ">>="'],
  ["p $x = 1", 'assigns with "="'],
  ["p a === b", 'assigns with "="'],
  ["p x := 1", 'assigns with ":="'],
  ["p x++", 'changes a value with "++"'],
  ["p --x", 'changes a value with "--"'],
  ["p x--", 'changes a value with "--"'],
  ["p -- --x", 'changes a value with "--"'],
  ["p x -- 1", 'changes a value with "--"'],
  ["init-if-undefined $x = 1", "assigns a convenience variable"],
  // Calls, however they are dressed.
  ["p foo()", 'calls a function ("foo(")'],
  ["p foo (1)", 'calls a function ("foo(")'],
  ["p obj.method()", 'calls a function ("method(")'],
  ["p ns::f(1)", 'calls a function ("f(")'],
  ["p (*fp)()", "calls the value of a parenthesised expression"],
  ["p (fp)(1)", "calls the value of a parenthesised expression"],
  ["p ((int (*)(void))f)()", "calls the value of a parenthesised expression"],
  ["p (uint64_t)(x)", "calls the value of a parenthesised expression"],
  ["p arr[0](1)", "calls an element of an array"],
  ["p foo<int>(1)", "may call a template function"],
  ["p $_shell(\"id\")", 'calls a function ("$_shell(")'],
  ["p $_as_string(x)", 'calls a function ("$_as_string(")'],
  ["p $pc()", 'calls a function ("$pc(")'],
  ["p 'foo'(1)", "calls a function"],
  ["p $_isvoid(abort())", 'calls a function ("abort(")'],
  ["p sizeof(getpid())", 'calls a function ("getpid(")'],
  ["p [obj release]", "sends an Objective-C message"],
  ["p -pretty -- foo()", 'calls a function ("foo(")'],
  ["p/xFoo(1)", 'calls a function ("Foo(")'],
  ["x/-4xg abort()", 'calls a function ("abort(")'],
  ['p "unterminated', "has an unterminated string literal"],
  ["p 'x", "has an unterminated quoted literal"],
  ["output abort()", '"output" expression calls a function'],
  ["output -- x", 'changes a value with "--"'],
  ["list -p x", 'location "-p" crashes gdb 13'],
  ["info line -probe-stap x", "crashes gdb 13"],
  ["info scope main,-probe x", "crashes gdb 13"],
  ["frame function -p x", '"frame function" location "-p" crashes gdb 13'],
  ["select-frame function -probe x", "crashes gdb 13"],
  ["info frame function -p x", '"info frame" location "-p" crashes gdb 13'],
  ['printf "%d", getpid()', '"printf" expression calls a function'],
  ['x/s getenv("HOME")', '"x" expression calls a function'],
  ["ptype foo()", "calls a function"],
  ["whatis x = 1", "assigns"],
  ["bt -frame-arguments all -- foo()", '"backtrace" expression calls a function'],
  ["up foo()", '"up" expression calls a function'],
  ["frame level abort()", '"frame level" expression calls a function'],
  ["frame abort()", '"frame" expression calls a function'],
  ["select-frame abort()", "calls a function"],
  ["info symbol foo()", '"info symbol" expression calls a function'],
  ["info frame address foo()", '"info frame" expression calls a function'],
  ["info line *foo()", '"info line" expression calls a function'],
  ["list *foo()", '"list" expression calls a function'],
  ["info signals foo()", "calls a function"],
  ["show values foo()", '"show" expression calls a function'],
  ["disassemble fp()", "calls a function"],
  ["find &buf[0], +64, foo()", "calls a function"],
  // thread apply / frame apply with a refused inner command.
  ["thread apply all shell id", '"shell" runs a shell command'],
  ["thread apply all -- shell id", '"shell" runs a shell command'],
  ["thread apply 1-3 -q shell id", "runs a shell command"],
  ["thread apply all -ascending -c -s -- shell id", "runs a shell command"],
  ["thread apply a shell id", "runs a shell command"],
  ["thread apply 1 2 -q python print(1)", "runs Python code"],
  ["thread apply $one shell id", "runs a shell command"],
  ["thread ap all call abort()", "calls a function in the program"],
  ["thread apply all frame apply all shell id", "runs a shell command"],
  ["thread apply all -q -- -q shell id", '"-q" is not a gdb command'],
  ["thread apply all -- -- shell id", '"--" is not a gdb command'],
  ["thread APPLY all shell id", '"thread APPLY" is not a gdb command'],
  ["thread apply ALL shell id", "lower case"],
  ["thread apply", 'needs "all" or a list of thread ids'],
  ["thread apply all", '"thread apply all" needs a command to apply'],
  ["thread apply all -q", "needs a command to apply"],
  ["thread apply foo bt", 'needs "all" or a list of thread ids'],
  ["thread name evil", "renames a thread"],
  ["taas shell id", "runs a shell command"],
  ["taas -- shell id", "runs a shell command"],
  ["tfaas python print(1)", "runs Python code"],
  ["faas call abort()", "calls a function in the program"],
  ["faas -- shell id", "runs a shell command"],
  ["frame apply all call abort()", "calls a function in the program"],
  ["frame apply all p foo()", "calls a function"],
  ["frame apply level 0 shell id", "runs a shell command"],
  ["frame apply level 0-1 -q -- shell id", "runs a shell command"],
  ["frame apply all -past-main shell id", "runs a shell command"],
  ["frame apply all -past-main enable shell id", "runs a shell command"],
  ["frame apply all -past-main ena shell id", '"ena" (enable)'],
  ["frame apply 1 -q shell id", "runs a shell command"],
  ["frame apply -1 shell id", "runs a shell command"],
  ["frame apply l 0 shell id", "runs a shell command"],
  ["frame a all bt", '"frame a" is ambiguous in gdb (address, apply)'],
  ["frame APPLY all shell id", "lower case"],
  ["frame apply", 'needs "all", "level" or a frame count'],
  ["frame apply level shell id", "needs a list of frame levels"],
  ["thread apply all thread apply all thread apply all thread apply all thread apply all thread apply all " +
    "thread apply all thread apply all thread apply all thread apply all bt", "more than 8 deep"],
  // info, show and maintenance subcommands that are refused.
  ["info os", '"info os" lists processes and resources of this host'],
  ["info o", '"info o" (info os)'],
  ["info static-tracepoint-markers", "talks to the in-process agent"],
  ["info stat", '"info stat" (info static-tracepoint-markers)'],
  ["info sta", "is ambiguous in gdb (stack, static-tracepoint-markers)"],
  ["info proc 1", "reads a live process on this host"],
  ["info proc mappings 1", "reads a live process on this host"],
  ["info proc sta", "is ambiguous in gdb (stat, status)"],
  ["info", '"info" needs a subcommand'],
  ["info REGISTERS", "lower case"],
  ["i R", "lower case"],
  ["info ven", '"info ven" is not a gdb command'],
  ["info se", "is ambiguous in gdb (selectors, set)"],
  ["show environment", "environment variables, which may hold secrets"],
  ["show env", "environment variables"],
  ["show environment OPENAI_API_KEY", "environment variables"],
  ["show", "lists gdb's environment variables"],
  ["info set", "lists gdb's environment variables"],
  ["info set environment", "environment variables"],
  ["show ENV", "lower case"],
  ["maintenance print msymbols /tmp/x", 'only "maintenance info" is'],
  ["maint set x", 'only "maintenance info" is'],
  ["maint", 'only "maintenance info" is'],
  ["mt INFO sections", 'only "maintenance info" is'],
  ["maint info s", "is ambiguous in gdb (sections, selftests, symtabs)"],
  // Everything else that is not read-only, and words that are not commands.
  ["display x", "changes the auto-display list"],
  ["break main", "sets or changes breakpoints"],
  ["b main", '"b" (break)'],
  ["delete", "sets or changes breakpoints"],
  ["tui enable", "controls the text user interface"],
  ["layout src", "controls the text user interface"],
  ["quit", "ends the debugger session"],
  ["q", "ends the debugger session"],
  ["pr x", "is ambiguous in gdb (print, print-object, printf)"],
  ["st", "is ambiguous in gdb"],
  ["foo", '"foo" is not a gdb command'],
  ["BT", '"BT" is not a gdb command'],
  ["   BT", '"BT" is not a gdb command'],
  ["Bt full", "lower case"],
  ["p$pc", '"p$pc" is not a gdb command'],
  ["#shell id", "does not start with a gdb command name"],
  ["*x", "does not start with a gdb command name"],
  // Control characters, checked before anything else.
  ["bt\nshell id", "contains a control character (U+000A)"],
  ["bt\rshell", "contains a control character (U+000D)"],
  ["bt\u0000", "contains a control character (U+0000)"],
  ["bt\u001b[0m", "contains a control character (U+001B)"],
  ["bt\u007f", "contains a control character (U+007F)"],
  ["bt\u0085shell id", "contains a control character (U+0085)"],
  ["bt\u2028shell id", "contains a control character (U+2028)"],
  ["bt\u000bfull", "contains a control character (U+000B)"],
  ["", "empty command"],
  ["   ", "empty command"],
  ["\t", "empty command"],
  // GDB/MI.
  ['-interpreter-exec console "shell id"', "another interpreter"],
  ['-data-evaluate-expression "x=1"', '"-data-evaluate-expression" expression assigns with "="'],
  ["-data-evaluate-expression foo()", "calls a function"],
  ["-data-evaluate-expression foo ()", "calls a function"],
  ['-data-evaluate-expression "x', "cannot read"],
  ['-data-evaluate-expression "a\\nb"', "cannot read"],
  ["-data-read-memory-bytes foo() 8", "calls a function"],
  ["-data-evaluate-expression --x", 'changes a value with "--"'],
  ['-data-evaluate-expression "--x"', 'changes a value with "--"'],
  ["-stack-select-frame --x", 'changes a value with "--"'],
  ["-data-read-memory-bytes -- --x 4", 'changes a value with "--"'],
  ['-data-disassemble -s $pc -e "--x" -- 0', 'changes a value with "--"'],
  ["-target-attach 1", '"-target-attach" attaches to or changes the target'],
  ["-target-select remote :1234", "attaches to or changes the target"],
  ["-exec-run", '"-exec-run" runs or controls the program'],
  ["-exec-continue", "runs or controls the program"],
  ["-gdb-set logging on", "is not one of the read-only MI commands"],
  ["-data-write-memory-bytes 0 00", "is not one of the read-only MI commands"],
  ["-Stack-list-frames", "is not one of the read-only MI commands"],
];

// Every gdb 13 command name, aliases and hidden ones included, as gdb itself reports them.
const GDB_13_COMMANDS = `! + - < > actions add-auto-load-safe-path add-auto-load-scripts-directory add-inferior
  add-symbol-file add-symbol-file-from-memory advance agent-printf alias append apropos attach awatch b backtrace
  bookmark br bre brea break break-range bt c call catch cd checkpoint cl clear clone-inferior collect commands
  compare-sections compile complete condition continue core-file d define define-prefix del delete demangle detach
  directory dis disa disable disassemble disconnect display do document dont-repeat dow down down-silently dprintf
  dump echo edit en enable end eval exec-file exit explore expression f faas fg file fin find finish flash-erase
  flushregs fo focus forward-search frame fs ftrace function gcore generate-core-file goto-bookmark gr gu guile
  guile-repl h handle hbreak help i if ignore inf inferior info init-if-undefined inspect interpreter-exec interrupt
  j jit-reader-load jit-reader-unload jump kill l layout list load macro maintenance make mem memory-tag monitor mt
  n new-ui next nexti ni nosharedlibrary output ov overlay ovly p passcount path pi pipe po print print-object printf
  ptype pwd py python python-interactive q queue-signal quit r rbreak rc rec record refresh remote remove-inferiors
  remove-symbol-file restart restore return rev reverse-continue reverse-finish reverse-next reverse-nexti
  reverse-search reverse-step reverse-stepi rn rni rs rsi run rwatch s save save-tracepoints search section
  select-frame set sharedlibrary shell show si signal skip source start starti step stepi stepping stop strace
  symbol-file t taas tabset target task tbreak tcatch tdump teval tfaas tfind thbreak thread tp tr tra trac trace
  tsave tstart tstatus tstop tty tui tvariable u undisplay unset until up up-silently update w watch wh whatis
  where while while-stepping winheight winwidth with ws x |`.split(/\s+/);

describe("checkCommand for gdb", () => {
  it.each(GDB_ALLOWED)("allows %j", (command) => {
    expect(checkCommand("gdb", command)).toEqual({ allowed: true });
  });

  it.each(GDB_REFUSED)("refuses %j", (command, fragment) => {
    const reason = reasonOf("gdb", command);
    expect(reason).toContain(fragment);
  });

  it("gives one-line reasons that name the policy and the way out", () => {
    for (const [command] of GDB_REFUSED) {
      const reason = reasonOf("gdb", command) ?? "";
      expect(reason).not.toMatch(/[\n\r]/);
      if (command.trim() !== "") expect(reason).toMatch(/; refused by the safety policy \(use --unsafe to allow\)$/);
    }
  });

  it("knows every command name gdb 13 has, so no abbreviation resolves differently", () => {
    for (const name of GDB_13_COMMANDS) {
      expect(reasonOf("gdb", name) ?? "", name).not.toMatch(/is not a gdb command|is ambiguous/);
    }
  });
});

/**
 * Asks the installed gdb how it resolves each word, through "help" in its Python API (nothing is
 * run). "help" also matches help classes such as "running", which executing a command ignores, so
 * words that start a class name are left out.
 */
function gdbLookups(words: string[]): Map<string, "resolved" | "ambiguous" | "unknown"> {
  const dir = mkdtempSync(join(tmpdir(), "dumpdbg-policy-"));
  try {
    const script = join(dir, "lookup.py");
    writeFileSync(join(dir, "words.txt"), words.join("\n"));
    writeFileSync(
      script,
      [
        "import gdb",
        `for word in open(${JSON.stringify(join(dir, "words.txt"))}).read().split("\\n"):`,
        "    try:",
        "        gdb.execute('help ' + word, to_string=True)",
        "        print(word + '\\tresolved')",
        "    except gdb.error as e:",
        "        print(word + '\\t' + ('ambiguous' if str(e).startswith('Ambiguous') else 'unknown'))",
      ].join("\n"),
    );
    const gdb = spawnSync(process.env.DUMPDBG_GDB ?? "gdb", ["-nx", "-batch", "-x", script], { encoding: "utf8" });
    const answers = new Map<string, "resolved" | "ambiguous" | "unknown">();
    for (const line of gdb.stdout.split("\n")) {
      const [word, answer] = line.split("\t");
      if (word !== undefined && (answer === "resolved" || answer === "ambiguous" || answer === "unknown")) {
        answers.set(word, answer);
      }
    }
    return answers;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const HELP_CLASSES = ["aliases", "breakpoints", "data", "files", "internals", "obscure", "running", "stack",
  "status", "support", "text-user-interface", "tracepoints", "user-defined"];

const policyLookup = (command: string): "resolved" | "ambiguous" | "unknown" => {
  const reason = reasonOf("gdb", command) ?? "";
  if (reason.includes("is ambiguous in gdb")) return "ambiguous";
  return reason.includes("is not a gdb command") ? "unknown" : "resolved";
};

describe("gdb abbreviations agree with the installed gdb", () => {
  it("resolves every prefix of every command, and every two-letter word, as gdb does", () => {
    const letters = "abcdefghijklmnopqrstuvwxyz".split("");
    const words = new Set([...letters, ...letters.flatMap((a) => letters.map((b) => a + b))]);
    for (const name of GDB_13_COMMANDS) for (let i = 1; i <= name.length; i++) words.add(name.slice(0, i));
    const comparable = [...words].filter((word) => !HELP_CLASSES.some((c) => c.startsWith(word)));
    const gdb = gdbLookups(comparable);
    expect(gdb.size).toBe(comparable.length);
    const disagreements = comparable.filter((word) => gdb.get(word) !== policyLookup(word));
    expect(disagreements).toEqual([]);
  });

  it("resolves info subcommands as gdb does", () => {
    const names = ("address all-registers args auto-load auxv bookmarks breakpoints checkpoints classes common " +
      "connections copying dcache display dll exceptions extensions files float frame frame-filter functions guile " +
      "handle inferiors line locals macro macros mem module modules os pretty-printer probes proc program record " +
      "registers scope selectors set sharedlibrary signals skip source sources stack static-tracepoint-markers " +
      "symbol target tasks terminal threads tracepoints tvariables type-printers types unwinder variables vector " +
      "vtbl warranty watchpoints win xmethod zz").split(" ");
    const words = new Set<string>();
    for (const name of names) for (let i = 1; i <= name.length; i++) words.add(`info ${name.slice(0, i)}`);
    const gdb = gdbLookups([...words]);
    const disagreements = [...words].filter((word) => gdb.get(word) !== policyLookup(word));
    expect(disagreements).toEqual([]);
  });
});
