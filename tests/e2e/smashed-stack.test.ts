/**
 * Stack buffer overflows without a stack protector (issue: real-world accuracy, class 3), each a
 * real program compiled at test time, its core written by gdb at the fault:
 * - the function's `ret` faults on the return address the overflow wrote, here input text ('AAAA…');
 * - the overflow wrote six bytes and a NUL over the return address, a canonical address that maps
 *   nothing: the `ret` completes, the function is gone from the unwind, and the fault is at the pc;
 * - a copy with no bound runs from a buffer on the stack up through every frame and off the stack;
 * - a count from a corrupt header makes a loop write backwards from a buffer's end, down off the
 *   bottom of the stack: not a stack overflow (nothing recursed, the stack pointer is far above).
 * Each is a stack buffer overflow, not "a pointer that was never valid" or a jump to a bad
 * address, in the function that had the buffer, and the verdict leads with the bytes written.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { crashC, type Dumped } from "../helpers/dumped.js";
import { movedAway } from "../helpers/dump-edits.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-smash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SOURCE = `/* Greets a user by the name on its command line, copied into a fixed buffer. */
#include <stdio.h>
#include <string.h>

static void greet(const char *name)
{
    char buf[16];
    strcpy(buf, name);
    printf("hello %s\\n", buf);
}

int main(int argc, char **argv)
{
    greet(argc > 1 ? argv[1] : "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    return 0;
}
`;

// Six bytes of the name and strcpy's NUL land on the return address: 0x0000424242424242.
const RETURN_SOURCE = SOURCE.replace('"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"', '"AAAAAAAAAAAAAAAAAAAAAAAABBBBBB"');

const HEADER_SOURCE = `/* Reads the first header line of a request into a fixed buffer, stopping only at a newline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static size_t read_header(const char *request, char *name_out)
{
    char line[128];
    size_t length = 0;
    while (request[length] != '\\n' && request[length] != '\\0') {
        line[length] = request[length];
        length++;
    }
    line[length] = '\\0';
    strncpy(name_out, line, 31);
    return length;
}

static int handle_request(const char *request)
{
    char name[32];
    size_t length = read_header(request, name);
    printf("header %s (%zu bytes)\\n", name, length);
    return 0;
}

int main(void)
{
    /* A request of a megabyte with no newline in it. */
    size_t size = 1 << 20;
    char *request = malloc(size);
    memset(request, 'x', size - 1);
    request[size - 1] = '\\0';
    return handle_request(request);
}
`;

const BACKWARDS_SOURCE = `/* Writes a number's digits backwards from the end of a field; a length taken from a corrupt
 * header makes it write far below the field's start. */
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) static void write_digits_backwards(char *end, size_t count, unsigned value)
{
    for (size_t i = 0; i < count; i++) {
        end[-(long)i] = (char)('0' + value % 10);
        value = value / 10 + 7;
    }
}

static int encode_field(size_t declared_length)
{
    char field[64];
    write_digits_backwards(field + sizeof field - 1, declared_length, 12345);
    return field[0];
}

