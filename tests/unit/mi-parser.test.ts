import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCString, parseMiLine, type MiRecord } from "../../src/debuggers/gdb/mi-parser.js";

/** Parses `line` and fails the test unless it is a record of `type`, narrowed for the assertions. */
function parseAs<T extends MiRecord["type"]>(line: string, type: T): Extract<MiRecord, { type: T }> {
  const record = parseMiLine(line);
  if (record.type !== type) throw new Error(`expected a ${type} record, got ${JSON.stringify(record)}`);
  return record as Extract<MiRecord, { type: T }>;
}

/*
 * Lines printed by GNU gdb 13.1 (Debian 13.1-3), x86-64, LANG=C.UTF-8, captured with e.g.
 *   printf '1-exec-run\n2-interpreter-exec console "bt"\n3-stack-list-frames\n...' \
 *     | gdb --interpreter=mi3 -nx -q ./prog
 * where prog.c (gcc -g -O0) passes the label "h\xc3\xa9llo\t\"q\"\n" down a recursion and raises
 * SIGSEGV. Kept verbatim: String.raw leaves gdb's backslashes as they were on the wire.
 */
const captured = {
  threadGroupAdded: String.raw`=thread-group-added,id="i1"`,
  readingSymbols: String.raw`~"Reading symbols from ./prog...\n"`,
  libthreadDb: String.raw`~"Using host libthread_db library \"/lib/x86_64-linux-gnu/libthread_db.so.1\".\n"`,
  // gdb split one sentence over two console records.
  programSplit: [String.raw`~"\nProgram"`, String.raw`~" received signal SIGSEGV, Segmentation fault.\n"`],
  noSourceLog: String.raw`&"44\t./nptl/pthread_kill.c: No such file or directory.\n"`,
  libraryLoaded: String.raw`=library-loaded,id="/lib64/ld-linux-x86-64.so.2",target-name="/lib64/ld-linux-x86-64.so.2",host-name="/lib64/ld-linux-x86-64.so.2",symbols-loaded="0",thread-group="i1",ranges=[{from="0x00007ffff7fcb060",to="0x00007ffff7ff0111"}]`,
  running: String.raw`1^running`,
  runningAsync: String.raw`*running,thread-id="all"`,
  stopped: String.raw`*stopped,reason="signal-received",signal-name="SIGSEGV",signal-meaning="Segmentation fault",frame={addr="0x00007ffff7e5feec",func="__pthread_kill_implementation",args=[{name="threadid",value="<optimized out>"},{name="signo",value="11"},{name="signo@entry",value="11"},{name="no_tid",value="0"},{name="no_tid@entry",value="0"}],file="./nptl/pthread_kill.c",fullname="./nptl/./nptl/pthread_kill.c",line="44",arch="i386:x86-64"},thread-id="1",stopped-threads="all",core="1"`,
  btFrame3: String.raw`~"#3  0x0000555555555168 in depth (n=0, label=0x555555556004 \"h\303\251llo\\t\\\"q\\\"\\n\") at prog.c:4\n"`,
  btDone: String.raw`2^done`,
  stackListFrames: String.raw`3^done,stack=[frame={level="0",addr="0x00007ffff7e5feec",func="__pthread_kill_implementation",file="./nptl/pthread_kill.c",fullname="./nptl/./nptl/pthread_kill.c",line="44",arch="i386:x86-64"},frame={level="1",addr="0x00007ffff7e5ff4f",func="__pthread_kill_internal",file="./nptl/pthread_kill.c",fullname="./nptl/./nptl/pthread_kill.c",line="78",arch="i386:x86-64"},frame={level="2",addr="0x00007ffff7e10fb2",func="__GI_raise",file="../sysdeps/posix/raise.c",fullname="./signal/../sysdeps/posix/raise.c",line="26",arch="i386:x86-64"},frame={level="3",addr="0x0000555555555168",func="depth",file="prog.c",fullname="/tmp/mic/prog.c",line="4",arch="i386:x86-64"},frame={level="4",addr="0x000055555555517c",func="depth",file="prog.c",fullname="/tmp/mic/prog.c",line="5",arch="i386:x86-64"},frame={level="5",addr="0x000055555555517c",func="depth",file="prog.c",fullname="/tmp/mic/prog.c",line="5",arch="i386:x86-64"},frame={level="6",addr="0x00005555555551c0",func="main",file="prog.c",fullname="/tmp/mic/prog.c",line="10",arch="i386:x86-64"}]`,
  stackListArguments: String.raw`6^done,stack-args=[frame={level="2",args=[{name="sig",value="11"}]},frame={level="3",args=[{name="n",value="0"},{name="label",value="0x555555556004 \"h\303\251llo\\t\\\"q\\\"\\n\""}]},frame={level="6",args=[]}]`,
  threadInfo: String.raw`4^done,threads=[{id="1",target-id="Thread 0x7ffff7dd2740 (LWP 3514)",name="prog",frame={level="0",addr="0x00007ffff7e5feec",func="__pthread_kill_implementation",args=[{name="threadid",value="<optimized out>"}],file="./nptl/pthread_kill.c",fullname="./nptl/./nptl/pthread_kill.c",line="44",arch="i386:x86-64"},state="stopped",core="1"}],current-thread-id="1"`,
  // 5-data-evaluate-expression "\"h\303\251llo\""
  evaluateUtf8: String.raw`5^done,value="\"h\303\251llo\""`,
  noSymbol: String.raw`7^error,msg="No symbol \"greeting\" in current context."`,
  undefinedCommand: String.raw`8^error,msg="Undefined MI command: no-such-command",code="undefined-command"`,
  exit: String.raw`10^exit`,
  // 4-interpreter-exec console "echo a\\a b\\b e\\e f\\f v\\v r\\r one\\001 del\\177 \\303\\251 ff\\377\\n"
  // (gdb's echo knows no \e, so "ee"; gdb writes \v as \013).
  echoControls: String.raw`~"a\a b\b ee f\f v\013 r\r one\001 del\177 \303\251 ff\377\n"`,
  // 4-interpreter-exec console "echo \\033[1m \\a\\n"
  echoEscape: String.raw`~"\e[1m \a\n"`,
  // "list 1,2" of a file whose first line is "/* héllo wörld — ünïcode ✓ */"
  listUtf8: String.raw`~"1\t/* h\303\251llo w\303\266rld \342\200\224 \303\274n\303\257code \342\234\223 */\n"`,
  // a breakpoint on a static function defined in two files, then -break-commands 1 "silent" "bt"
  breakList: String.raw`8^done,BreakpointTable={nr_rows="1",nr_cols="6",hdr=[{width="7",alignment="-1",col_name="number",colhdr="Num"},{width="14",alignment="-1",col_name="type",colhdr="Type"}],body=[bkpt={number="1",type="breakpoint",disp="keep",enabled="y",addr="<MULTIPLE>",times="1",script={"silent","bt"},original-location="helper",locations=[{number="1.1",enabled="y",addr="0x0000555555555150",func="helper",file="a.c",fullname="/tmp/mic/a.c",line="1",thread-groups=["i1"]},{number="1.2",enabled="y",addr="0x0000555555555176",func="helper",file="b.c",fullname="/tmp/mic/b.c",line="3",thread-groups=["i1"]}]}]}`,
  emptyBreakList: String.raw`2^done,BreakpointTable={nr_rows="0",nr_cols="6",hdr=[{width="7",alignment="-1",col_name="number",colhdr="Num"}],body=[]}`,
  inferiorOutput: "inferior says hi",
};

