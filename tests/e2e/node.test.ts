/**
 * Node.js programs' deaths read with their JavaScript frames: llnode (the Node.js project's LLDB
 * plugin) reads the crashing thread's frames into the stack in place of V8's generated code, and the
 * uncaught error from the heap. Real processes run on the machine's node, dumped by gdb where they die.
 */
import { copyFileSync, linkSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

import type { Crash, Report } from "../../src/report/schema.js";
import { llnodePlugin } from "../../src/runtimes/node/index.js";
import { pipeChat, runCli } from "../helpers/cli.js";
import { ABORTS, addonCore, GROWS, hasNodeAndGdb, hasNodeHeaders, SERVER, sharedNodeCore, spinningCore, workersCore } from "../helpers/node.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const hasLlnode = llnodePlugin() !== null;
const NODE_VERSION = process.version;

describe.skipIf(!hasNodeAndGdb())("a Node.js program run with --abort-on-uncaught-exception whose parseUser reads a property of undefined", () => {
  it.skipIf(!hasLlnode)("is an uncaught TypeError with its message, thrown in parseUser called from handle", async () => {
    const { core, script } = await sharedNodeCore("server", SERVER, ["--abort-on-uncaught-exception"]);
    const result = await runCli(["triage", core, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const read = JSON.parse(result.stdout) as Crash;
    expect(read.kind).toBe("uncaught-exception");
    expect(read.message).toBe("uncaught TypeError: Cannot read properties of undefined (reading 'name')");
    // The column is the one Node's own stack trace gives, `at parseUser (server.js:1:51)`: where `.name` is read.
    expect(read.culprit).toMatchObject({ function: "parseUser", file: script, line: 1, column: 51, language: "javascript" });
    expect(read.signature).toBe("uncaught-exception | parseUser | handle | (anonymous)");
    expect(read.runtime).toMatchObject({ name: "node", version: NODE_VERSION, source: expect.stringMatching(/^llnode's v8 bt \(Node\.js v\d+\.\d+\.\d+, V8 \d+\.\d+\.\d+/) });
    const text = await runCli(["triage", core]);
    expect(text.stdout).toMatch(/Where: +parseUser at \S+server\.js:1:51, thread 1/);
    expect(text.stdout).toMatch(/#\d+ parseUser at \S+server\.js:1:51\n +#\d+ handle at \S+server\.js:2\n/);
    expect(text.stdout).toMatch(/Note: +the thrown error is taken to be the heap's one error object \(TypeError\): llnode reads no record of the value V8 was throwing/);
    // The offline analysis concludes on the error and the JavaScript frames, shown as JavaScript.
    const out = tempDir("dumpdbg-node-report-");
    const analysed = await runCli(["analyze", core, "--provider", "offline", "--out", out, "--sessions-dir", path.join(out, "sessions"), "--json"]);
    expect(analysed.code, analysed.stderr).toBe(0);
    const report = readFileSync(path.join(out, readdirSync(out).find((file) => file.endsWith(".md"))!), "utf8");
    expect(report).toContain("`parseUser` (server.js:1) threw `TypeError` (\"Cannot read properties of undefined (reading 'name')\")");
    expect(report).toMatch(/\| `parseUser` ← culprit \| `\S+server\.js:1:51` \| JavaScript \(run by Node\.js\) \|/);
    expect(report).toMatch(/\| `handle` \| `\S+server\.js:2` \| JavaScript \(run by Node\.js\) \|/);

    // The chat answers on the JavaScript side from llnode's reading, citing its evidence.
    const { session, evidence } = JSON.parse(analysed.stdout) as Report;
    const llnode = evidence.find((e) => /: v8 bt 200$/.test(e.command));
    expect(llnode).toBeDefined();
    const chat = await pipeChat(["chat", session.id, "--sessions-dir", path.join(out, "sessions"), "--out", out, "--provider", "offline"], out, "what was thrown?\nwhat are the arguments?\nshow the JavaScript stack\n");
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain(`TypeError: Cannot read properties of undefined (reading 'name'), the heap's one error object (0x`);
    expect(chat.stdout).toContain(`It was thrown at ${script}:1:51, the position V8 kept on the error.`);
    expect(chat.stdout).toMatch(new RegExp(`JavaScript frame parseUser \\(${script.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:1\\) of thread 1, its arguments as llnode printed them \\[${llnode!.id}\\]:\nArguments: this=0x[0-9a-f]+:<Global proxy>, 0x[0-9a-f]+:<Object: Object>`));
    expect(chat.stdout).toMatch(new RegExp(`Thread 1 \\(LWP \\d+\\), its JavaScript frames as llnode read them, innermost first \\[${llnode!.id}\\]:\n  parseUser \\(\\S+server\\.js:1\\)   <- culprit\n  handle \\(\\S+server\\.js:2\\)\n`));
  }, 600_000);

  it("without llnode keeps the native verdict and says the JavaScript frames need it", async () => {
    const { core } = await sharedNodeCore("server", SERVER, ["--abort-on-uncaught-exception"]);
    const result = await runCli(["triage", core], { env: { DUMPDBG_LLNODE: "/nonexistent/llnode.so" } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Crash: +breakpoint trap/);
    expect(result.stdout).toMatch(/Note: +the JavaScript frames need llnode, the Node\.js project's LLDB plugin, which is not installed \(see `dumpdbg doctor`\)/);
  });
});

describe.skipIf(!hasNodeAndGdb() || !hasLlnode)("a Node.js program that calls process.abort()", () => {
  it("is an abort whose culprit is the JavaScript function that called it", async () => {
    const { core, script } = await sharedNodeCore("abort", ABORTS);
    const read = JSON.parse((await runCli(["triage", core, "--json"])).stdout) as Crash;
    expect(read.kind).toBe("abort");
    expect(read.culprit).toMatchObject({ function: "shutdown", file: script, language: "javascript" });
    expect(read.signature).toBe("abort | shutdown | main | (anonymous)");
  }, 240_000);
});

describe.skipIf(!hasNodeAndGdb() || !hasLlnode)("a Node.js program whose heap reaches its limit (--max-old-space-size=16)", () => {
  it("is out-of-memory in the JavaScript function that kept allocating", async () => {
    const { core, script } = await sharedNodeCore("grows", GROWS, ["--max-old-space-size=16"]);
    const read = JSON.parse((await runCli(["triage", core, "--json"])).stdout) as Crash;
    expect(read.kind).toBe("out-of-memory");
    // The limit is the flag's, read from the command line the kernel kept; the used size is not in what is read, and not made up.
    expect(read.message).toBe("V8's JavaScript heap out of memory: a garbage collection could not make room for an allocation (Reached heap limit); the old generation's limit was 16 MB (--max-old-space-size=16 on its command line); the heap's used size is not read from the core");
    expect(read.culprit).toMatchObject({ function: "grow", file: script, line: 2, language: "javascript" });
  }, 240_000);
});

describe.skipIf(!hasNodeAndGdb() || !hasLlnode)("a Node.js process spinning in JavaScript, dumped alive by gcore", () => {
  it("names the JavaScript function its main thread runs and who called it", async () => {
    const { core, script } = await spinningCore();
    const read = JSON.parse((await runCli(["triage", core, "--json"])).stdout) as Crash;
    expect(read.culprit).toMatchObject({ function: "checksum", file: script, line: 1, language: "javascript" });
    expect(read.signature).toMatch(/ \| checksum \| serve \| \(anonymous\)$/);
  }, 240_000);
});

describe.skipIf(!hasNodeAndGdb() || !hasNodeHeaders() || !hasLlnode)("a N-API addon that reads through NULL, called from JavaScript", () => {
  it("blames the addon's C line, with the JavaScript callers above it", async () => {
    const { core } = await addonCore();
    const result = await runCli(["triage", core]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Where: +record_length at \S*addon\.c:7/);
    expect(result.stdout).toMatch(/#1 Measure at \S*addon\.c:12\n(.*\n)*? +#\d+ sizeOf at \S+caller\.js:2\n +#\d+ handle at \S+caller\.js:3\n/);
    // The chat's JavaScript stack keeps the addon's C frames it ran under, and says nothing was thrown.
    const out = tempDir("dumpdbg-node-addon-chat-");
    const analysed = await runCli(["analyze", core, "--provider", "offline", "--out", out, "--sessions-dir", path.join(out, "sessions"), "--json"]);
    expect(analysed.code, analysed.stderr).toBe(0);
    const { session } = JSON.parse(analysed.stdout) as Report;
    const chat = await pipeChat(["chat", session.id, "--sessions-dir", path.join(out, "sessions"), "--out", out, "--provider", "offline"], out, "show the JavaScript stack\nwhat was thrown?\n");
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(/Thread 1's native frames from the culprit to its first JavaScript frame, as gdb unwound them \[E\d+\]:\n  record_length at \S*addon\.c:7\n  Measure at \S*addon\.c:12\n(.*\n)*?Thread 1 \(LWP \d+\), its JavaScript frames as llnode read them, innermost first \[E\d+\]:\n  sizeOf \(\S+caller\.js:2\)\n/);
    expect(chat.stdout).toContain("Nothing was thrown: the crash is");
  }, 400_000);
});

describe.skipIf(!hasNodeAndGdb() || !hasLlnode)("a Node.js process whose main thread and a Worker both spin in JavaScript, dumped alive by gcore", () => {
  it("names the JavaScript function each thread runs, and the chat shows the Worker's stack", async () => {
    const { core, script } = await workersCore();
    const read = JSON.parse((await runCli(["triage", core, "--json"])).stdout) as Crash;
    expect(read.culprit).toMatchObject({ function: "checksum", file: script, language: "javascript" });
    expect(read.message).toMatch(/^2 threads were running JavaScript when the dump was taken: LWP \d+ in checksum \(workers\.js:3\); LWP \d+ in digest \(workers\.js:2\)$/);
    const out = tempDir("dumpdbg-node-workers-");
    const analysed = await runCli(["analyze", core, "--provider", "offline", "--out", out, "--sessions-dir", path.join(out, "sessions"), "--json"]);
    expect(analysed.code, analysed.stderr).toBe(0);
    const { session, evidence } = JSON.parse(analysed.stdout) as Report;
    const worker = evidence.find((e) => /: thread select (\d+); v8 bt 200$/.test(e.command));
    expect(worker).toBeDefined();
    const thread = /thread select (\d+);/.exec(worker!.command)![1];
    const chat = await pipeChat(["chat", session.id, "--sessions-dir", path.join(out, "sessions"), "--out", out, "--provider", "offline"], out, `what is thread ${thread} doing?\n`);
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(new RegExp(`Thread ${thread} \\(LWP \\d+\\), its JavaScript frames as llnode read them, innermost first \\[${worker!.id}\\]:\n  digest \\(\\S+workers\\.js:2\\)\n`));
  }, 400_000);
});

describe.skipIf(!hasNodeAndGdb() || !hasLlnode)("dumpdbg batch over Node.js cores", () => {
  it("groups two uncaught TypeErrors thrown in the same function as one bug, apart from a process.abort()", async () => {
    const [first, second, aborted] = await Promise.all([
      sharedNodeCore("server", SERVER, ["--abort-on-uncaught-exception"]),
      sharedNodeCore("server-again", SERVER, ["--abort-on-uncaught-exception"]),
      sharedNodeCore("abort", ABORTS),
    ]);
    const dir = tempDir("dumpdbg-node-batch-");
    const dumps = path.join(dir, "cores");
    mkdirSync(dumps);
    // Linked, not copied, where the cache and the folder share a file system: each core is some 700 MB.
    const place = (from: string, name: string) => {
      try {
        linkSync(from, path.join(dumps, name));
      } catch {
        copyFileSync(from, path.join(dumps, name));
      }
    };
    place(first.core, "api-1.core");
    place(second.core, "api-2.core");
    place(aborted.core, "shutdown-1.core");
    const result = await runCli(["batch", dumps, "--jobs", "2", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout) as { groups: { kind: string; signature: string; count: number; culprit: { function: string | null; language?: string | null } }[]; errors: unknown[] };
    expect(doc.errors).toEqual([]);
    const bySignature = Object.fromEntries(doc.groups.map((g) => [g.signature, g]));
    expect(Object.keys(bySignature).sort()).toEqual(["abort | shutdown | main | (anonymous)", "uncaught-exception | parseUser | handle | (anonymous)"]);
    expect(bySignature["uncaught-exception | parseUser | handle | (anonymous)"]).toMatchObject({ kind: "uncaught-exception", count: 2, culprit: { function: "parseUser", language: "javascript" } });
    expect(bySignature["abort | shutdown | main | (anonymous)"]).toMatchObject({ kind: "abort", count: 1, culprit: { function: "shutdown", language: "javascript" } });
  }, 600_000);
});
