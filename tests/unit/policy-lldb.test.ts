import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it, expect } from "vitest";
import { checkCommand } from "../../src/debuggers/policy/index.js";

const reasonOf = (command: string): string | null => {
  const verdict = checkCommand("lldb", command);
  return verdict.allowed ? null : verdict.reason;
};

const LLDB_ALLOWED = [
  // Backtraces and threads, in the spellings lldb accepts.
  "bt", "bt all", "bt 10", "bt -c 5", "_regexp-bt 3", "thread backtrace all", "thread backtrace -c 5 1 2",
  "thread backtrace -count 3", "thread backtrace --count=3", "th b all", "thread list", "th li", "thread select 2",
  "t 2", "thread info", "thread info -j", "thread siginfo",
  // Frames and variables.
  "frame select 1", "f 1", "fr s 1", "frame select -r -1", "up", "up 2", "down", "down 2", "frame info", "fr info",
  "frame variable", "fr v", "frame variable -L x", "frame variable -LT x", "frame variable -flat", "v ptr->next",
  "var arr[3]", "v -Y2 x", "v -Z 4 p", "v/x counter", "frame variable --show-types -- x", "target variable counter",
  "frame diagnose",
  // Registers and memory.
  "register read", "re r", "reg read rip rsp", "register read -f x rax", "register read/x rax",
  "memory read --size 8 --count 4 0x1000", "memory read -c16 $sp", "mem rea -c 4 $sp", "memory read $sp -c 2",
  "memory read -force -c 2048 $sp", "x/16xg $sp", "x -c 16 $sp", "me read -- $sp", "memory region $sp",
  "memory find -s abc 0x1000 0x2000",
  // Modules, symbols and code.
  "image list", "im li", "image lookup -a 0x401000", "image lookup -r -n 'foo.*'", "image loo -a $pc",
  "target modules list", "ta mo li", "target modules lookup -s main", "image dump sections", "image dump symtab crash",
  "target modules show-unwind -n main", "disassemble -p", "di -s 0x1000 -c 10", "dis", "disassemble -n main",
  "source list -n main", "l main", "list 10", "l crash.c:4", "_regexp-list main", "source info -a $pc",
  "type lookup int", "language cplusplus demangle _Z1fv",
  // Expressions that only read.
  "p x", "p/x x", "print x == 1", "p -1", "p -x", "p (char*)p", "p (struct node *)p", "p sizeof(int)", "p *ptr",
  "p 'a'", 'p "a=b"', "p arr[0]", "p static_cast<int>(x)", "expression -f x -- ptr", "expr (char*)p", "e x",
  "expression -fx -- y", "expression -T -- counter", "expression --format x -- y", "expression -- -1",
  "dwim-print counter", "parray 3 p", "print/x",
  // Status, settings and help.
  "target list", "process status", "pr st", "process status -v", "settings show target.run-args",
  "settings list target", "help bt", "help -a", "apropos thread", "version", "br l", "breakpoint list -v",
  "watchpoint list", "history", "session history -c 2", "statistics dump",
];

