/**
 * glibc's "double free or corruption (…)" is said for a block freed twice and for a block whose
 * header an overflow overwrote (issue: real-world accuracy, class 4). The evidence decides, not the
 * words: the freed block's header. Two real programs compiled at test time, cores written by gdb
 * at the abort: a name copied past its 24-byte block over the next block's size field, then one
 * free of that next block ("(out)"); and a report body freed on an error path and again by the
 * cleanup ("(top)"). Never are both hypotheses confirmed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { buildCore, culpritLine } from "../helpers/cores.js";
import { analyzeOffline, crashC, type Dumped } from "../helpers/dumped.js";
import { ungroundedValues } from "../helpers/grounding.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-heap-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OVERFLOW = `/* A session keeps its client name in a small block and its message log in the next one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct session {
    char *name;
    char *log;
};

static void set_name(struct session *session, const char *name)
{
    strcpy(session->name, name);
}

static void close_session(struct session *session)
{
    free(session->log);
    free(session->name);
}

int main(int argc, char **argv)
{
    struct session session = { malloc(24), malloc(2000) };
    memset(session.log, 0, 2000);
    set_name(&session, argc > 1 ? argv[1] : "client-name-with-paddingAAAAAAAA");
    close_session(&session);
    return 0;
}
`;

const TWICE = `/* A report body is released on the error path and again by the cleanup. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct report { char *body; size_t length; };

static int render(struct report *report, int fail)
{
    report->body = malloc(4096);
    memset(report->body, ' ', 4096);
    if (fail) {
        free(report->body);
        return -1;
    }
    return 0;
}

static void report_destroy(struct report *report)
{
    free(report->body);
}

int main(void)
{
    struct report report = { NULL, 0 };
    if (render(&report, 1) < 0)
        fprintf(stderr, "render failed\\n");
    report_destroy(&report);
    return 0;
}
`;

const analyze = (built: Dumped) => analyzeOffline(dir, built);

let overflow: Dumped;
let twice: Dumped;
beforeAll(() => {
  overflow = crashC(dir, "session", OVERFLOW);
  twice = crashC(dir, "report", TWICE);
}, 60_000);

describe("\"double free or corruption (out)\" after an overflow over the next block's header", () => {
  it.each(["gdb", "lldb"])("is heap corruption, read from the freed block's header, not a double free (%s)", async (debuggerName) => {
    const run = await runCli(["triage", overflow.core, "--exe", overflow.exe, "--json", "--debugger", debuggerName]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout);
    expect(crash).toMatchObject({ kind: "heap-corruption", message: "double free or corruption (out)", culprit: { function: "close_session", line: 18 } });
    const text = await runCli(["triage", overflow.core, "--exe", overflow.exe, "--debugger", debuggerName]);
    expect(text.stdout).toContain('the header of the block `session->log` points to holds size 0x4141414141414141 (the bytes "AAAAAAAA"), no size malloc writes');
  }, 60_000);

  it("the analysis confirms the overwritten header, rejects the double free saying why, and points at the unbounded copy", async () => {
    const report = await analyze(overflow);
    const [freedTwice, corrupted] = report.hypotheses;
    expect(freedTwice).toMatchObject({ status: "rejected" });
    expect(freedTwice.statement).toMatch(/freed twice/);
    expect(corrupted).toMatchObject({ status: "confirmed" });
    expect(report.conclusion.summary).toMatch(/had its header overwritten before this free\. The block's size field reads 0x4141414141414141 \("AAAAAAAA"\) \(E\d+\), not a size malloc writes, and the bytes before it, the end of the block in front, read "client-name-with-padding" \(E\d+\)/);
    expect(report.conclusion.summary).toMatch(/it was one free of a corrupted block, not a second free/);
    expect(report.conclusion.rootCause).toMatch(/H1 \(.*freed twice.*\) is rejected: malloc says "double free or corruption \(out\)" \(E\d+\) for a corrupted block too/);
    expect(report.conclusion.recommendations[0]).toMatch(/first candidate: session\.c:13 in `set_name`/);
    // Every value the conclusion states is in the output of the evidence it cites.
    expect(ungroundedValues(`${report.conclusion.summary} ${report.conclusion.rootCause}`, path.join(dir, "sessions"), report.session.id)).toEqual([]);
  }, 120_000);
});

describe("\"double free or corruption (top)\" after a real second free", () => {
  it("stays a double free: the block's header is intact, so it was already free", async () => {
    const report = await analyze(twice);
    expect(report.crash).toMatchObject({ kind: "double-free", message: "double free or corruption (top)", culprit: { function: "report_destroy", line: 21 } });
    const [freedTwice, corrupted] = report.hypotheses;
    expect(freedTwice).toMatchObject({ status: "confirmed" });
    expect(corrupted).toMatchObject({ status: "rejected" });
    expect(report.conclusion.summary).toMatch(/freed `report->body` a second time: .*the block's header is intact \(size 0x[0-9a-f]+\) \(E\d+\): the block was not overwritten, it was already free/);
  }, 120_000);
});

describe("the two hypotheses", () => {
  it("are never both confirmed, in either analysis", async () => {
    for (const built of [overflow, twice]) {
      const report = await analyze(built);
      expect(report.hypotheses.filter((h: { status: string }) => h.status === "confirmed")).toHaveLength(1);
    }
  }, 240_000);
});

describe("\"double free or corruption (!prev)\" after an overflow off the freed block's own end", () => {
  const NEIGHBOUR = `/* A directory keeps each entry's display name in a fixed record; a name longer than the record
 * runs on into the next entry's block, whose header it overwrites. Freeing the first entry then
 * finds the next block's in-use bit clear. */
