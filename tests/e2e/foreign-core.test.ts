/**
 * Cores from another machine (issue: real-world accuracy, class 2): the programs ran with a C
 * library of their own (a copy under a `prod` folder, found through their interpreter and rpath, as
 * in a container or a vendored deployment), and the core is read here after that folder is gone,
 * or holds another build of the library. gdb cannot read the library's code or unwind through
 * it; the report says so with what to do, and still finds the culprit from the stack's return
 * addresses, and glibc's abort message from the process's memory without libc's symbols.
 * Real programs, real cores written by gdb at the crash.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { culpritLine } from "../helpers/cores.js";
import { crashC, type Dumped } from "../helpers/dumped.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-foreign-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const prod = path.join(dir, "prod");
const LIBC = "/lib/x86_64-linux-gnu/libc.so.6";
const LOADER = "/lib64/ld-linux-x86-64.so.2";

const TOKENS = `/* Cuts a request line into tokens; a token is released as if it owned its text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct token { char *text; size_t length; };

static struct token next_token(char *cursor)
{
    while (*cursor == ' ')
        cursor++;
    struct token token = { cursor, strcspn(cursor, " ") };
    return token;
}

static void release_token(struct token *token)
{
    free(token->text);
    token->text = NULL;
}

int main(void)
{
    char *line = strdup("  GET /index.html HTTP/1.1");
    struct token method = next_token(line);
    printf("%.*s\\n", (int)method.length, method.text);
    release_token(&method);
    free(line);
    return 0;
}
`;

const HEADERS = `/* Sums the sizes of a request's headers; one header has no value. */
#include <stdio.h>
#include <string.h>

struct header { const char *name; const char *value; };

static size_t header_size(const struct header *header)
{
    return strlen(header->name) + strlen(header->value) + 4;
}