/** [command, a fragment the reason must contain: what was refused, and why]. */
const LLDB_REFUSED: ReadonlyArray<readonly [string, string]> = [
  // Shells, scripts and commands defined at run time.
  ["platform shell id", '"platform shell" runs a shell command'],
  ["pla sh id", '"pla sh" (platform shell) runs a shell command'],
  ["shell id", '"shell" (platform shell) runs a shell command'],
  ["sh id", '"sh" (platform shell) runs a shell command'],
  ["platform get-file /etc/passwd /tmp/x", '"platform get-file" reads or writes files on the platform'],
  ["platform process launch /bin/sh", '"platform process" launches, attaches to or lists processes'],
  ["script print(1)", '"script" runs Python code'],
  ["sc print(1)", '"sc" (script) runs Python code'],
  ["command script import x.py", '"command script" imports or defines commands in Python'],
  ["comm scr imp x", '"comm scr" (command script) imports or defines commands in Python'],
  ["command source /tmp/x", '"command source" runs the commands in a file'],
  ["command alias x platform shell", '"command alias" defines or changes commands'],
  ["command regex x", '"command regex" defines or changes commands'],
  // Running, attaching and controlling processes.
  ["process launch", '"process launch" runs or resumes the program'],
  ["r", '"r" (process launch) runs or resumes the program'],
  ["run", '"run" (process launch) runs or resumes the program'],
  ["continue", '"continue" (process continue) runs or resumes the program'],
  ["c", '"c" (process continue) runs or resumes the program'],
  ["process continue", '"process continue" runs or resumes the program'],
  ["thread step-in", '"thread step-in" runs or resumes the program'],
  ["s", '"s" (thread step-in) runs or resumes the program'],
  ["n", '"n" (thread step-over) runs or resumes the program'],
  ["ni", '"ni" (thread step-inst-over) runs or resumes the program'],
  ["finish", '"finish" (thread step-out) runs or resumes the program'],
  ["thread until 10", '"thread until" runs or resumes the program'],
  ["th st", '"th st" is ambiguous in lldb (step-in, step-inst, step-inst-over, step-out, step-over, step-scripted)'],
  ["process attach -p 1", '"process attach" attaches to, detaches from or kills a process'],
  ["attach 1", '"attach" (process attach) attaches to, detaches from or kills a process'],
  ["detach", '"detach" (process detach) attaches to, detaches from or kills a process'],
  ["kill", '"kill" (process kill) attaches to, detaches from or kills a process'],
  ["process connect connect://host:1234", '"process connect" connects to a remote target'],
  ["gdb-remote 1234", '"gdb-remote" connects to a remote target'],
  ["k host", '"k" (kdp-remote) connects to a remote target'],
  ["process save-core /tmp/core", '"process save-core" writes a core file'],
  ["process load /tmp/x.so", '"process load" loads a shared library into the program'],
  ["process signal SIGKILL", '"process signal" sends a signal to the program'],
  ["process handle SIGSEGV -s false", '"process handle" changes the debugger\'s settings'],
  ["thread return 0", '"thread return" pops frames and changes the program\'s registers'],
  ["thread jump -l 10", '"thread jump" moves the program counter'],
  ["j 10", '"j" (thread jump) moves the program counter'],
  // Expressions that write, call or run code.
  ["expression -- foo()", '"expression" expression calls a function ("foo(")'],
  ["p foo()", '"p" (expression) expression calls a function ("foo(")'],
  ["print abort()", '"print" (expression) expression calls a function ("abort(")'],
  ["e abort()", '"e" (expression) expression calls a function ("abort(")'],
  ["p x = 1", '"p" (expression) expression assigns with "="'],
  ["p x += 1", '"p" (expression) expression assigns with "+="'],
  ["p x++", '"p" (expression) expression changes a value with "++"'],
  ["p --x", '"p" (expression) expression changes a value with "--"'],
  ["p $x = 5", '"p" (expression) expression assigns with "="'],
  ["p x and_eq 1", '"p" (expression) expression assigns with "and_eq"'],
  ["p new int", '"p" (expression) expression runs code in the program ("new")'],
  ["p delete ptr", '"p" (expression) expression runs code in the program ("delete")'],
  ["p throw 1", 'expression runs code in the program ("throw")'],
  ["p dynamic_cast<Foo*>(p)", 'expression runs code in the program ("dynamic_cast")'],
  ["p Foo x", '"p" (expression) expression declares a variable ("Foo x")'],
  ["p int $x{5}", '"p" (expression) expression has a statement, block or initialiser ("{")'],
  ["p x; abort", 'expression has a statement, block or initialiser (";")'],
  ["p a.operator+(b)", '"p" (expression) expression calls an operator function ("operator+(")'],
  ["p [obj release]", '"p" (expression) expression sends an Objective-C message'],
  ['p $_streq(a, "b")', '"p" (expression) expression calls a function ("$_streq(")'],
  ["p -T -- ptr", '"p" (expression) expression changes a value with "--"'],
  ["dwim-print foo()", '"dwim-print" expression calls a function ("foo(")'],
  ["dwim-print -O -- obj", '"dwim-print" expression changes a value with "--"'],
  ["expression -O -- obj", 'option "-O" of "expression" runs code in the program to describe the object'],
  ["expression --object-description -- obj", 'option "--object-description" of "expression" runs code'],
  ["expression -o -- obj", 'option "-o" of "expression" runs code in the program to describe the object'],
  ["expr -i false -- x", 'option "-i" of "expr" (expression) changes how lldb compiles or runs code'],
  ["expression -p -- int f() { return 1; }", 'option "-p" of "expression" changes how lldb compiles or runs code'],
  ["expression --top -- x", 'option "--top" of "expression" changes how lldb compiles or runs code'],
  ["expression -O obj", '"expression" could read this as options'],
  ["e -T x", '"e" (expression) could read this as options'],
  ["p \"unterminated", '"p" (expression) expression has an unterminated string literal'],
  ["po obj", '"po" (expression -O) runs code in the program to describe the object'],
  ["poarray 3 p", '"poarray" (expression -O) runs code in the program to describe the object'],
  ["call abort()", '"call" (expression) calls a function in the program'],
  ["vo x", '"vo" (frame variable -O) runs code in the program to describe the object'],
  ["frame variable -O obj", 'option "-O" of "frame variable" runs code in the program to describe the object'],
  ["frame variable -o obj", 'option "-o" of "frame variable" runs code in the program'],
  ["frame variable --obj obj", 'option "--obj" of "frame variable" runs code in the program'],
  ["fr v -LO x", 'option "-LO" of "fr v" (frame variable) runs code in the program'],
  ["v -d run-target obj", 'option "-d" of "v" (frame variable) can run code in the program to find the dynamic type'],
  ["v -z '${var}' x", 'option "-z" of "v" (frame variable) chooses a summary, which can run Python'],
  ["v -Q x", 'option "-Q" of "v" (frame variable) is not on the read-only allowlist'],
  ["target variable -O g", 'option "-O" of "target variable" runs code in the program'],
  // Memory, registers and arguments that lldb evaluates.
  ["memory write 0x1000 0", '"memory write" writes memory'],
  ["mem wr 0 1", '"mem wr" (memory write) writes memory'],
  ["me w 0 1", '"me w" (memory write) writes memory'],
  ["memory r 0", '"memory r" is ambiguous in lldb (read, region)'],
  ["memory tag write 0 1", '"memory tag" reads or writes memory tags'],
  ["memory read -o /tmp/x 0x1000", 'option "-o" of "memory read" writes a file'],
  ["memory read --outfile /tmp/x 0x1000", 'option "--outfile" of "memory read" writes a file'],
  ["memory read --out /tmp/x 0x1000", 'option "--out" of "memory read" writes a file'],
  ["memory read -outfile /tmp/x 0x1000", 'option "-outfile" of "memory read" writes a file'],
  ["memory read --append-outfile 0x1000", 'option "--append-outfile" of "memory read" writes a file'],
  ["memory read --s 4 0", 'option "--s" of "memory read" is ambiguous in lldb'],
  ["x -o /tmp/x $sp", 'option "-o" of "x" (memory read) writes a file'],
  ["memory read -c foo() $sp", '"memory read" argument calls a function ("foo(")'],
  ["x/4x foo()", '"x" (memory read) argument calls a function ("foo(")'],
  ["image lookup -afoo()", '"image lookup" (target modules lookup) argument calls a function ("afoo(")'],
  ["image lookup --address=foo()", '"image lookup" (target modules lookup) argument calls a function ("foo(")'],
  ["disassemble -s abort()", '"disassemble" argument calls a function ("abort(")'],
  ["memory find -e foo() 0 10", '"memory find" argument calls a function ("foo(")'],
  ["source list -a foo()", '"source list" argument calls a function ("foo(")'],
  ["l x\" -a \"foo()", '"l" (source list) expression calls a function ("foo(")'],
  ["memory read `foo()`", "the command uses backticks, which make lldb evaluate an expression"],
  ["p `x`", "the command uses backticks"],
  ["register write rax 0", '"register write" writes registers'],
  ["reg w rax 0", '"reg w" (register write) writes registers'],
  ["re w rax 0", '"re w" (register write) writes registers'],
  ["image lookup -a 'foo", '"image lookup" (target modules lookup) has an unterminated quote'],
  // Settings, targets and stop hooks.
  ["settings set target.x 1", '"settings set" changes the debugger\'s settings'],
  ["set set target.x 1", '"set set" (settings set) changes the debugger\'s settings'],
  ["se set x 1", '"se" is ambiguous in lldb (session, settings)'],
  ["settings write -f /tmp/x", '"settings write" writes a file'],
  ["env", '"env" (settings set target.env-vars) shows or sets the environment of a launched program'],
  ["target show-launch-environment", '"target show-launch-environment" shows or sets the environment'],
  ["target create /bin/ls", '"target create" changes the debugged target'],
  ["file /bin/ls", '"file" (target create) changes the debugged target'],
  ["target modules add /tmp/x.so", '"target modules add" changes the debugged target'],
  ["image load -s 0x1000 x", '"image load" (target modules load) changes the debugged target'],
  ["target symbols add x.debug", '"target symbols" changes the debugged target'],
  ["add-dsym x.debug", '"add-dsym" (target symbols add) changes the debugged target'],
  ["target stop-hook add -o 'script 1'", '"target stop-hook" adds or removes stop hooks'],
  ["display x", '"display" (target stop-hook add) adds or removes stop hooks'],
  // Files and logs.
  ["log enable -f /tmp/x lldb all", '"log enable" changes lldb\'s logging, which can write to files'],
  ["log dump -f /tmp/x lldb", '"log dump" writes a file'],
  ["session save /tmp/x", '"session save" writes a file'],
  ["history -C", 'option "-C" of "history" (session history) clears lldb\'s command history'],
  ["breakpoint write -f /tmp/x", '"breakpoint write" writes a file'],
  ["diagnostics dump", '"diagnostics dump" writes diagnostic files'],
  ["trace save /tmp/x", '"trace save" writes a file'],
  ["plugin load /tmp/x.so", '"plugin load" loads a plugin into lldb'],
  ["pl load x", '"pl" is ambiguous in lldb (platform, plugin)'],
  ["image dump pcm-info /tmp/x.pcm", '"image dump pcm-info" (target modules dump pcm-info) reads a file on this host'],
  // Breakpoints, watchpoints, formatters.
  ["breakpoint set -n main", '"breakpoint set" sets or changes breakpoints'],
  ["b main", '"b" (breakpoint set) sets or changes breakpoints'],
  ["br s -n main", '"br s" (breakpoint set) sets or changes breakpoints'],
  ["breakpoint command add 1", '"breakpoint command" sets or changes breakpoints'],
  ["watchpoint set variable x", '"watchpoint set" sets or changes watchpoints'],
  ["wa s v x", '"wa s" (watchpoint set) sets or changes watchpoints'],
  ["type summary add -P Foo", '"type summary" manages data formatters, which can run Python'],
  ["frame recognizer add -l x", '"frame recognizer" manages frame recognizers, which run Python'],
  // The session, and words that are not commands.
  ["gui", '"gui" opens lldb\'s full-screen interface'],
  ["quit", '"quit" ends the debugger session'],
  ["q", '"q" (quit) ends the debugger session'],
  ["exit", '"exit" (quit) ends the debugger session'],
  ["BT", '"BT" is not an lldb command'],
  ["foo", '"foo" is not an lldb command'],
  ["thread", '"thread" needs a subcommand'],
  ["th", '"th" (thread) needs a subcommand'],
  ["thread xyz", '"thread xyz" is not an lldb command'],
  ["fi", '"fi" is ambiguous in lldb (file, finish)'],
  ["u", '"u" is ambiguous in lldb (undisplay, up)'],
  ["bt;platform shell id", '"bt;platform shell id" does not start with an lldb command name'],
  ["!0", '"!0" does not start with an lldb command name'],
  ["thread/x list", '"thread/x" is not an lldb command'],
  ["bt/x", '"bt" (thread backtrace) takes no "/FORMAT" suffix'],
  ["bt\nprocess launch", "the command contains a control character (U+000A)"],
  ["", "empty command"],
];