#include <stdlib.h>
#include <string.h>

struct entry {
    char display_name[2000];
};

static void set_display_name(struct entry *entry, const char *name, size_t length)
{
    memcpy(entry->display_name, name, length);
}

static void remove_entry(struct entry *entry)
{
    free(entry); // CULPRIT
}

int main(void)
{
    struct entry *first = malloc(sizeof *first);
    struct entry *second = malloc(sizeof *second);
    char name[2048];
    memset(name, 'B', sizeof name);
    set_display_name(first, name, sizeof name);
    remove_entry(first);
    free(second);
    return 0;
}
`;
  let neighbour: Dumped;
  beforeAll(() => {
    neighbour = crashC(dir, "directory", NEIGHBOUR);
  }, 60_000);

  it("is heap corruption read from the next block's header, the freed block's own being intact", async () => {
    const run = await runCli(["triage", neighbour.core, "--exe", neighbour.exe, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const line = NEIGHBOUR.split("\n").findIndex((l) => l.includes("// CULPRIT")) + 1;
    expect(JSON.parse(run.stdout)).toMatchObject({ kind: "heap-corruption", message: "double free or corruption (!prev)", culprit: { function: "remove_entry", line } });
    const text = await runCli(["triage", neighbour.core, "--exe", neighbour.exe]);
    expect(text.stdout).toContain('the header of the block after `entry` holds size 0x4242424242424242 (the bytes "BBBBBBBB"), no size malloc writes: a write past the end of `entry` overwrote its neighbour\'s header');
  }, 60_000);

  it("the analysis rejects the double free from the neighbour's header and says the write ran off the block's end", async () => {
    const report = await analyze(neighbour);
    const [freedTwice, corrupted] = report.hypotheses;
    expect(freedTwice).toMatchObject({ status: "rejected" });
    expect(corrupted).toMatchObject({ status: "confirmed" });
    expect(report.conclusion.summary).toMatch(/^`remove_entry` \(directory\.c:\d+\) freed `entry` once; malloc's "double free or corruption \(!prev\)" \(E\d+\) is said for a block next to a corrupted one too, and that is what it was: a write past the end of `entry` overwrote the header of the block after it\. The block's own header is intact, its size field 0x7e1 \(E\d+\), but the next block's size field reads 0x4242424242424242 \("BBBBBBBB"\) \(E\d+\)/);
    expect(ungroundedValues(`${report.conclusion.summary} ${report.conclusion.rootCause}`, path.join(dir, "sessions"), report.session.id)).toEqual([]);
  }, 120_000);
});

describe("\"double free or corruption (!prev)\" after a string's terminator ran one byte past its block", () => {
  // The NUL cleared only the in-use bit of the next block's size (0x521 → 0x500): a size malloc could
  // have written, so the next block's prev_size decides: the subject's own text, not a free's footer.
  it("is heap corruption, read from the next block's prev_size, not a double free", async () => {
    const built = await buildCore("off-by-one-free");
    const run = await runCli(["triage", built.core, "--exe", built.exe, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ kind: "heap-corruption", message: "double free or corruption (!prev)", culprit: { function: "message_free", line: culpritLine("off-by-one-free") } });
    const text = await runCli(["triage", built.core, "--exe", built.exe]);
    expect(text.stdout).toMatch(/the header of the block after `message->subject` marks it free \(the in-use bit clear\) while its prev_size holds 0x[0-9a-f]+ \(the bytes "[ -~]{8}"\), not the size 0x580 a free of it leaves there: a write past the end of `message->subject` cleared the bit/);
  }, 60_000);

  it("the analysis rejects the double free from the next block's header and confirms the overflow, never both", async () => {
    const built = await buildCore("off-by-one-free");
    const report = await analyzeOffline(dir, built);
    const [freedTwice, corrupted] = report.hypotheses;
    expect(freedTwice).toMatchObject({ status: "rejected" });
    expect(corrupted).toMatchObject({ status: "confirmed" });
    expect(report.conclusion.summary).toMatch(/a write past the end of `message->subject` overwrote the header of the block after it\. The block's own header is intact, its size field 0x581 \(E\d+\), but the next block's header marks this one free \(the in-use bit clear\) while its prev_size reads 0x[0-9a-f]+ \("[ -~]{8}"\) \(E\d+\), not this block's size, which a free of it leaves there: a write ran on past the end of `message->subject` into its neighbour\./);
    expect(ungroundedValues(`${report.conclusion.summary} ${report.conclusion.rootCause}`, path.join(dir, "sessions"), report.session.id)).toEqual([]);
  }, 120_000);
});
