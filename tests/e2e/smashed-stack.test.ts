/**
 * A stack buffer overflow without a stack protector (issue: real-world accuracy, class 3): the
 * function's `ret` faults on the return address the overflow wrote, here input text ('AAAA…').
 * It is a stack buffer overflow, not "a pointer that was never valid", and the verdict leads with
 * the text bytes. A real program compiled at test time, its core written by gdb at the fault.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-smash-"));
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

let exe: string;
let core: string;
beforeAll(() => {
  const source = path.join(dir, "greet.c");
  exe = path.join(dir, "greet");
  core = path.join(dir, "greet.core");
  writeFileSync(source, SOURCE);
  execFileSync("gcc", ["-g", "-O0", "-fno-stack-protector", "-o", exe, source]);
  execFileSync("gdb", ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "run", "-ex", `generate-core-file ${core}`, exe], { stdio: "ignore" });
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