// Every command name lldb 16 has: commands, the hidden regular-expression commands, and aliases.
const LLDB_16_COMMANDS = `apropos breakpoint command diagnostics disassemble dwim-print expression frame gdb-remote gui
  help kdp-remote language log memory platform plugin process quit register script session settings source statistics
  target thread trace type version watchpoint _regexp-attach _regexp-break _regexp-bt _regexp-display _regexp-down
  _regexp-env _regexp-jump _regexp-list _regexp-tbreak _regexp-undisplay _regexp-up add-dsym attach b bt c call
  continue detach di dis display down env exit f file finish history image j jump kill l list n next nexti ni p parray
  po poarray print q r rbreak re run s shell si sif step stepi t tbreak undisplay up v var vo x`.split(/\s+/);

describe("dumpdbg's [thread T, frame F] prefix", () => {
  it("checks the command it places, not the prefix", () => {
    expect(checkCommand("lldb", "[thread 2, frame 3] frame variable")).toEqual({ allowed: true });
    expect(checkCommand("lldb", "[frame 1] register read rip")).toEqual({ allowed: true });
    expect(checkCommand("lldb", "[thread 2] memory write 0x1000 1").allowed).toBe(false);
    expect(checkCommand("lldb", "[frame 1] script print(1)").allowed).toBe(false);
    expect(checkCommand("lldb", "[thread 2, frame 1] p x = 1").allowed).toBe(false);
    // Not the prefix: lldb would see a command starting with "[".
    expect(checkCommand("lldb", "[shell] frame variable").allowed).toBe(false);
  });
});

