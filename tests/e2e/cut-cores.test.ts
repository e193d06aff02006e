/**
 * Cores cut short: a log shipper that writes through a NULL sink, its core cut by the kernel at
 * RLIMIT_CORE (`prlimit --core`) inside its notes and just after them, and copies of its whole
 * core cut in the middle of its stack and near its end. (The kernel counts only the bytes it
 * writes against the limit, not the zero pages it skips, so a limit places a cut inside the
 * memory less exactly than a copy.) Each is read as far as it goes (the signal and the crash site
 * from the notes and the program's file, the debugger's reads of lost memory unknown), and says
 * where it was cut and what it lost; the one cut inside its notes is refused in one line.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

import { runCli } from "../helpers/cli.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const SHIPPER = String.raw`/* A log shipper reads its routes, then forwards each record to the route whose prefix it
 * starts with. A route whose sink could not be opened keeps a NULL sink, and the first record
 * for it is counted through that NULL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sink {
    FILE *out;
    long written;
};

struct route {
    char prefix[32];
    struct sink *sink;
};

static struct sink *open_sink(const char *path)
{
    struct sink *sink = calloc(1, sizeof *sink);
    sink->out = fopen(path, "a");
    if (sink->out == NULL) {
        free(sink);
        return NULL;
    }
    return sink;
}

static long forward_record(struct route *route, const char *record)
{
    size_t length = strlen(record);
    route->sink->written += (long)length; // CULPRIT
    return route->sink->written;
}

static struct route *route_for(struct route *routes, int count, const char *record)
{
    for (int i = 0; i < count; i++)
        if (strncmp(record, routes[i].prefix, strlen(routes[i].prefix)) == 0)
            return &routes[i];
    return NULL;
}

int main(void)
{
    /* A batch of records read at once: most of this process's stack. */
    char batch[64][1024];
    struct route routes[2] = { { "audit:", NULL }, { "access:", NULL } };
    routes[0].sink = open_sink("/dev/null");
    routes[1].sink = open_sink("/nonexistent/access.log");
    for (int i = 0; i < 64; i++)
        snprintf(batch[i], sizeof batch[i], "%s record %d", i % 2 ? "access:" : "audit:", i);
    long total = 0;
    for (int i = 0; i < 64; i++) {
        struct route *route = route_for(routes, 2, batch[i]);
        if (route != NULL)
            total += forward_record(route, batch[i]);
    }
    printf("%ld bytes forwarded\n", total);
    return 0;
}
`;

const CULPRIT_LINE = SHIPPER.split("\n").findIndex((line) => line.includes("// CULPRIT")) + 1;

interface Segment {
  type: number;
  offset: number;
  vaddr: bigint;
  filesz: number;
}

/** A core's program headers, as the test reads them to know where it places its cuts. */
function segmentsOf(core: Buffer): Segment[] {
  const phoff = Number(core.readBigUInt64LE(32));
  const [size, count] = [core.readUInt16LE(54), core.readUInt16LE(56)];
  return Array.from({ length: count }, (_, i) => {
    const at = phoff + i * size;
    return { type: core.readUInt32LE(at), offset: Number(core.readBigUInt64LE(at + 8)), vaddr: core.readBigUInt64LE(at + 16), filesz: Number(core.readBigUInt64LE(at + 32)) };
  });
}

/** The kernel writes a core named `core` into the folder a program crashes in, unless its pattern pipes or places them elsewhere. */
const kernelCores = /^core$|^core\.%[a-z]$/.test(readFileSync("/proc/sys/kernel/core_pattern", "utf8").trim());

const dirs = tempDirs();

/** Runs the shipper in `dir` under RLIMIT_CORE `limit` bytes (unlimited without one) and returns the core the kernel wrote. */
function crashUnderLimit(exe: string, dir: string, name: string, limit: number | null): string {
  const before = new Set(readdirSync(dir));
  spawnSync("prlimit", [`--core=${limit ?? "unlimited"}:${limit ?? "unlimited"}`, exe], { cwd: dir, stdio: "ignore" });
  const written = readdirSync(dir).find((file) => !before.has(file) && /^core/.test(file));
  if (!written) throw new Error(`no core was written under a core limit of ${limit} bytes`);
  const core = path.join(dir, name);
  renameSync(path.join(dir, written), core);
  return core;
}

async function triageJson(core: string, exe: string, extra: string[] = []) {
  const run = await runCli(["triage", core, "--exe", exe, "--json", ...extra]);
  return { run, crash: run.code === 0 ? JSON.parse(run.stdout) : null };
}

describe.skipIf(!kernelCores)("cores cut short by RLIMIT_CORE", () => {
  let dir: string;
  let exe: string;
  let full: Buffer;
  let notesEnd: number;
  let stack: Segment;
  /** Where the crashing thread's stack pointer lies in the whole core's file: a cut below it loses its frames. */
  let spOffset: number;

  /** The first `bytes` of the whole core, as a copy or a limit cut there leaves it. */
  const cutCopy = (name: string, bytes: number) => {
    const core = path.join(dir, name);
    writeFileSync(core, full.subarray(0, bytes));
    return core;
  };

  beforeAll(async () => {
    dir = dirs("dumpdbg-cut-cores-");
    const source = path.join(dir, "log-shipper.c");
    writeFileSync(source, SHIPPER);
    exe = path.join(dir, "log-shipper");
    execFileSync("gcc", ["-g", "-O0", "-o", exe, source]);
    full = readFileSync(crashUnderLimit(exe, dir, "whole.core", null));
    const segments = segmentsOf(full);
    const notes = segments.find((s) => s.type === 4)!;
    notesEnd = notes.offset + notes.filesz;
    // A limit of one page then falls inside the notes.
    expect(notesEnd).toBeGreaterThan(4096);
    const registers = await runCli(["exec", path.join(dir, "whole.core"), "--exe", exe, "-c", "print/x $sp"]);
    const sp = BigInt(/= (0x[0-9a-f]+)/.exec(registers.stdout)?.[1] ?? "0");
    stack = segments.find((s) => s.type === 1 && s.filesz > 0 && s.vaddr <= sp && sp < s.vaddr + BigInt(s.filesz))!;
    spOffset = stack.offset + Number(sp - stack.vaddr);
  });

  it("refuses a core cut inside its notes, in one line with exit 3", async () => {
    // The kernel writes no core under a limit below a page.
    const core = crashUnderLimit(exe, dir, "in-notes.core", 4096);
    expect(statSync(core).size).toBeLessThan(notesEnd);
    const { run } = await triageJson(core, exe);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^dumpdbg: \S+in-notes\.core is truncated inside its notes \(the file ends at byte \d+, its notes at \d+\): the threads' registers and the signal are lost; copy the whole core again\n$/);
  });

  it("reads the signal, the faulting instruction and the crash site from a core cut just after its notes", async () => {
    const core = crashUnderLimit(exe, dir, "after-notes.core", notesEnd + 1);
    const size = statSync(core).size;
    expect(size).toBe(notesEnd);
    const { run, crash } = await triageJson(core, exe);
    expect(run.code, run.stderr).toBe(0);
    expect(crash).toMatchObject({ kind: "null-dereference", signal: "SIGSEGV", signalCode: "SEGV_MAPERR", faultAddress: "0x8", culprit: { function: "forward_record", line: CULPRIT_LINE } });
    expect(crash.cut).toMatchObject({ at: size, expectedBytes: full.length });
    // Every segment the headers describe, the stack among them, is lost.
    expect(crash.cut.segments.length + crash.cut.moreSegments).toBe(segmentsOf(full).filter((s) => s.type === 1 && s.filesz > 0).length);
    expect(crash.cut.segments.map((s: { holds: string | null }) => s.holds)).toContain(`the stack of LWP ${crash.thread.lwp}`);
    const text = await runCli(["triage", core, "--exe", exe]);
    expect(text.stdout).toMatch(/Why: +reading 8 bytes at 0x8 through/);
    expect(text.stdout).toMatch(new RegExp(`Note: +the core is cut short at byte ${size.toLocaleString("en-US")} of ${full.length.toLocaleString("en-US")}: \\d+ segments lost`));
    expect(text.stdout).toMatch(/the dynamic linker's list of loaded libraries was in the memory the cut lost/);
    expect(text.stdout).not.toMatch(/not on this machine/);
  });

  it("reads the crash site from a core cut in the middle of its stack, below the frames, their memory unknown", async () => {
    const core = cutCopy("mid-stack.core", spOffset - 64);
    const size = statSync(core).size;
    expect(size).toBeGreaterThan(stack.offset);
    expect(size).toBeLessThan(stack.offset + stack.filesz);
    const { run, crash } = await triageJson(core, exe);
    expect(run.code, run.stderr).toBe(0);
    expect(crash).toMatchObject({ kind: "null-dereference", signal: "SIGSEGV", culprit: { function: "forward_record", line: CULPRIT_LINE } });
    const lostStack = crash.cut.segments.find((s: { holds: string | null }) => s.holds === `the stack of LWP ${crash.thread.lwp}`);
    expect(lostStack).toMatchObject({ start: `0x${stack.vaddr.toString(16)}`, whole: false, lostBytes: stack.offset + stack.filesz - size });
    // The route the record went to was a local of forward_record's caller, on the lost part of the stack: gdb says it cannot read it, never a value.
    const exec = await runCli(["exec", core, "--exe", exe, "-c", "frame 0", "-c", "print route", "-c", "x/2gx $sp"]);
    expect(exec.stdout).toMatch(/Cannot access memory at address/);
    expect(exec.stdout).not.toMatch(/route = \(struct route \*\) 0x/);
  });

  it("reads the whole stack of a core cut near its end, and says what it lost", async () => {
    const core = cutCopy("near-end.core", full.length - 1000);
    const size = statSync(core).size;
    expect(size).toBeGreaterThan(stack.offset + stack.filesz);
    const { run, crash } = await triageJson(core, exe);
    expect(run.code, run.stderr).toBe(0);
    expect(crash).toMatchObject({ kind: "null-dereference", culprit: { function: "forward_record", line: CULPRIT_LINE } });
    expect(crash.signature).toBe("null-dereference | forward_record | main");
    expect(crash.cut.at).toBe(size);
    expect(crash.cut.segments.some((s: { holds: string | null }) => s.holds?.startsWith("the stack"))).toBe(false);
  });

  it("puts the cut in the analysis's report, and LLDB reads the same core too", async () => {
    const core = cutCopy("analysed.core", spOffset - 64);
    const out = path.join(dir, "reports");
    const run = await runCli(["analyze", core, "--exe", exe, "--provider", "offline", "--json", "--out", out, "--sessions-dir", path.join(dir, "sessions")]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.crash.cut).toMatchObject({ at: statSync(core).size, expectedBytes: full.length });
    expect(report.crash.culprit).toMatchObject({ function: "forward_record", line: CULPRIT_LINE });
    const markdown = readFileSync(path.join(out, `${report.session.id}.md`), "utf8");
    expect(markdown).toMatch(/\| Dump \| core cut short at byte [\d,]+ of [\d,]+: \d+ segments? lost .*what that memory held is unknown \|/);
    const lldb = await triageJson(core, exe, ["--debugger", "lldb"]);
    expect(lldb.run.code, lldb.run.stderr).toBe(0);
    expect(lldb.crash).toMatchObject({ kind: "null-dereference", culprit: { function: "forward_record", line: CULPRIT_LINE }, cut: { at: statSync(core).size } });
  });
});
