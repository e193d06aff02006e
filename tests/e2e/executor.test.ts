/** The one executor: policy → gdb → evidence store → analyzers, on a real core and a real SQLite file. */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommandExecutor } from "../../src/agents/executor.js";
import { runCommands, type Runtime } from "../../src/agents/runtime.js";
import { triage } from "../../src/analyzers/triage/index.js";
import { openDump, type OpenedDump } from "../../src/debuggers/open.js";
import { createSession, sessionPaths, Transcript } from "../../src/evidence/sessions.js";
import { EvidenceStore } from "../../src/evidence/store.js";
import { buildCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

let opened: OpenedDump;
let store: EvidenceStore;
let transcript: Transcript;
let executor: CommandExecutor;
let root: string;
let id: string;

beforeAll(async () => {
  const built = await buildCore("thread-crash");
  root = tempDir("dumpdbg-executor-");
  opened = await openDump({ dump: built.core, exe: built.exe });
  id = createSession(root, {
    dump: built.core,
    executable: built.exe,
    debugger: { backend: "gdb", path: "gdb", version: opened.session.version() },
    issue: "worker dies",
  }).id;
  store = EvidenceStore.open(sessionPaths(root, id).evidenceDb);
  transcript = Transcript.open(root, id);
  executor = new CommandExecutor({ session: opened.session, store, transcript });
});

afterAll(async () => {
  await opened?.session.close();
  store?.close();
  transcript?.close();
});

describe("CommandExecutor", () => {
  it("stores each output as evidence with the analyzers' summary and findings", async () => {
    const bt = await executor.run("bt", "agent");
    expect(bt).toMatchObject({ ok: true, cached: false, errorType: null });
    expect(bt.evidenceId).toMatch(/^E\d+$/);
    const record = store.get(bt.evidenceId)!;
    expect(record.command).toBe("bt");
    expect(record.source).toBe("agent");
    expect(record.context.thread).toBe(bt.context.selectedThread?.id);
    expect(store.output(bt.evidenceId)).toMatch(/process_job/);
    expect(bt.summary).toMatch(/process_job/);
  });

  it("serves the same command in the same thread and frame from the store instead of gdb", async () => {
    const first = await executor.run("info registers rip", "agent");
    const again = await executor.run("info  registers   rip", "chat");
    expect(again.cached).toBe(true);
    expect(again.evidenceId).toBe(first.evidenceId);
    expect(store.list().filter((r) => r.command.replace(/\s+/g, " ") === "info registers rip")).toHaveLength(1);
  });

  it("runs it again in another frame, and always runs selection changes", async () => {
    const inFrame0 = await executor.run("info locals", "agent");
    const up = await executor.run("up", "agent");
    expect(up.cached).toBe(false);
    expect(up.context.selectedFrame?.level).toBe(1);
    const inFrame1 = await executor.run("info locals", "agent");
    expect(inFrame1.cached).toBe(false);
    expect(inFrame1.evidenceId).not.toBe(inFrame0.evidenceId);
    expect(store.get(inFrame1.evidenceId)!.context.frame).toBe(1);
    const down = await executor.run("down", "agent");
    expect(down.cached).toBe(false);
    expect(down.context.selectedFrame?.level).toBe(0);
  });

  it("records a refusal as evidence without sending it to gdb", async () => {
    const refused = await executor.run("shell rm -rf ~", "agent");
    expect(refused).toMatchObject({ ok: false, errorType: "not_allowed", cached: false });
    expect(refused.error).toMatch(/shell/);
    const record = store.get(refused.evidenceId)!;
    expect(record.ok).toBe(false);
    expect(record.errorType).toBe("not_allowed");
    expect(store.search("rm -rf").some((hit) => hit.evidenceId === refused.evidenceId)).toBe(true);
  });

  it("asks triage's probes through the store, so they become evidence too", async () => {
    const before = store.list().length;
    const result = await triage(executor.asker("triage"));
    expect(result.crash.kind).toBe("null-dereference");
    expect(result.crash.culprit.function).toBe("process_job");
    const added = store.list().slice(before);
    expect(added.length).toBeGreaterThan(0);
    expect(added.every((r) => r.source === "triage")).toBe(true);
    expect(executor.evidenceFor(result.commands[0]!)).toMatch(/^E\d+$/);
  });

  it("appends every command to the transcript as it happens", () => {
    const events = readFileSync(sessionPaths(root, id).transcript, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.length).toBeGreaterThanOrEqual(store.list().length);
    expect(events.every((e) => e.type === "command" && typeof e.at === "string")).toBe(true);
    expect(events.some((e) => e.cached === true)).toBe(true);
    expect(events.some((e) => e.errorType === "not_allowed")).toBe(true);
  });
});

describe("an agent's steps (runCommands)", () => {
  /** How many commands the session had been asked when the first of them was answered. */
  async function askedBeforeFirstAnswer(steps: Parameters<typeof runCommands>[2]) {
    const session = opened.session;
    const run = session.run.bind(session);
    let asked = 0;
    let atFirstAnswer: number | null = null;
    session.run = (command, options) => {
      asked += 1;
      return run(command, options).then((result) => {
        atFirstAnswer ??= asked;
        return result;
      });
    };
    try {
      const runtime = { executor, session, progress: () => undefined, homeThread: session.context().selectedThread?.id ?? null } as unknown as Runtime;
      const observations = await runCommands(runtime, "investigator", steps);
      return { observations, atFirstAnswer };
    } finally {
      session.run = run;
    }
  }

  it("asks distinct steps that move nothing all at once, each answered and stored in its turn", async () => {
    const steps = ["info registers rbx", "p $rsp", "info registers rcx"].map((text) => ({ kind: "command" as const, text }));
    const { observations, atFirstAnswer } = await askedBeforeFirstAnswer(steps);
    expect(atFirstAnswer).toBe(3);
    expect(observations.map((o) => o.command)).toEqual(["info registers rbx", "p $rsp", "info registers rcx"]);
    const ids = observations.map((o) => Number(o.evidenceId.slice(1)));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(observations.every((o) => o.ok && !o.cached)).toBe(true);
  });

  it("asks one by one when a step repeats (served from the store) or moves the selection", async () => {
    const repeated = await askedBeforeFirstAnswer(["info registers rdx", "info registers rdx"].map((text) => ({ kind: "command" as const, text })));
    expect(repeated.atFirstAnswer).toBe(1);
    expect(repeated.observations.map((o) => o.cached)).toEqual([false, true]);
    expect(repeated.observations[1]!.evidenceId).toBe(repeated.observations[0]!.evidenceId);

    const moving = await askedBeforeFirstAnswer(["frame 1", "info frame"].map((text) => ({ kind: "command" as const, text })));
    expect(moving.atFirstAnswer).toBe(1);
    expect(store.get(moving.observations[1]!.evidenceId)!.context.frame).toBe(1);
    // And it goes back to the crashing thread's innermost frame after.
    expect(opened.session.context().selectedFrame?.level).toBe(0);
  });
});