describe("checkCommand for lldb", () => {
  it.each(LLDB_ALLOWED)("allows %j", (command) => {
    expect(checkCommand("lldb", command)).toEqual({ allowed: true });
  });

  it.each(LLDB_REFUSED)("refuses %j", (command, fragment) => {
    expect(reasonOf(command)).toContain(fragment);
  });

  it("gives one-line reasons that name the policy and the way out", () => {
    for (const [command] of LLDB_REFUSED) {
      const reason = reasonOf(command) ?? "";
      expect(reason).not.toMatch(/[\n\r]/);
      if (command.trim() !== "") expect(reason).toMatch(/; refused by the safety policy \(use --unsafe to allow\)$/);
    }
  });

  it("knows every command name lldb 16 has", () => {
    for (const name of LLDB_16_COMMANDS) {
      expect(reasonOf(name) ?? "", name).not.toMatch(/is not an lldb command|is ambiguous/);
    }
  });
});

type Lookup = "resolved" | "ambiguous" | "unknown";

const NOT_READ_ONLY = "is not on the read-only allowlist";

// The installed lldb, asked through its own Python; nothing is run but "help" and name resolution.
const LLDB_SCRIPT = `
import lldb, re, sys
interpreter = lldb.debugger.GetCommandInterpreter()
def run(command):
    result = lldb.SBCommandReturnObject()
    interpreter.HandleCommand(command, result)
    return result.GetOutput() + result.GetError()
lines = open(INPUT).read().split("\\n")
with open(OUTPUT, "w") as out:
    for word in filter(None, lines[1:]):
        if lines[0] == "lookup":
            text = run("help " + word)
            ambiguous = re.match(r"(error: ambiguous command|Help requested with ambiguous command)", text)
            answer = "unknown" if "is not a known command" in text else "ambiguous" if ambiguous else "resolved"
        elif lines[0] == "options":
            text = run("help " + word)
            found = re.findall(r"^\\s+-(\\w)(?: ?\\[?<[^>]*>\\]?)? \\( --([\\w-]+)", text, re.M)
            found += [("", name) for name in re.findall(r"^\\s{7}--([\\w-]+)", text, re.M)]
            answer = " ".join(short + ":" + name for short, name in found)
        elif lines[0] == "resolve":
            result = lldb.SBCommandReturnObject()
            interpreter.ResolveCommand(word, result)
            answer = result.GetOutput()
        else:
            parts = run("help " + word).split("The following subcommands are supported:")
            answer = " ".join(re.findall(r"^\\s{6}([A-Za-z0-9_-]+)\\s+--", parts[1], re.M)) if len(parts) > 1 else ""
        out.write(word + "\\t" + answer + "\\n")
`;