describe("parseMiLine on records gdb printed", () => {
  it("recognises the prompt, which gdb prints with a trailing space", () => {
    expect(parseMiLine("(gdb) ")).toEqual({ type: "prompt" });
    expect(parseMiLine("(gdb)")).toEqual({ type: "prompt" });
  });

  it("decodes console and log stream records with their escapes", () => {
    expect(parseMiLine(captured.readingSymbols)).toEqual({
      type: "stream",
      channel: "console",
      text: "Reading symbols from ./prog...\n",
    });
    expect(parseAs(captured.libthreadDb, "stream").text).toBe(
      'Using host libthread_db library "/lib/x86_64-linux-gnu/libthread_db.so.1".\n',
    );
    expect(parseMiLine(captured.noSourceLog)).toEqual({
      type: "stream",
      channel: "log",
      text: "44\t./nptl/pthread_kill.c: No such file or directory.\n",
    });
    expect(captured.programSplit.map((line) => parseAs(line, "stream").text).join("")).toBe(
      "\nProgram received signal SIGSEGV, Segmentation fault.\n",
    );
  });

  it("decodes every control-character escape gdb writes", () => {
    expect(parseAs(captured.echoControls, "stream").text).toBe(
      "a\x07 b\b ee f\f v\v r\r one\x01 del\x7f é ff\xff\n",
    );
    expect(parseAs(captured.echoEscape, "stream").text).toBe("\x1b[1m \x07\n");
  });

  it("decodes runs of octal escapes as UTF-8", () => {
    expect(parseAs(captured.listUtf8, "stream").text).toBe("1\t/* héllo wörld — ünïcode ✓ */\n");
    expect(parseAs(captured.evaluateUtf8, "result").results).toEqual({ value: '"héllo"' });
  });

  it("tells an escaped backslash from an escape", () => {
    // gdb's own C escapes in the printed value (\t, \", \n) reach us as text, with the backslash escaped.
    expect(parseAs(captured.btFrame3, "stream").text).toBe(
      '#3  0x0000555555555168 in depth (n=0, label=0x555555556004 "héllo\\t\\"q\\"\\n") at prog.c:4\n',
    );
  });

  it("parses *stopped with its nested frame tuple and args list", () => {
    const stopped = parseAs(captured.stopped, "async");
    expect(stopped).toMatchObject({ token: null, kind: "exec", asyncClass: "stopped" });
    expect(stopped.results).toEqual({
      reason: "signal-received",
      "signal-name": "SIGSEGV",
      "signal-meaning": "Segmentation fault",
      frame: {
        addr: "0x00007ffff7e5feec",
        func: "__pthread_kill_implementation",
        args: [
          { name: "threadid", value: "<optimized out>" },
          { name: "signo", value: "11" },
          { name: "signo@entry", value: "11" },
          { name: "no_tid", value: "0" },
          { name: "no_tid@entry", value: "0" },
        ],
        file: "./nptl/pthread_kill.c",
        fullname: "./nptl/./nptl/pthread_kill.c",
        line: "44",
        arch: "i386:x86-64",
      },
      "thread-id": "1",
      "stopped-threads": "all",
      core: "1",
    });
  });

  it("parses notify records, with a list of tuples", () => {
    expect(parseMiLine(captured.threadGroupAdded)).toEqual({
      type: "async",
      token: null,
      kind: "notify",
      asyncClass: "thread-group-added",
      results: { id: "i1" },
    });
    const loaded = parseAs(captured.libraryLoaded, "async");
    expect(loaded.asyncClass).toBe("library-loaded");
    expect(loaded.results["ranges"]).toEqual([{ from: "0x00007ffff7fcb060", to: "0x00007ffff7ff0111" }]);
  });

  it("keeps the values of a list of results, stack=[frame={..},frame={..}]", () => {
    const frames = parseAs(captured.stackListFrames, "result");
    expect(frames).toMatchObject({ token: 3, resultClass: "done" });
    const stack = frames.results["stack"];
    expect(Array.isArray(stack) && stack.length).toBe(7);
    expect(stack).toContainEqual({
      level: "3",
      addr: "0x0000555555555168",
      func: "depth",
      file: "prog.c",
      fullname: "/tmp/mic/prog.c",
      line: "4",
      arch: "i386:x86-64",
    });
  });

  it("parses lists nested in a list of results, down to an empty one", () => {
    expect(parseAs(captured.stackListArguments, "result").results).toEqual({
      "stack-args": [
        { level: "2", args: [{ name: "sig", value: "11" }] },
        {
          level: "3",
          args: [
            { name: "n", value: "0" },
            { name: "label", value: '0x555555556004 "héllo\\t\\"q\\"\\n"' },
          ],
        },
        { level: "6", args: [] },
      ],
    });
    expect(parseAs(captured.threadInfo, "result").results).toMatchObject({
      threads: [{ id: "1", name: "prog", frame: { level: "0", args: [{ name: "threadid" }] }, state: "stopped" }],
      "current-thread-id": "1",
    });
  });

  it("parses ^error with and without a code", () => {
    expect(parseMiLine(captured.noSymbol)).toEqual({
      type: "result",
      token: 7,
      resultClass: "error",
      results: { msg: 'No symbol "greeting" in current context.' },
    });
    expect(parseAs(captured.undefinedCommand, "result").results).toEqual({
      msg: "Undefined MI command: no-such-command",
      code: "undefined-command",
    });
  });

  it("parses records with no results", () => {
    expect(parseMiLine(captured.running)).toEqual({ type: "result", token: 1, resultClass: "running", results: {} });
    expect(parseMiLine(captured.btDone)).toEqual({ type: "result", token: 2, resultClass: "done", results: {} });
    expect(parseMiLine(captured.exit)).toEqual({ type: "result", token: 10, resultClass: "exit", results: {} });
    expect(parseAs(captured.runningAsync, "async").results).toEqual({ "thread-id": "all" });
  });

  it("parses tuples nested in lists nested in tuples, -break-list's table", () => {
    const table = parseAs(captured.breakList, "result").results["BreakpointTable"];
    expect(table).toMatchObject({
      nr_rows: "1",
      hdr: [{ col_name: "number" }, { col_name: "type" }],
      body: [
        {
          number: "1",
          addr: "<MULTIPLE>",
          locations: [
            { number: "1.1", file: "a.c", "thread-groups": ["i1"] },
            { number: "1.2", file: "b.c", "thread-groups": ["i1"] },
          ],
        },
      ],
    });
    expect(parseAs(captured.emptyBreakList, "result").results["BreakpointTable"]).toMatchObject({ body: [] });
  });

  it("reads gdb's off-grammar tuple of bare values, script={...}, as a list", () => {
    const table = parseAs(captured.breakList, "result").results["BreakpointTable"];
    expect(table).toMatchObject({ body: [{ script: ["silent", "bt"] }] });
  });

  it("returns raw inferior output as unknown", () => {
    expect(parseMiLine(captured.inferiorOutput)).toEqual({ type: "unknown", line: "inferior says hi" });
  });
});