int main(void)
{
    printf("%d\\n", encode_field((size_t)1 << 28));
    return 0;
}
`;

let exe: string;
let core: string;
let backwards: Dumped;
/* main's own buffer, one string too long by exactly its terminator: the NUL clears the low byte of
 * main's return address, which then points into libc's code where no call returns. */
const MAIN_SOURCE = `/* Greets the visitor named on the command line; the name is copied into a buffer on main's stack. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    char name[16];
    strcpy(name, argc > 1 ? argv[1] : "visitor-from-the-north!!");
    printf("hello %s\\n", name);
    return 0;
}
`;

let returned: Dumped;
let intoCode: Dumped;
let header: Dumped;
beforeAll(() => {
  ({ exe, core } = crashC(dir, "greet", SOURCE, ["-g", "-O0", "-fno-stack-protector"]));
  returned = crashC(dir, "welcome", RETURN_SOURCE, ["-g", "-O0", "-fno-stack-protector"]);
  intoCode = crashC(dir, "visitor", MAIN_SOURCE, ["-g", "-O0", "-fno-stack-protector", "-Wno-stringop-overflow"]);
  header = crashC(dir, "header", HEADER_SOURCE, ["-g", "-O2", "-fno-stack-protector"]);
  backwards = crashC(dir, "field", BACKWARDS_SOURCE, ["-g", "-O2", "-fno-stack-protector"]);
});

describe("a return address overwritten by input", () => {
  it.each(["gdb", "lldb"])("is a stack buffer overflow in the function that returned, led by the text bytes (%s)", async (debuggerName) => {
    const run = await runCli(["triage", core, "--exe", exe, "--json", "--debugger", debuggerName]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout);
    expect(crash).toMatchObject({ kind: "stack-buffer-overflow", signal: "SIGSEGV", signalCode: "SI_KERNEL", culprit: { function: "greet" } });
    expect(crash.message).toBe('greet returned to 0x4141414141414141, which is no address: its return address on the stack was overwritten with the bytes "AAAAAAAA", text written past a buffer on the stack (input, not a pointer)');
  }, 60_000);

  it("the offline analysis confirms it from the word the ret popped and says how to fix it", async () => {
    const run = await runCli(["analyze", core, "--exe", exe, "--provider", "offline", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.conclusion.summary).toMatch(/^`greet` \(greet\.c:\d+\) returned through an overwritten return address\. The word `ret` popped is 0x4141414141414141 \(E\d+\), not a canonical address/);
    expect(report.conclusion.summary).not.toMatch(/never valid|null/i);
    expect(report.conclusion.confidence).toBeGreaterThanOrEqual(0.8);
    expect(report.conclusion.recommendations.join(" ")).toMatch(/-fstack-protector-strong/);
    expect(report.hypotheses[0]).toMatchObject({ status: "confirmed" });
  }, 120_000);
});

describe("a return address overwritten with a canonical address that maps nothing", () => {
  it.each(["gdb", "lldb"])("is a stack buffer overflow in the function that returned, found below the stack pointer (%s)", async (debuggerName) => {
    const run = await runCli(["triage", returned.core, "--exe", returned.exe, "--json", "--debugger", debuggerName]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout);
    // Not a bad jump: the pc is the word `ret` popped, still just below the stack pointer.
    expect(crash).toMatchObject({ kind: "stack-buffer-overflow", signal: "SIGSEGV", signalCode: "SEGV_MAPERR", faultAddress: "0x424242424242", culprit: { function: "greet", file: expect.stringMatching(/welcome\.c$/) } });
    // Placed at its `ret`, the closing brace, as a stack protector's report would be.
    expect(crash.culprit.line).toBe(10);
    expect(crash.message).toBe('greet returned to 0x0000424242424242, which is no address: its return address on the stack was overwritten with the bytes "BBBBBB" and the NUL that ends a string: a string copied past a buffer on the stack (input, not a pointer)');
  }, 60_000);

  it("the offline analysis confirms it from the pc and the word below the stack pointer", async () => {
    const run = await runCli(["analyze", returned.core, "--exe", returned.exe, "--provider", "offline", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.conclusion.summary).toMatch(/^`greet` \(welcome\.c:10\) returned through an overwritten return address\. The pc 0x0000424242424242 \(E\d+\) is the word just below the stack pointer \(E\d+\): `ret` popped it, and it maps nothing\. It is "BBBBBB"/);
    expect(report.conclusion.confidence).toBeGreaterThanOrEqual(0.8);
    expect(report.hypotheses[0]).toMatchObject({ status: "confirmed" });
  }, 120_000);
});

describe("main's return address with its low byte cleared by a string's NUL, which returns into libc's code", () => {
  it.each(["gdb", "lldb"])("is a stack buffer overflow in main, not a NULL write where it landed (%s)", async (debuggerName) => {
    const run = await runCli(["triage", intoCode.core, "--exe", intoCode.exe, "--json", "--debugger", debuggerName]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout);
    expect(crash).toMatchObject({ kind: "stack-buffer-overflow", signal: "SIGSEGV", culprit: { function: "main" } });
    expect(crash.message).toMatch(/^main returned to 0x[0-9a-f]{14}00 inside __libc_start_call_main, where no call returns \(the code before it ends with no call\): its return address on the stack was overwritten and still points into code; the saved frame pointer below it holds the bytes "-north!!"/);
  }, 60_000);

  it("from another machine, where libc's code is not here, is decided by the text over the saved frame pointer", async () => {
    const away = path.join(dir, "visitor-away.core");
    writeFileSync(away, movedAway(readFileSync(intoCode.core), ["/usr/lib/x86_64-linux-gnu/", "/lib/x86_64-linux-gnu/", "/lib64/"]));
    const run = await runCli(["triage", away, "--exe", intoCode.exe, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout);
    expect(crash).toMatchObject({ kind: "stack-buffer-overflow", culprit: { function: "main" } });
    expect(crash.message).toMatch(/^main returned to 0x[0-9a-f]+ inside libc\.so\.6, in a library whose code here is not the one that ran: .*"-north!!"/);
  }, 60_000);

  it("the offline analysis confirms it from the pc and the word below the stack pointer", async () => {
    const run = await runCli(["analyze", intoCode.core, "--exe", intoCode.exe, "--provider", "offline", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.conclusion.summary).toMatch(/^`main` \(visitor\.c:\d+\) returned through an overwritten return address\. The pc 0x[0-9a-f]{14}00 \(E\d+\) is the word just below the stack pointer \(E\d+\): `ret` popped it, and it is no return address a call left\./);
    expect(report.hypotheses[0]).toMatchObject({ status: "confirmed" });
  }, 120_000);
});

describe("a copy that runs off the top of the stack", () => {
  it.each(["gdb", "lldb"])("is a stack buffer overflow in the function that wrote, with how far it went and what it wrote (%s)", async (debuggerName) => {
    const run = await runCli(["triage", header.core, "--exe", header.exe, "--json", "--debugger", debuggerName]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout);
    expect(crash).toMatchObject({ kind: "stack-buffer-overflow", signal: "SIGSEGV", access: "write", culprit: { function: "read_header", line: 11 } });
    expect(crash.message).toMatch(/^read_header wrote [\d,]+ bytes past the start of a buffer at 0x[0-9a-f]+ \(the stack pointer( \+ [\d,]+)?\), and ran off the top of the stack at 0x[0-9a-f]+000: every frame above read_header was overwritten with the bytes "xxxxxxxx"/);
    // Past the frame that wrote, a debugger unwinds the data written: not listed.
    const text = await runCli(["triage", header.core, "--exe", header.exe, "--debugger", debuggerName]);
    expect(text.stdout).toMatch(/Stack \(1 frame\):/);
  }, 60_000);

  it("the offline analysis confirms the fault is the stack's top, from the stack's extent and the stack pointer", async () => {
    const run = await runCli(["analyze", header.core, "--exe", header.exe, "--provider", "offline", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.conclusion.summary).toMatch(/^`read_header` \(header\.c:11\) wrote past the end of a buffer on its stack and kept going up to the top of the stack\. The stack pointer 0x[0-9a-f]+ \(E\d+\) lies in the stack segment/);
    expect(report.conclusion.summary).not.toMatch(/returned through/);
    expect(report.hypotheses[0]).toMatchObject({ status: "confirmed" });
    expect(report.conclusion.recommendations[0]).toMatch(/bound it by the buffer's size/);
  }, 120_000);
});

describe("a write that walks down off the bottom of the stack from a buffer far above", () => {
  it.each(["gdb", "lldb"])("is a stack buffer overflow in the function that wrote, not a stack overflow (%s)", async (debuggerName) => {
    const run = await runCli(["triage", backwards.core, "--exe", backwards.exe, "--json", "--debugger", debuggerName]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout);
    expect(crash).toMatchObject({ kind: "stack-buffer-overflow", access: "write", culprit: { function: "write_digits_backwards", line: 9 } });
    expect(crash.message).toMatch(/^write_digits_backwards wrote downwards past the start of a buffer on the stack and ran off the bottom of the stack at 0x[0-9a-f]+, [\d,]+ bytes below the stack pointer: not a stack overflow — the stack pointer is [\d,]+ bytes above the stack's end and nothing recursed/);
  }, 60_000);

  it("the offline analysis confirms it from the stack's extent and the stack pointer, and does not say the function returned", async () => {
    const run = await runCli(["analyze", backwards.core, "--exe", backwards.exe, "--provider", "offline", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.conclusion.summary).toMatch(/^`write_digits_backwards` \(field\.c:9\) wrote downwards past the start of a buffer on its stack and kept going below the end of the stack\. The stack pointer 0x[0-9a-f]+ \(E\d+\) lies in the stack segment/);
    expect(report.conclusion.summary).not.toMatch(/returned through/);
    expect(report.hypotheses[0]).toMatchObject({ status: "confirmed" });
  }, 120_000);
});

describe("a call through a NULL function pointer, over a stack whose unused words are zeros", () => {
  const NULL_HOOK = `/* A plugin host calls each plugin's load hook; the audit plugin registered none. The host
 * scrubs a scratch buffer first, so the unused stack below the caller holds zeros. */
#include <string.h>

typedef void (*hook_fn)(const char *);

struct plugin {
    const char *name;
    hook_fn on_load;
};

static void scrub_scratch(void)
{
    volatile char scratch[4096];
    memset((char *)scratch, 0, sizeof scratch);
}

static void load_plugin(const struct plugin *plugin)
{
    plugin->on_load(plugin->name); // CULPRIT
}

int main(void)
{
    struct plugin audit = { "audit", NULL };
    scrub_scratch();
    load_plugin(&audit);
    return 0;
}
`;
  it("is a bad jump in the caller, not a return through a smashed address: the return address the call pushed is intact", async () => {
    const dumped = crashC(dir, "null-hook", NULL_HOOK);
    const run = await runCli(["triage", dumped.core, "--exe", dumped.exe, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout);
    const line = NULL_HOOK.split("\n").findIndex((l) => l.includes("// CULPRIT")) + 1;
    expect(crash).toMatchObject({ kind: "bad-jump", access: "execute", faultAddress: "0x0", culprit: { function: "load_plugin", line } });
    expect(crash.message).toBeNull();
  }, 60_000);
});