const LLDB = [process.env.DUMPDBG_LLDB, "lldb", "lldb-16"].find(
  (binary) => binary !== undefined && spawnSync(binary, ["--version"]).status === 0,
);

/** Asks the installed lldb about each command line, one answer per line. */
function askLldb(mode: "lookup" | "resolve" | "subcommands" | "options", commands: string[]): Map<string, string> {
  const dir = mkdtempSync(join(tmpdir(), "dumpdbg-policy-"));
  try {
    const input = join(dir, "input.txt");
    const output = join(dir, "output.txt");
    const script = join(dir, "ask.py");
    writeFileSync(input, [mode, ...commands].join("\n"));
    writeFileSync(script, `INPUT = ${JSON.stringify(input)}\nOUTPUT = ${JSON.stringify(output)}\n${LLDB_SCRIPT}`);
    spawnSync(LLDB ?? "lldb", ["--no-lldbinit", "-b", "-o", `command script import ${script}`], { encoding: "utf8" });
    const answers = new Map<string, string>();
    for (const line of readFileSync(output, "utf8").split("\n")) {
      const tab = line.indexOf("\t");
      if (tab > 0) answers.set(line.slice(0, tab), line.slice(tab + 1).trim());
    }
    return answers;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const policyLookup = (command: string): Lookup => {
  const reason = reasonOf(command) ?? "";
  if (reason.includes("is ambiguous in lldb")) return "ambiguous";
  return reason.includes("is not an lldb command") ? "unknown" : "resolved";
};

const prefixes = (name: string): string[] => Array.from(name, (_, i) => name.slice(0, i + 1));
const LETTERS = "abcdefghijklmnopqrstuvwxyz".split("");

describe.skipIf(!LLDB)("lldb abbreviations agree with the installed lldb", () => {
  it("resolves every prefix of every command, and every two-letter word, as lldb does", () => {
    const words = new Set([...LETTERS, ...LETTERS.flatMap((a) => LETTERS.map((b) => a + b))]);
    for (const name of LLDB_16_COMMANDS) for (const prefix of prefixes(name)) words.add(prefix);
    const lldb = askLldb("lookup", [...words]);
    expect(lldb.size).toBe(words.size);
    const disagreements = [...words].filter((word) => lldb.get(word) !== policyLookup(word));
    expect(disagreements).toEqual([]);
  });

  it("resolves every prefix of every subcommand the policy tells apart, as lldb does", () => {
    // The policy's own tables: commands it refuses as a whole never reach a subcommand.
    const groups = new Map<string, string[]>();
    for (let level = LLDB_16_COMMANDS; level.length > 0;) {
      const tables = level.filter((path) => reasonOf(path)?.includes("needs a subcommand"));
      const answers = askLldb("subcommands", tables);
      for (const path of tables) groups.set(path, (answers.get(path) ?? "").split(" ").filter(Boolean));
      level = tables.flatMap((path) => (groups.get(path) ?? []).map((name) => `${path} ${name}`));
    }
    expect([...groups.keys()]).toEqual(expect.arrayContaining(["thread", "target modules", "target modules dump", "image"]));
    const words = new Set<string>();
    for (const [group, names] of groups) {
      for (const name of names) for (const prefix of prefixes(name)) words.add(`${group} ${prefix}`);
      for (const letter of LETTERS) words.add(`${group} ${letter}`);
    }
    const lldb = askLldb("lookup", [...words]);
    expect(lldb.size).toBe(words.size);
    const disagreements = [...words].filter((word) => lldb.get(word) !== policyLookup(word));
    expect(disagreements).toEqual([]);
  });

  it("knows every option lldb has for the commands whose options it tells apart", () => {
    // Reading "-o" or "-cou" as lldb does needs all of a command's options, refused ones too.
    const commands = ["thread backtrace", "thread info", "thread list", "thread select", "thread siginfo",
      "frame select", "frame info", "frame variable", "frame diagnose", "target variable", "target list",
      "register read", "memory read", "memory region", "memory find", "process status", "source list", "source info",
      "statistics dump", "breakpoint list", "watchpoint list", "type lookup", "session history",
      "target modules dump symtab", "target modules dump line-table", "target modules show-unwind", "expression"];
    const options = askLldb("options", commands);
    expect(options.get("memory read")).toContain("o:outfile");
    const unknown = commands.flatMap((command) =>
      (options.get(command) ?? "").split(" ").filter(Boolean).flatMap((option) => {
        const [short = "", long = ""] = option.split(":");
        const spellings = [`--${long}=1`, ...(short ? [`-${short}`] : [])];
        return spellings.filter((spelled) => reasonOf(`${command} ${spelled} -- 0`)?.includes(NOT_READ_ONLY));
      }).map((spelled) => `${command} ${spelled}`));
    expect(unknown).toEqual([]);
  });

  it("allows an abbreviation exactly when it allows the command lldb expands it to", () => {
    const abbreviations = new Set<string>();
    // "call" is "expression --" to lldb, but its purpose is calling functions: the policy refuses it whole.
    const commands = [...LLDB_ALLOWED, ...LLDB_REFUSED.map(([command]) => command)]
      .filter((command) => command !== "" && !/[`\n]/.test(command) && !command.startsWith("call"));
    for (const command of commands) {
      const words = command.split(" ");
      for (const length of [1, 2, 3, 4]) abbreviations.add(words.map((w, i) => (i < 3 ? w.slice(0, length) : w)).join(" "));
    }
    const resolved = askLldb("resolve", [...abbreviations]);
    const differences = [...abbreviations].flatMap((abbreviation) => {
      // lldb names some nested commands by their last word only ("demangle"); those are not comparable.
      const expansion = resolved.get(abbreviation) ?? "";
      if (expansion === abbreviation || !LLDB_16_COMMANDS.includes(expansion.split(" ")[0] ?? "")) return [];
      const [abbreviated, expanded] = [checkCommand("lldb", abbreviation), checkCommand("lldb", expansion)];
      return abbreviated.allowed === expanded.allowed ? [] : [`${abbreviation} -> ${expansion}`];
    });
    expect(differences).toEqual([]);
  });
});