describe("parseMiLine on hand-written edge cases", () => {
  it("keeps every value of a key repeated in a tuple, in order", () => {
    expect(parseAs('^done,stack={frame={level="0"},frame={level="1"},frame={level="2"}}', "result").results).toEqual({
      stack: { frame: [{ level: "0" }, { level: "1" }, { level: "2" }] },
    });
    expect(parseAs('=x,a="1",b="2",a="3"', "async").results).toEqual({ a: ["1", "3"], b: "2" });
  });

  it("does not mistake a list value for the values of a repeated key", () => {
    expect(parseAs('^done,a=["x"],a=["y"],a=[]', "result").results).toEqual({ a: [["x"], ["y"], []] });
  });

  it("parses empty tuples and lists, and lists of lists", () => {
    expect(parseAs('^done,t={},l=[],n=[[],{},["a",["b"]]]', "result").results).toEqual({
      t: {},
      l: [],
      n: [[], {}, ["a", ["b"]]],
    });
  });

  it("reads tokens on result and async records", () => {
    expect(parseAs('12^done,value="1"', "result").token).toBe(12);
    expect(parseAs("0^done", "result").token).toBe(0);
    expect(parseAs('7*stopped,reason="exited-normally"', "async").token).toBe(7);
    expect(parseAs('+download,section=".text"', "async")).toMatchObject({ kind: "status", token: null });
  });

  it("decodes the target stream", () => {
    expect(parseMiLine('@"remote says \\"hi\\"\\n"')).toEqual({
      type: "stream",
      channel: "target",
      text: 'remote says "hi"\n',
    });
  });

  it("tolerates a trailing carriage return on every kind of line", () => {
    expect(parseMiLine("(gdb) \r")).toEqual({ type: "prompt" });
    expect(parseAs('~"x\\n"\r', "stream").text).toBe("x\n");
    expect(parseAs('3^done,a="1"\r', "result").results).toEqual({ a: "1" });
    expect(parseMiLine("inferior\r")).toEqual({ type: "unknown", line: "inferior" });
  });

  it("keeps a key named __proto__ as data", () => {
    const results = parseAs('^done,__proto__={polluted="yes"}', "result").results;
    expect(Object.keys(results)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(results)).toBeNull();
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it.each([
    ["a lone byte that is not UTF-8", String.raw`"\377"`, "\xff"],
    ["UTF-8 followed by a stray byte", String.raw`"\303\251\377"`, "é\xff"],
    ["a truncated sequence", String.raw`"\342\234!"`, "\xe2\x9c!"],
    ["an overlong form", String.raw`"\300\257"`, "\xc0\xaf"],
    ["an overlong three-byte form", String.raw`"\340\200\257"`, "\xe0\x80\xaf"],
    ["a code point past U+10FFFF", String.raw`"\364\220\200\200"`, "\xf4\x90\x80\x80"],
    ["an encoded surrogate", String.raw`"\355\240\200"`, "\xed\xa0\x80"],
    ["a four-byte character", String.raw`"\360\237\222\245"`, "💥"],
    ["escapes of ASCII", String.raw`"\101\102"`, "AB"],
    ["a short octal escape, as C allows", String.raw`"\0x\12"`, "\0x\n"],
    ["characters gdb did not escape", '"héllo ✓"', "héllo ✓"],
  ])("decodes %s, else latin1 per byte", (_case, cString, expected) => {
    expect(parseAs(`~${cString}`, "stream").text).toBe(expected);
  });

  it("decodes a long run of escapes in one pass", () => {
    const count = 200_000;
    const line = `~"${String.raw`\342\234\223`.repeat(count)}"`;
    expect(parseAs(line, "stream").text).toBe("✓".repeat(count));
  });

  it.each([
    "",
    " ",
    "(gdb",
    "(gdb) x",
    "1(gdb) ",
    "^",
    "^done,",
    "^done,a",
    "^done,a=",
    '^done,a="1',
    '^done,a="1"}',
    '^done,a="1",',
    '^done a="1"',
    '^done,="1"',
    "^done,a=1",
    '^done,a={b="1"',
    '^done,a=["1"',
    '^done,a=["1",]',
    "^bogus",
    '^done,a="\\',
    '^done,a="\\400"',
    "*",
    '*,a="1"',
    '~"unterminated',
    '~"x"trailing',
    '~unquoted',
    '12~"a token on a stream"',
    "Segmentation fault (core dumped)",
  ])("returns unknown for the malformed line %j", (line) => {
    expect(parseMiLine(line)).toEqual({ type: "unknown", line });
  });

  it("returns unknown, without overflowing the stack, for absurdly deep nesting", () => {
    const line = `^done,a=${"[".repeat(100_000)}`;
    expect(parseMiLine(line)).toEqual({ type: "unknown", line });
    const deepButFine = `^done,a=${"[".repeat(100)}${"]".repeat(100)}`;
    expect(parseAs(deepButFine, "result").token).toBeNull();
  });
});

describe("parseCString", () => {
  it("starts at the opening quote and ends just past the closing one", () => {
    const input = 'msg="say \\"hi\\"",code="x"';
    expect(parseCString(input, 4)).toEqual({ value: 'say "hi"', end: 16 });
    expect(input[16]).toBe(",");
    expect(parseCString('""', 0)).toEqual({ value: "", end: 2 });
  });

  it("throws a SyntaxError where there is no complete c-string", () => {
    expect(() => parseCString('a="1"', 0)).toThrow(SyntaxError);
    expect(() => parseCString('"open', 0)).toThrow(SyntaxError);
    expect(() => parseCString('"ends in a backslash\\', 0)).toThrow(SyntaxError);
  });
});

/*
 * A real gdb, fed MI commands on stdin as the session feeds them (`-batch` would make gdb ignore
 * stdin, so `-gdb-exit` ends the run instead), against a core of a two-thread program.
 */
describe("parseMiLine on a live gdb", () => {
  let workDir: string;
  let lines: string[];

  beforeAll(() => {
    workDir = mkdtempSync(join(tmpdir(), "mi-parser-"));
    const source = join(workDir, "crash.c");
    const program = join(workDir, "crash");
    const core = join(workDir, "crash.core");
    writeFileSync(
      source,
      String.raw`#include <pthread.h>
#include <unistd.h>

static const char *greeting = "h\xc3\xa9llo \xe2\x9c\x93\t\"quoted\"\n";

static void *idle(void *arg) {
  (void)arg;
  for (;;) pause();
  return 0;
}

static int crash(const char *label, int depth) {
  volatile int *nowhere = 0;
  return depth > 0 ? crash(label, depth - 1) : *nowhere + label[0];
}

int main(void) {
  pthread_t thread;
  pthread_create(&thread, 0, idle, 0);
  usleep(10000);
  return crash(greeting, 2);
}
`,
    );
    execFileSync("gcc", ["-g", "-O0", "-pthread", "-o", program, source]);
    execFileSync("gdb", ["-nx", "-q", "-batch", "-ex", "run", "-ex", `generate-core-file ${core}`, program], {
      stdio: "ignore",
    });
    const commands = [
      "1-thread-info",
      "2-stack-list-frames",
      "3-stack-list-arguments 1",
      '4-interpreter-exec console "thread apply all bt full"',
      "5-data-evaluate-expression greeting",
      "6-no-such-command",
      "7-gdb-exit",
    ];
    const output = execFileSync(
      "gdb",
      // sevenbit-strings makes gdb escape every non-ASCII byte; without it some reach us raw.
      ["--interpreter=mi3", "-nx", "-q", "-iex", "set print sevenbit-strings on", program, core],
      {
        input: commands.join("\n") + "\n",
        encoding: "utf8",
        env: { ...process.env, LC_ALL: "C.UTF-8" },
        stdio: ["pipe", "pipe", "ignore"],
        timeout: 60_000,
      },
    );
    lines = output.split("\n").slice(0, -1);
  });

  afterAll(() => {
    rmSync(workDir, { recursive: true, force: true });
  });

  it("parses every line it prints as MI", () => {
    const records = lines.map(parseMiLine);
    expect(records.filter((record) => record.type === "unknown")).toEqual([]);
    expect(records).toContainEqual({ type: "prompt" });
    expect(records).toContainEqual(
      expect.objectContaining({ type: "async", kind: "notify", asyncClass: "thread-group-added" }),
    );
  });

  it("answers every command with a result record of the right class", () => {
    const results = lines.map(parseMiLine).filter((record) => record.type === "result");
    expect(results.map((record) => [record.token, record.resultClass])).toEqual([
      [1, "done"],
      [2, "done"],
      [3, "done"],
      [4, "done"],
      [5, "done"],
      [6, "error"],
      [7, "exit"],
    ]);
  });

  it("yields structured threads, frames and UTF-8 values", () => {
    const results = new Map(
      lines
        .map(parseMiLine)
        .flatMap((record) => (record.type === "result" ? [[record.token, record.results] as const] : [])),
    );
    expect(results.get(1)?.["threads"]).toHaveLength(2);
    expect(results.get(2)?.["stack"]).toMatchObject([
      { level: "0", func: "crash" },
      { level: "1", func: "crash" },
      { level: "2", func: "crash" },
      { level: "3", func: "main" },
    ]);
    expect(results.get(3)?.["stack-args"]).toContainEqual({ level: "3", args: [] });
    expect(results.get(5)?.["value"]).toMatch(/ "héllo ✓\\t\\"quoted\\"\\n"$/);
    expect(results.get(6)).toEqual({ msg: "Undefined MI command: no-such-command", code: "undefined-command" });
  });

  it("yields the console text of a backtrace of every thread", () => {
    const console = lines
      .map(parseMiLine)
      .flatMap((record) => (record.type === "stream" && record.channel === "console" ? [record.text] : []))
      .join("");
    expect(console).toMatch(/^Thread 2 \(Thread 0x[0-9a-f]+ \(LWP \d+\)\):$/m);
    expect(console).toMatch(/^#0 {2}0x[0-9a-f]+ in crash \(label=0x[0-9a-f]+ "héllo ✓\\t\\"quoted\\"\\n", depth=0\) at .*crash\.c:14$/m);
    expect(console).toMatch(/^ {8}nowhere = 0x0$/m);
  });
});
