/**
 * `dumpdbg chat` as a person uses it: the built CLI in a real pseudo-terminal (a tmux pane of fixed
 * size), keys sent with send-keys and the screen read with capture-pane, on real cores in real gdb.
 * Offline, it answers the common questions from the debugger and corrects wrong claims; with a
 * scripted OpenAI-compatible server, the model asks for a command and cites its evidence. Piped
 * questions (a script) work too. The sessions are made here the way the analysis makes them: the
 * dump opened, triage run through the executor (its commands become evidence), a report.json saved.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommandExecutor } from "../../src/agents/executor.js";
import { triage } from "../../src/analyzers/triage/index.js";
import { openDump } from "../../src/debuggers/open.js";
import { createSession, sessionPaths, Transcript } from "../../src/evidence/sessions.js";
import { EvidenceStore } from "../../src/evidence/store.js";
import type { Report } from "../../src/report/schema.js";
import { BIN, runCli } from "../helpers/cli.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { promptText, startFakeOpenAI, type FakeServer } from "../helpers/fake-providers.js";

const run = promisify(execFile);
const TMUX = "tmux";
const hasTmux = (() => {
  try {
    execFileSync(TMUX, ["-V"]);
    return true;
  } catch {
    return false;
  }
})();
const SOCKET = `dumpdbg-chat-test-${process.pid}`;
const PROMPT = "dumpdbg> ";

let scratch: string;
let sessionsDir: string;
let reportsDir: string;
const cores: Record<string, BuiltCore> = {};

/** A session as the analysis leaves it: triage's evidence in the store and, unless told not to, report.json. */
async function makeSession(core: BuiltCore, withReport: boolean): Promise<string> {
  const opened = await openDump({ dump: core.core, exe: core.exe });
  try {
    const { id, meta } = createSession(sessionsDir, {
      dump: core.core,
      executable: core.exe,
      debugger: { backend: "gdb", path: "gdb", version: opened.session.version() },
      issue: null,
    });
    const paths = sessionPaths(sessionsDir, id);
    const store = EvidenceStore.open(paths.evidenceDb);
    const transcript = Transcript.open(sessionsDir, id);
    const executor = new CommandExecutor({ session: opened.session, store, transcript });
    const { crash } = await triage(executor.asker("triage"));
    if (withReport) {
      const report: Report = {
        schemaVersion: 1,
        session: { id, dump: core.core, executable: core.exe, debugger: "gdb", startedAt: meta.createdAt, finishedAt: null },
        issue: null,
        crash,
        hypotheses: [],
        conclusion: { summary: `The analysis says ${core.name} crashed.`, rootCause: "A pointer was used after it was cleared.", confidence: 0.9, recommendations: [] },
        critique: { rounds: [], unresolved: [] },
        followUpQuestions: [],
        evidence: store.list().map((e) => ({ id: e.id, command: e.command, summary: e.summary, bytes: e.bytes, path: e.path })),
        usage: { llmCalls: 0, local: { inputTokens: 0, outputTokens: 0 }, cloud: { inputTokens: 0, outputTokens: 0 } },
        timings: { totalMs: 1, debuggerMs: executor.debuggerMs, llmMs: 0 },
      };
      writeFileSync(join(paths.dir, "report.json"), JSON.stringify({ report, details: {} }));
    }
    store.close();
    transcript.close();
    return id;
  } finally {
    await opened.session.close();
  }
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** One tmux pane running one chat; the shell prints the exit code when the chat ends. */
class Pane {
  private constructor(readonly name: string) {}

  static async start(name: string, args: string[], env: Record<string, string> = {}): Promise<Pane> {
    const assignments = Object.entries(env).map(([key, value]) => `${key}=${shellQuote(value)}`);
    const command = [`env`, ...assignments, shellQuote(process.execPath), shellQuote(BIN), ...args.map(shellQuote)].join(" ");
    await tmux("new-session", "-d", "-s", name, "-x", "200", "-y", "50", `${command}; echo "[exit $?]"; sleep 600`);
    const pane = new Pane(name);
    await pane.waitFor((screen) => screen.includes(PROMPT), "the first prompt");
    return pane;
  }

  /** The whole pane, scrollback included, wrapped lines joined. */
  async screen(): Promise<string> {
    return (await tmux("capture-pane", "-p", "-J", "-S", "-", "-t", this.name)).stdout;
  }

  async waitFor(done: (screen: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = await this.screen();
      if (done(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the pane shows:\n${screen}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async keys(...keys: string[]): Promise<void> {
    await tmux("send-keys", "-t", this.name, ...keys);
  }

  async type(text: string): Promise<void> {
    await tmux("send-keys", "-t", this.name, "-l", text);
  }

  /** Types a line and returns what the chat printed for it, up to the next prompt. */
  async ask(line: string): Promise<string> {
    await this.type(line);
    await this.keys("Enter");
    const echoed = `${PROMPT}${line}`;
    const screen = await this.waitFor((s) => s.lastIndexOf(echoed) >= 0 && s.slice(s.lastIndexOf(echoed) + echoed.length).includes(`\n${PROMPT}`), `the answer to "${line}"`);
    const after = screen.slice(screen.lastIndexOf(echoed) + echoed.length);
    return after.slice(0, after.indexOf(`\n${PROMPT}`)).trim();
  }

  /** The chat's node process and the gdb it started. */
  async processes(): Promise<{ node: number; gdb: number[] }> {
    const shell = (await tmux("display-message", "-p", "-t", this.name, "#{pane_pid}")).stdout.trim();
    const node = Number((await run("pgrep", ["-P", shell, "-f", "dumpdbg.cjs"])).stdout.trim().split("\n")[0]);
    const gdb = (await run("pgrep", ["-P", String(node), "gdb"]).catch(() => ({ stdout: "" }))).stdout.trim().split("\n").filter(Boolean).map(Number);
    return { node, gdb };
  }

  /** Waits for the chat to end and returns its exit code. */
  async exitCode(): Promise<number> {
    const screen = await this.waitFor((s) => /\[exit \d+\]/.test(s), "the chat to end");
    return Number(/\[exit (\d+)\]/.exec(screen)?.[1]);
  }

  async kill(): Promise<void> {
    await tmux("kill-session", "-t", this.name).catch(() => undefined);
  }
}

function tmux(...args: string[]) {
  return run(TMUX, ["-L", SOCKET, "-f", "/dev/null", ...args]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function transcriptEvents(id: string): Array<Record<string, unknown>> {
  return readFileSync(sessionPaths(sessionsDir, id).transcript, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The chat with its questions piped in, as a script runs it. */
async function pipe(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  child.stdin.end(input);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, stdout, stderr };
}

function chatArgs(id: string, ...more: string[]): string[] {
  return ["chat", id, "--sessions-dir", sessionsDir, "--out", reportsDir, ...more];
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "dumpdbg-chat-"));
  sessionsDir = join(scratch, "sessions");
  reportsDir = join(scratch, "reports");
  const built = await Promise.all(["null-deref", "thread-crash", "deadlock"].map((name) => buildCore(name)));
  for (const core of built) cores[core.name] = core;
  // One server for every pane; without exit-empty off it would exit with the last pane, and the
  // next test's new-session could reach it while it is going away.
  if (hasTmux) await tmux("start-server", ";", "set-option", "-s", "exit-empty", "off");
});

afterAll(async () => {
  if (hasTmux) {
    // kill-server leaves the socket file behind.
    const socket = (await tmux("display-message", "-p", "#{socket_path}").catch(() => ({ stdout: "" }))).stdout.trim();
    await tmux("kill-server").catch(() => undefined);
    if (socket) rmSync(socket, { force: true });
  }
  rmSync(scratch, { recursive: true, force: true });
});

describe.skipIf(!hasTmux)("dumpdbg chat in a terminal, offline", () => {
  let nullDeref: string;

  beforeAll(async () => {
    nullDeref = await makeSession(cores["null-deref"]!, true);
  });

  it("answers the common questions from the debugger, corrects wrong claims, and runs /exec through the policy", async () => {
    const pane = await Pane.start("offline", chatArgs(nullDeref, "--provider", "offline"));
    try {
      const greeting = await pane.screen();
      expect(greeting).toMatch(/crash: null-dereference in send_to_client \(null-deref\.c:\d+\), thread 1/);

      const stack = await pane.ask("show me the crashing thread's stack");
      expect(stack).toMatch(/^Thread 1 \(LWP \d+\), the thread that received the SIGSEGV.* \[E\d+\]:/);
      expect(stack).toMatch(/#0 send_to_client \(session=0x[0-9a-f]+, .*null-deref\.c:\d+ +<- culprit\n +#1 broadcast .*\n +#2 main /);

      const locals = await pane.ask("what are the locals of the culprit frame?");
      expect(locals).toMatch(/^Frame 0 of thread 1: #0 send_to_client .* \[E\d+, E\d+\]\nArguments: session=0x[0-9a-f]+, message=0x[0-9a-f]+ "user1 has left"\nLocals:\n +fd = /);

      const fault = await pane.ask("what does the fault address point into?");
      expect(fault).toMatch(/^The fault address is 0x20 \(reading it\), from SIGSEGV's siginfo \[E\d+\]\./);
      expect(fault).toMatch(/It points into nothing: .* 0x20 is address 0 plus 32 bytes/);
      // Which pointer: the null-dereference playbook's suspects, judged by its rules.
      expect(fault).toMatch(/The null pointer is `session->client`, dereferenced by `int fd = session->client->fd;` \(\S*null-deref\.c:27\) \[E\d+\]\. `session->client` was \(struct client \*\) 0x0 \[E\d+\]\. `&session->client->fd` is 0x20, exactly the fault address \[E\d+, E\d+\]/);

      const register = await pane.ask("what was in rax?");
      expect(register).toMatch(/^In thread 1, frame 0 \(`send_to_client`\) \[E\d+, E\d+\]:\n +rax = 0x0 \(0\)$/);

      // Claims the evidence contradicts are corrected first, with the measurement.
      const nullClaim = await pane.ask("the null pointer is session, right?");
      expect(nullClaim).toMatch(/^`session` is not null: it is 0x[0-9a-f]+ in the culprit frame \[E\d+\]\.\nThe null pointer is `session->client`, dereferenced by/);
      const kindClaim = await pane.ask("it's a double free, isn't it?");
      expect(kindClaim).toMatch(/^It is not a double free: the crash is a null dereference in `send_to_client` \(SIGSEGV, reading address 0x20\) \[E\d+, E\d+\]\./);

      const unknown = await pane.ask("what is the meaning of this program?");
      expect(unknown).toMatch(/^I cannot answer that without a model\. Offline, the chat answers questions about/);

      const search = await pane.ask("/evidence send_to_client");
      expect(search).toMatch(/^E\d+ +bt 40 +- line \d+: #0 send_to_client/m);

      const exec = await pane.ask("/exec bt 2");
      expect(exec).toMatch(/^#0 +send_to_client .*\n#1 +0x[0-9a-f]+ in broadcast .*\n\(More stack frames follow\.\.\.\)\n\[E\d+\]$/);
      const refused = await pane.ask("/exec shell id");
      expect(refused).toMatch(/^refused: shell id: "shell" runs a shell command; refused by the safety policy .*\[E\d+\]$/);

      // A second chat on the same session is refused while this one holds it.
      const busy = await runCli(chatArgs(nullDeref, "--provider", "offline"));
      expect(busy.code).toBe(3);
      expect(busy.stderr).toMatch(/^dumpdbg: session \S+ is in use by process \d+/);

      const report = await pane.ask("/report md");
      expect(report).toMatch(/^Wrote \S+\.md \(7 questions in its Chat section\)\.$/);
      const markdown = readFileSync(join(reportsDir, `${nullDeref}.md`), "utf8");
      const chat = markdown.slice(markdown.indexOf("## Chat"));
      expect(chat).toMatch(/^## Chat\n\n\*\*Q:\*\* show me the crashing thread's stack\n/);
      expect(chat).toContain("**Q:** it's a double free, isn't it?\n\nIt is not a double free");
      expect(chat).toMatch(/Evidence: \[E\d+\]\(#e\d+--/);

      // Ctrl+C at the prompt explains how to leave, and the chat goes on.
      await pane.keys("C-c");
      await pane.waitFor((s) => s.includes("(press Ctrl+D or type /exit to leave; Ctrl+C again leaves too)"), "the Ctrl+C hint");
      expect(await pane.ask("/history")).toMatch(/^Q1: show me the crashing thread's stack\n/);

      const { node, gdb } = await pane.processes();
      expect(gdb).toHaveLength(1);
      await pane.keys("C-d");
      expect(await pane.exitCode()).toBe(0);
      expect(isAlive(node)).toBe(false);
      expect(isAlive(gdb[0]!)).toBe(false);
      expect(existsSync(sessionPaths(sessionsDir, nullDeref).lock)).toBe(false);

      const events = transcriptEvents(nullDeref).filter((e) => e.type === "chat");
      expect(events.filter((e) => e.event === "answer").map((e) => e.question)).toEqual([
        "show me the crashing thread's stack",
        "what are the locals of the culprit frame?",
        "what does the fault address point into?",
        "what was in rax?",
        "the null pointer is session, right?",
        "it's a double free, isn't it?",
        "what is the meaning of this program?",
      ]);
      expect(events.filter((e) => e.event === "exec").map((e) => [e.command, e.errorType])).toEqual([
        ["bt 2", null],
        ["shell id", "not_allowed"],
      ]);
      expect(events.at(-1)).toMatchObject({ event: "end", questions: 7 });
    } finally {
      await pane.kill();
    }
  });

  it("recalls the questions of an earlier run with Up, and two Ctrl+C at the prompt leave", async () => {
    const pane = await Pane.start("history", chatArgs(nullDeref, "--provider", "offline"));
    try {
      expect(await pane.screen()).toMatch(/7 earlier questions \(\/history\)/);
      await pane.keys("Up");
      await pane.waitFor((s) => s.trimEnd().endsWith(`${PROMPT}/history`), "the last line of the earlier run");
      // The first Ctrl+C clears the line, the next two leave.
      await pane.keys("C-c");
      await pane.waitFor((s) => s.trimEnd().endsWith(PROMPT.trimEnd()), "the cleared line");
      await pane.keys("C-c");
      await pane.waitFor((s) => s.includes("Ctrl+C again leaves too"), "the hint");
      await pane.keys("C-c");
      expect(await pane.exitCode()).toBe(0);
    } finally {
      await pane.kill();
    }
  });

  it("says who holds which lock on a deadlocked process", async () => {
    const id = await makeSession(cores.deadlock!, true);
    const pane = await Pane.start("deadlock", chatArgs(id, "--provider", "offline"));
    try {
      const locks = await pane.ask("who holds which lock?");
      // Locks by name where the dump tells it, with their addresses.
      expect(locks).toMatch(/^Deadlock: thread 2 waits for to->lock \((0x[0-9a-f]+)\) held by thread 3; thread 3 waits for to->lock \((0x[0-9a-f]+)\) held by thread 2\. None of them can go on\./);
      const [, first, second] = /waits for to->lock \((0x[0-9a-f]+)\) held by thread 3; thread 3 waits for to->lock \((0x[0-9a-f]+)\)/.exec(locks)!;
      expect(locks).toMatch(new RegExp(`Lock to->lock \\(${second}\\) is held by thread 2 \\(LWP \\d+\\) \\[E\\d+\\]; thread 3 waits for it in \`transfer_funds\` at \\S+deadlock\\.c:\\d+`));
      expect(locks).toMatch(new RegExp(`Lock to->lock \\(${first}\\) is held by thread 3 \\(LWP \\d+\\) \\[E\\d+\\]; thread 2 waits for it in \`transfer_funds\``));
      expect(await pane.ask("why did thread 2 crash?")).toMatch(/^No thread crashed: the dump is of a hung process, in which threads 2 and 3 wait for each other's locks \[E\d+/);
      await pane.keys("C-d");
      expect(await pane.exitCode()).toBe(0);
    } finally {
      await pane.kill();
    }
  });
});

describe("dumpdbg chat with piped questions", () => {
  it("answers one question per line, and corrects the thread of a worker-thread crash (no report: triage)", async () => {
    const id = await makeSession(cores["thread-crash"]!, false);
    const questions = ["why did the main thread crash?", "why did thread 3 crash?", "why did thread 1 crash?", "which pointer was null?", "how do I fix it?"];
    const { code, stdout, stderr } = await pipe(chatArgs(id, "--provider", "offline"), `${questions.join("\n")}\n`);
    expect(code).toBe(0);
    expect(stderr).toMatch(/crash: null-dereference in process_job .* \(from a triage of the dump \(the session has no report\)\)/);
    const answers = stdout.trim().split("\n\n");
    expect(answers).toHaveLength(questions.length);
    // The main thread's number depends on the order the kernel wrote the threads in: any but 1.
    expect(answers[0]).toMatch(/^The main thread, thread ([2-9]) \(LWP (\d+)\), did not crash \(it was in `[^`]+`\): the SIGSEGV was on thread 1 \(LWP \d+\), a worker thread, not the main thread \[E\d+, E\d+\]\.\nIt is a null dereference in `process_job`/);
    expect(answers[1]).toMatch(/^Thread 3 did not crash .*: the SIGSEGV was on thread 1 \(LWP \d+\), a worker thread/);
    const mainThread = /^The main thread, thread (\d+)/.exec(answers[0]!)?.[1];
    expect(answers[2]).toMatch(new RegExp(`^Note: thread 1 is gdb's number for the thread that received the SIGSEGV, a worker thread, not the main thread; the main thread is thread ${mainThread} \\(LWP \\d+\\)`));
    expect(answers[3]).toMatch(/^The null pointer is `job->request`, dereferenced by `int priority = job->request->priority;` \(\S*thread-crash\.c:\d+\) \[E\d+\]\. `job->request` was \(struct request \*\) 0x0 \[E\d+\]/);
    // Without a report, the playbook for the crash's kind is run now, as the analysis would run it.
    expect(answers[4]).toMatch(/^What the playbook for this kind of crash recommends \(the session has no report; run now, offline\):\n  1\. Check `job->request` before reading `priority` in `process_job`/);
    expect(answers[4]).toMatch(/\nBecause: At \S*thread-crash\.c:\d+, `int priority = job->request->priority;` dereferences `job->request` without checking it for NULL/);

    // --max-turns: the questions past the limit are declined, and the chat still ends cleanly.
    const limited = await pipe(chatArgs(id, "--provider", "offline", "--max-turns", "1"), "list the threads\nwhy did it crash?\n");
    expect(limited.code).toBe(0);
    expect(limited.stdout.trim().split("\n\n")[1]).toBe("This chat has reached its limit of 1 question (--max-turns); /report, /history and /exit still work.");
  });

  it("answers how to fix it from the report's recommendations and root cause, offline", async () => {
    const core = cores["null-deref"]!;
    const analysed = await runCli(["analyze", core.core, "--exe", core.exe, "--provider", "offline", "--json", "--sessions-dir", sessionsDir, "--out", reportsDir]);
    expect(analysed.code, analysed.stderr).toBe(0);
    const id = (JSON.parse(analysed.stdout) as { session: { id: string } }).session.id;
    const { code, stdout } = await pipe(chatArgs(id, "--provider", "offline"), "how do I fix it?\n");
    expect(code).toBe(0);
    const answer = stdout.trim();
    expect(answer).toMatch(/^What the analysis recommends:\n  1\. .*`send_to_client`/);
    expect(answer).toMatch(/\nBecause: .*`session->client`.* \[E\d+(, E\d+)*\]$/);
    expect(answer).not.toMatch(/without a model/);

    // Which pointer was null, judged by the analysis's own rule on the analysis's own evidence:
    // the value the report's hypothesis cites is the one the answer cites, and the debugger ran nothing new for it.
    const report = JSON.parse(readFileSync(join(reportsDir, `${id}.json`), "utf8")) as Report;
    const confirmed = report.hypotheses.find((h) => h.status === "confirmed");
    expect(confirmed?.statement).toMatch(/^`session->client` was NULL/);
    const before = transcriptEvents(id).length;
    // With the selection moved by /exec: the judges' probes still run where the analysis ran them, and the selection is put back.
    const pointer = await pipe(chatArgs(id, "--provider", "offline"), "/exec frame 1\nwhich pointer was null?\n/exec info frame\n");
    expect(pointer.code).toBe(0);
    expect(pointer.stdout).toMatch(/^Stack level 1, frame at 0x[0-9a-f]+:\n rip = 0x[0-9a-f]+ in broadcast /m);
    const value = /`session->client` was \(struct client \*\) 0x0 \[(E\d+)\]/.exec(pointer.stdout)?.[1];
    expect(confirmed?.evidenceIds).toContain(value);
    const judged = transcriptEvents(id).slice(before).filter((e) => e.type === "command" && e.source === "chat" && /session->client/.test(String(e.command)));
    expect(judged.length).toBeGreaterThan(0);
    expect(judged.every((e) => e.cached === true)).toBe(true);
  });
});

describe.skipIf(!hasTmux)("dumpdbg chat in a terminal, with a model", () => {
  let server: FakeServer;
  let commandId: string | null = null;

  beforeAll(async () => {
    server = await startFakeOpenAI((request, index) => {
      switch (index) {
        case 0:
          return { json: { needCommands: ["info registers rip"], answer: null, evidenceIds: [] }, usage: { inputTokens: 900, outputTokens: 20 } };
        case 1: {
          commandId = /\[(E\d+)\] info registers rip\n/.exec(promptText(request))?.[1] ?? null;
          return { json: { needCommands: [], answer: `The crash is at rip = send_to_client+25 [${commandId}].`, evidenceIds: [commandId] }, usage: { inputTokens: 1000, outputTokens: 30 } };
        }
        case 2:
        case 3:
          return { hangMs: 60_000 };
        default:
          return { status: 400, message: "this model cannot answer" };
      }
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  it("runs the command the model asks for and cites its evidence; Ctrl+C and --max-seconds end a model call; a failed call falls back offline", async () => {
    const id = await makeSession(cores["null-deref"]!, true);
    const pane = await Pane.start("model", chatArgs(id, "--provider", "openai", "--model", "fake-model", "--max-seconds", "3"), {
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: server.url,
    });
    try {
      const answer = await pane.ask("where exactly did it crash?");
      expect(commandId).toMatch(/^E\d+$/);
      expect(answer).toBe(`The crash is at rip = send_to_client+25 [${commandId}].`);
      const store = EvidenceStore.open(sessionPaths(sessionsDir, id).evidenceDb);
      try {
        expect(store.get(commandId!)).toMatchObject({ command: "info registers rip", source: "chat", ok: true });
      } finally {
        store.close();
      }

      await pane.type("what happened before the crash?");
      await pane.keys("Enter");
      await pane.waitFor(() => server.requests.length === 3, "the hanging model call");
      await pane.keys("C-c");
      await pane.waitFor((s) => s.includes("(answer cancelled)"), "the cancellation");
      await pane.waitFor(() => server.abandoned() === 1, "the model request to be aborted");

      // --max-seconds gives up an answer that takes too long, and the chat goes on.
      expect(await pane.ask("and before that?")).toBe("(no answer within 3 s; ask something narrower, or raise --max-seconds)");
      await pane.waitFor(() => server.abandoned() === 2, "the timed-out model request to be aborted");

      const fallback = await pane.ask("what was in rax?");
      expect(fallback).toMatch(/^\(The model could not answer: openai fake-model: request refused \(HTTP 400\): .*this model cannot answer.*\. This is the offline answer\.\)\nIn thread 1, frame 0 \(`send_to_client`\) \[E\d+, E\d+\]:\n +rax = 0x0 \(0\)$/);

      await pane.keys("C-d");
      expect(await pane.exitCode()).toBe(0);
      expect(await pane.screen()).toMatch(/dumpdbg: tokens: local 0 in \/ 0 out, cloud 1,900 in \/ 50 out \(2 model calls/);
      const events = transcriptEvents(id).filter((e) => e.type === "chat");
      expect(events.filter((e) => e.event !== "start" && e.event !== "end").map((e) => [e.event, e.question, e.mode ?? e.reason])).toEqual([
        ["answer", "where exactly did it crash?", "model"],
        ["cancelled", "what happened before the crash?", "cancelled"],
        ["cancelled", "and before that?", "timeout"],
        ["answer", "what was in rax?", "offline"],
      ]);
    } finally {
      await pane.kill();
    }
  });
});
