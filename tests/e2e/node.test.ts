/**
 * Node.js programs' deaths read with their JavaScript frames: llnode (the Node.js project's LLDB
 * plugin) reads the crashing thread's frames into the stack in place of V8's generated code, and the
 * uncaught error from the heap. Real processes run on the machine's node, dumped by gdb where they die.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

import type { Crash } from "../../src/report/schema.js";
import { llnodePlugin } from "../../src/runtimes/node/index.js";
import { runCli } from "../helpers/cli.js";
import { ABORTS, addonCore, GROWS, hasNodeAndGdb, hasNodeHeaders, nodeCore, SERVER, spinningCore } from "../helpers/node.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const hasLlnode = llnodePlugin() !== null;
const NODE_VERSION = process.version;

describe.skipIf(!hasNodeAndGdb())("a Node.js program run with --abort-on-uncaught-exception whose parseUser reads a property of undefined", () => {
  it.skipIf(!hasLlnode)("is an uncaught TypeError with its message, thrown in parseUser called from handle", async () => {
    const { core, script } = await nodeCore(tempDir("dumpdbg-node-"), "server", SERVER, ["--abort-on-uncaught-exception"]);
    const result = await runCli(["triage", core, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const read = JSON.parse(result.stdout) as Crash;
    expect(read.kind).toBe("uncaught-exception");
    expect(read.message).toBe("uncaught TypeError: Cannot read properties of undefined (reading 'name')");
    expect(read.culprit).toMatchObject({ function: "parseUser", file: script, line: 1, language: "javascript" });
    expect(read.signature).toBe("uncaught-exception | parseUser | handle | (anonymous)");
    expect(read.runtime).toMatchObject({ name: "node", version: NODE_VERSION, source: expect.stringMatching(/^llnode's v8 bt \(Node\.js v\d+\.\d+\.\d+, V8 \d+\.\d+\.\d+/) });
    const text = await runCli(["triage", core]);
    expect(text.stdout).toMatch(/#\d+ parseUser at \S+server\.js:1\n +#\d+ handle at \S+server\.js:2\n/);
    // The offline analysis concludes on the error and the JavaScript frames, shown as JavaScript.
    const out = tempDir("dumpdbg-node-report-");
    const analysed = await runCli(["analyze", core, "--provider", "offline", "--out", out]);
    expect(analysed.code, analysed.stderr).toBe(0);
    const report = readFileSync(path.join(out, readdirSync(out).find((file) => file.endsWith(".md"))!), "utf8");
    expect(report).toContain("`parseUser` (server.js:1) threw `TypeError` (\"Cannot read properties of undefined (reading 'name')\")");
    expect(report).toMatch(/\| `handle` \| `\S+server\.js:2` \| JavaScript \(run by Node\.js\) \|/);
  }, 400_000);

  it("without llnode keeps the native verdict and says the JavaScript frames need it", async () => {
    const { core } = await nodeCore(tempDir("dumpdbg-node-plain-"), "server", SERVER, ["--abort-on-uncaught-exception"]);
    const result = await runCli(["triage", core], { env: { DUMPDBG_LLNODE: "/nonexistent/llnode.so" } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Crash: +breakpoint trap/);
    expect(result.stdout).toMatch(/Note: +the JavaScript frames need llnode, the Node\.js project's LLDB plugin, which is not installed \(see `dumpdbg doctor`\)/);
  });
});

describe.skipIf(!hasNodeAndGdb() || !hasLlnode)("a Node.js program that calls process.abort()", () => {
  it("is an abort whose culprit is the JavaScript function that called it", async () => {
    const { core, script } = await nodeCore(tempDir("dumpdbg-node-abort-"), "abort", ABORTS);
    const read = JSON.parse((await runCli(["triage", core, "--json"])).stdout) as Crash;
    expect(read.kind).toBe("abort");
    expect(read.culprit).toMatchObject({ function: "shutdown", file: script, language: "javascript" });
    expect(read.signature).toBe("abort | shutdown | main | (anonymous)");
  }, 240_000);
});

describe.skipIf(!hasNodeAndGdb() || !hasLlnode)("a Node.js program whose heap reaches its limit (--max-old-space-size=16)", () => {
  it("is out-of-memory in the JavaScript function that kept allocating", async () => {
    const { core, script } = await nodeCore(tempDir("dumpdbg-node-oom-"), "grows", GROWS, ["--max-old-space-size=16"]);
    const read = JSON.parse((await runCli(["triage", core, "--json"])).stdout) as Crash;
    expect(read.kind).toBe("out-of-memory");
    expect(read.message).toMatch(/^V8's JavaScript heap out of memory/);
    expect(read.culprit).toMatchObject({ function: "grow", file: script, line: 2, language: "javascript" });
  }, 240_000);
});

describe.skipIf(!hasNodeAndGdb() || !hasLlnode)("a Node.js process spinning in JavaScript, dumped alive by gcore", () => {
  it("names the JavaScript function its main thread runs and who called it", async () => {
    const { core, script } = await spinningCore(tempDir("dumpdbg-node-spin-"));
    const read = JSON.parse((await runCli(["triage", core, "--json"])).stdout) as Crash;
    expect(read.culprit).toMatchObject({ function: "checksum", file: script, line: 1, language: "javascript" });
    expect(read.signature).toMatch(/ \| checksum \| serve \| \(anonymous\)$/);
  }, 240_000);
});

describe.skipIf(!hasNodeAndGdb() || !hasNodeHeaders() || !hasLlnode)("a N-API addon that reads through NULL, called from JavaScript", () => {
  it("blames the addon's C line, with the JavaScript callers above it", async () => {
    const { core } = await addonCore(tempDir("dumpdbg-node-addon-"));
    const result = await runCli(["triage", core]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Where: +record_length at \S*addon\.c:7/);
    expect(result.stdout).toMatch(/#1 Measure at \S*addon\.c:12\n(.*\n)*? +#\d+ sizeOf at \S+caller\.js:2\n +#\d+ handle at \S+caller\.js:3\n/);
  }, 240_000);
});