int main(void)
{
    struct header headers[] = { { "Host", "example.org" }, { "Accept", NULL } };
    size_t total = 0;
    for (int i = 0; i < 2; i++)
        total += header_size(&headers[i]);
    printf("%zu\\n", total);
    return 0;
}
`;

/** Builds a program against the libraries in `prod`, runs it under gdb to its crash and writes the core. */
const crash = (name: string, source: string): Dumped =>
  crashC(dir, name, source, ["-g", "-O0", `-Wl,--dynamic-linker=${path.join(prod, "ld-linux-x86-64.so.2")}`, `-Wl,-rpath=${prod}`]);

let tokens: Dumped;
let headers: Dumped;
/** The off-by-one-free fixture: a string's terminator one byte past its block, then "double free or corruption (!prev)". */
let offByOne: Dumped;
const OFF_BY_ONE = fileURLToPath(new URL("../fixtures/programs/off-by-one-free.c", import.meta.url));
/** The libraries the processes ran with, kept aside as a user would copy them from that machine. */
const copied = path.join(dir, "from-production");

beforeAll(() => {
  mkdirSync(prod);
  copyFileSync(LIBC, path.join(prod, "libc.so.6"));
  copyFileSync(LOADER, path.join(prod, "ld-linux-x86-64.so.2"));
  tokens = crash("tokens", TOKENS);
  headers = crash("headers", HEADERS);
  offByOne = crash("off-by-one-free", readFileSync(OFF_BY_ONE, "utf8"));
  cpSync(prod, copied, { recursive: true });
  // The machine the cores were written on is not this one: its libraries are not here.
  rmSync(prod, { recursive: true });
}, 120_000);

describe("a core whose C library is not on this machine", () => {
  it.each(["gdb", "lldb"])("an abort in free(): the culprit from the stack's return addresses, glibc's message from memory (%s)", async (debuggerName) => {
    const run = await runCli(["triage", tokens.core, "--exe", tokens.exe, "--debugger", debuggerName]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Crash: +heap corruption \(SIGABRT/m);
    expect(run.stdout).toMatch(/^Where: +release_token at .*tokens\.c:18/m);
    expect(run.stdout).toMatch(/^Why: +free\(\): invalid pointer$/m);
    expect(run.stdout).toMatch(/^Signature: heap-corruption \| release_token \| main$/m);
    expect(run.stdout).toContain(`the core comes from another machine: ${path.join(prod, "libc.so.6")} (build id `);
    expect(run.stdout).toMatch(/pass --solib-search-path DIR \(or the whole root as --sysroot DIR\)/);
  }, 60_000);

  it("a fault inside strlen: the library function, who called it and the NULL it was passed", async () => {
    const run = await runCli(["triage", headers.core, "--exe", headers.exe, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout);
    // Not a bad jump: the pc is in the library's code, which this machine lacks.
    expect(crash).toMatchObject({ kind: "null-dereference", faultAddress: "0x0", culprit: { function: "header_size", line: 9 } });
    const text = await runCli(["triage", headers.core, "--exe", headers.exe]);
    expect(text.stdout).toMatch(/^Why: +inside strlen \(libc\.so\.6\), called by header_size: a fault at address 0x0; its first argument, %rdi, is 0x0$/m);
    // No instruction is read from a library the dump does not hold.
    expect(text.stdout).not.toMatch(/add +%al,\(%rax\)/);
  }, 60_000);

  it.each(["gdb", "lldb"])("a \"double free or corruption (!prev)\" after a write past a block's end: heap corruption, read from the heap walked without the freed block's frame (%s)", async (debuggerName) => {
    const run = await runCli(["triage", offByOne.core, "--exe", offByOne.exe, "--json", "--debugger", debuggerName]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ kind: "heap-corruption", message: "double free or corruption (!prev)", culprit: { function: "message_free", line: culpritLine("off-by-one-free") } });
    const text = await runCli(["triage", offByOne.core, "--exe", offByOne.exe, "--debugger", debuggerName]);
    // The culprit's frame was found by the stack scan: `message->subject` cannot be evaluated in it, the heap is read instead.
    expect(text.stdout).toMatch(/the heap at 0x[0-9a-f]+–0x[0-9a-f]+, walked chunk by chunk without the freed block's frame, holds the block at 0x[0-9a-f]+ \(size 0x580\) whose next block's header marks it free while its prev_size holds 0x[0-9a-f]+ \(the bytes "[ -~]{8}"\), not the size a free of it leaves there/);
  }, 60_000);

  it("the offline analysis says first to get that machine's libraries, and never to rebuild a program that has debug info", async () => {
    const run = await runCli(["analyze", tokens.core, "--exe", tokens.exe, "--provider", "offline", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.crash).toMatchObject({ kind: "heap-corruption", message: "free(): invalid pointer", culprit: { function: "release_token", line: 18 } });
    const advice = report.conclusion.recommendations.join("\n");
    expect(advice).toMatch(/The core comes from another machine: libc\.so\.6, ld-linux-x86-64\.so\.2 are missing from this one\..*--solib-search-path DIR/);
    expect(advice).not.toMatch(/debug info \(-g\)/);
    // What the dump cannot decide without the library is said as unknown, with low confidence.
    expect(report.conclusion.summary).toMatch(/the analysis could not establish/);
    expect(report.conclusion.confidence).toBeLessThanOrEqual(0.3);
  }, 120_000);

  it("with that machine's libraries named by --solib-search-path, the debugger unwinds and no warning is left", async () => {
    const run = await runCli(["triage", tokens.core, "--exe", tokens.exe, "--solib-search-path", copied]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Where: +release_token at .*tokens\.c:18/m);
    expect(run.stdout).toMatch(/^Why: +free\(\): invalid pointer$/m);
    expect(run.stdout).not.toMatch(/another machine|scanning the stack/);
  }, 60_000);
});

describe("a core whose C library is here in another build", () => {
  it("says which library differs, by build id, and does not read the faulting instruction from it", async () => {
    // The same path holds a library whose build id is not the one the process ran.
    const other = path.join(dir, "other-build");
    cpSync(copied, other, { recursive: true });
    const library = readFileSync(path.join(other, "libc.so.6"));
    const id = /Build ID: ([0-9a-f]+)/.exec(execFileSync("readelf", ["-n", LIBC], { encoding: "utf8" }))?.[1] ?? "";
    const at = library.indexOf(Buffer.from(id, "hex"));
    expect(at).toBeGreaterThan(0);
    library[at] = (library[at] ?? 0) ^ 0xff;
    writeFileSync(path.join(other, "libc.so.6"), library);
    renameSync(other, prod);
    try {
      const run = await runCli(["triage", headers.core, "--exe", headers.exe]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`${path.join(prod, "libc.so.6")} here is another build than the libc.so.6 the process ran (build id ${library.subarray(at, at + 6).toString("hex")}`);
      expect(run.stdout).toMatch(/^Where: +header_size at .*headers\.c:9/m);
      expect(run.stdout).toMatch(/^Why: +inside strlen/m);
    } finally {
      rmSync(prod, { recursive: true, force: true });
    }
  }, 60_000);
});
