/** The Delve session over its DAP server on a real Go core: goroutines, the panicking stack, registers, memory, print, and no dlv left behind. */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DlvSession } from "../../src/debuggers/dlv/dlv-session.js";
import { isGoProgram } from "../../src/debuggers/dumpfile/index.js";
import { dlvVocabulary } from "../../src/debuggers/dlv/vocabulary.js";
import { probes } from "../../src/debuggers/probe.js";
import { runCli } from "../helpers/cli.js";
import { buildGoCore, hasDlv, hasGo, type GoCore } from "../helpers/dlv-core.js";

const ready = hasGo() && hasDlv();

/** dlv processes whose parent is this test process. */
function ourDelves(): number[] {
  const out = execFileSync("ps", ["-o", "pid=,ppid=,comm=", "-e"], { encoding: "utf8" });
  return out
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, ppid, comm]) => Number(ppid) === process.pid && comm === "dlv")
    .map(([pid]) => Number(pid));
}

describe.skipIf(!ready)("Delve on a Go program's core", () => {
  let go: GoCore;
  let session: DlvSession;

  beforeAll(async () => {
    go = buildGoCore();
    session = new DlvSession({ dump: go.core, executable: go.exe, timeoutMs: 30_000 });
    await session.open();
  }, 120_000);

  afterAll(async () => {
    await session?.close();
    expect(ourDelves()).toEqual([]);
  });

  it("opens the core on the goroutine that panicked", () => {
    const context = session.context();
    expect(context.backend).toBe("dlv");
    expect(context.targetLoaded).toBe(true);
    expect(context.threadCount).toBeGreaterThanOrEqual(2);
    expect(context.selectedThread?.id).toBe(1);
    expect(ourDelves()).toHaveLength(1);
  });

  it("lists goroutines with their user frame, status and thread", async () => {
    const result = await session.run(dlvVocabulary.render({ kind: "threads" }));
    expect(result.ok, result.error).toBe(true);
    expect(result.output).toMatch(/^\* Goroutine 1 - User: .*main\.go:\d+ main\.\(\*Cache\)\.Put \(0x[0-9a-f]+\) \(thread \d+\) \[running\]$/m);
    const threads = dlvVocabulary.read({ kind: "threads" }, result.output);
    const crashed = threads.find((t) => t.current);
    expect(crashed).toMatchObject({ id: 1, name: "running", frame: { function: "main.(*Cache).Put", line: go.culpritLine } });
    expect(crashed?.lwp).toBeGreaterThan(0);
    // The runtime's own goroutines wait, and say why.
    expect(threads.some((t) => /^waiting: waitReason\w+/.test(t.name ?? ""))).toBe(true);
  });

  it("reads the panicking goroutine's stack: Put at its line under runtime.gopanic", async () => {
    const probe = probes.backtrace(40);
    const result = await session.run(dlvVocabulary.render(probe));
    expect(result.ok, result.error).toBe(true);
    const { frames } = dlvVocabulary.read(probe, result.output);
    const names = frames.map((f) => f.function);
    const put = names.indexOf("main.(*Cache).Put");
    expect(put).toBeGreaterThan(0);
    expect(names.slice(0, put)).toContain("runtime.gopanic");
    expect(frames[put]).toMatchObject({ file: go.source, line: go.culpritLine, level: put });
    expect(frames[put]?.address).toMatch(/^0x[0-9a-f]+$/);
    expect(names[put + 1]).toBe("main.main");
  });

  it("reads registers, locals, print and memory in the culprit's frame, by goroutine id", async () => {
    const stack = dlvVocabulary.read(probes.backtrace(40), (await session.run("goroutine 1 stack 40")).output);
    const level = stack.frames.findIndex((f) => f.function === "main.(*Cache).Put");
    const place = { thread: 1, frame: level };

    const registers = await session.run(dlvVocabulary.render(probes.registers(place)));
    expect(registers.ok, registers.error).toBe(true);
    const pc = dlvVocabulary.read(probes.register("pc", place), registers.output);
    expect(pc).toBe(stack.frames[level]?.address);

    const locals = dlvVocabulary.read(probes.locals(place), (await session.run(dlvVocabulary.render(probes.locals(place)))).output);
    expect(locals).toContainEqual({ name: "key", value: '"alice"' });

    const items = await session.run(dlvVocabulary.render(probes.evaluate("c.items", place)));
    expect(dlvVocabulary.read(probes.evaluate("c.items"), items.output)).toBe("map[string]int nil");
    const name = await session.run(`goroutine 1 frame ${level} print c.name`);
    expect(name.output.trim()).toBe('"sessions"');

    const sp = dlvVocabulary.read(probes.register("sp", place), registers.output);
    const memory = probes.memory(sp ?? "0", 4, place);
    const words = await session.run(dlvVocabulary.render(memory));
    expect(words.ok, words.error).toBe(true);
    const read = dlvVocabulary.read(memory, words.output);
    expect(read.start).toBe(sp);
    expect(read.words).toHaveLength(4);

    // The selection did not move.
    expect(session.context().selectedFrame?.level).toBe(0);
  });

  it("disassembles around the frame's pc, marking it", async () => {
    const level = dlvVocabulary.read(probes.backtrace(40), (await session.run("stack 40")).output).frames.findIndex((f) => f.function === "main.(*Cache).Put");
    const result = await session.run(dlvVocabulary.render(probes.disassemble({ thread: 1, frame: level })));
    expect(result.ok, result.error).toBe(true);
    const listing = dlvVocabulary.read({ kind: "disassemble" }, result.output);
    expect(listing.function).toBe("main.(*Cache).Put");
    const current = listing.instructions.findIndex((i) => i.current);
    expect(listing.instructions[current - 1]?.mnemonic).toBe("call");
  });

  it("selects goroutines and frames by their ids, and says where it stands", async () => {
    const moved = await session.run("goroutine 2");
    expect(moved.ok, moved.error).toBe(true);
    expect(moved.context.selectedThread?.id).toBe(2);
    expect(moved.context.selectedFrame?.function).toMatch(/^runtime\./);
    const frame = await session.run("frame 1");
    expect(frame.context.selectedFrame?.level).toBe(1);
    await session.run("goroutine 1");
    expect(session.context().selectedThread?.id).toBe(1);
  });

  it("reopens the core when Delve dies, and says so", async () => {
    const [pid] = ourDelves();
    expect(pid).toBeDefined();
    process.kill(pid!, "SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const result = await session.run("goroutines");
    expect(result).toMatchObject({ ok: true, reopened: true });
    expect(result.context.selectedThread?.id).toBe(1);
    const again = await session.run("goroutine 1 stack 3");
    expect(again.ok, again.error).toBe(true);
    expect(again.reopened).toBeUndefined();
    expect(ourDelves()).toHaveLength(1);
    expect(ourDelves()).not.toContain(pid);
  });

  it("says plainly what Delve's DAP server cannot answer", async () => {
    const args = await session.run("args");
    expect(args).toMatchObject({ ok: false, errorType: "debugger_error" });
    expect(args.error).toMatch(/among its locals/);
    const libraries = await session.run("libraries");
    expect(libraries.error).toMatch(/cannot answer `libraries`/);
    const call = await session.run("print nosuch.variable");
    expect(call.ok).toBe(false);
    expect(call.error).toMatch(/could not find symbol|nosuch/);
  });
});

describe.skipIf(!ready)("Delve through the CLI", () => {
  let go: GoCore;
  beforeAll(() => {
    go = buildGoCore();
  }, 120_000);

  it("recognises the core's program as Go, and a C program as not", () => {
    expect(isGoProgram(go.exe)).toBe(true);
    expect(isGoProgram(process.execPath)).toBe(false);
  });

  it("dumpdbg exec --debugger dlv runs Delve's commands and refuses call", async () => {
    const run = await runCli(["exec", go.core, "--exe", go.exe, "--debugger", "dlv", "-c", "goroutines", "-c", "goroutine 1 stack 12", "-c", "call main.main()", "--json"]);
    const results = JSON.parse(run.stdout) as { command: string; ok: boolean; output: string; errorType?: string; context: { backend: string } }[];
    expect(results[0]).toMatchObject({ command: "goroutines", ok: true, context: { backend: "dlv" } });
    expect(results[0]?.output).toMatch(/^\* Goroutine 1 - User: .*main\.go:\d+ main\.\(\*Cache\)\.Put/m);
    expect(results[1]?.output).toContain(`main.go:${go.culpritLine}`);
    expect(results[2]).toMatchObject({ ok: false, errorType: "not_allowed" });
    expect(run.code).toBe(1);
  }, 60_000);

  it("auto chooses Delve for a Go program's core", async () => {
    const run = await runCli(["exec", go.core, "--exe", go.exe, "-c", "goroutines"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\[\d+ goroutines\]/);
  }, 60_000);

  it("dumpdbg triage with Delve gives the crash and the panicking goroutine's stack", async () => {
    const run = await runCli(["triage", go.core, "--exe", go.exe, "--debugger", "dlv", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const crash = JSON.parse(run.stdout) as { kind: string; signal: string; message: string | null; thread: { id: number }; culprit: { function: string; line: number } | null };
    // The Go reader reads the runtime through Delve as through gdb: the panic's value, and the goroutine's culprit.
    expect(crash).toMatchObject({ kind: "panic", signal: "SIGABRT", thread: { id: 1 }, message: "assignment to entry in nil map" });
    expect(crash.culprit).toMatchObject({ function: "main.(*Cache).Put", line: go.culpritLine });
    expect(ourDelves()).toEqual([]);
  }, 60_000);
});
