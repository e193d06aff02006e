/**
 * Docs that cannot rot: every `dumpdbg …` line in a fenced block of the README and the manual
 * (docs/*.md) runs here, against a real core of the demo's chat server, and its exit code and the
 * shape of its output are checked. The pages' placeholders (`core.1234`, `./server`, a session id)
 * stand for that core, its program and a session analysed from it. A line that needs what a test
 * machine does not have (a model's key, a minidump, Redis, a Go or JVM core) is skipped, and the
 * skipped test's name says why. A chat gets the page's piped question, or none (its end of input
 * ends it, as Ctrl+D does); `--pid` dumps a sleeping process of the test's own.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN } from "../helpers/cli.js";
import { crashCore, pythonInterpreters } from "../helpers/cpython.js";
import { buildGoCore } from "../helpers/go.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const hasGo = spawnSync("go", ["version"]).status === 0;
const python = pythonInterpreters()[0]?.python;
const tempDir = tempDirs();

interface Shown {
  page: string;
  line: string;
}

/** The `dumpdbg` command lines of the `sh` and `console` blocks of a page (a console's after `$ `). */
function shownCommands(page: string): Shown[] {
  const text = readFileSync(path.join(root, page), "utf8");
  const shown: Shown[] = [];
  for (const [, lang, body] of text.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)) {
    if (lang !== "sh" && lang !== "console") continue;
    for (const raw of body!.split("\n")) {
      const line = lang === "console" ? (raw.startsWith("$ ") ? raw.slice(2) : "") : raw;
      if (/^(\w+=\S+\s+)*dumpdbg\s/.test(line) || /^echo .*\|\s*dumpdbg\s/.test(line)) shown.push({ page, line: line.trim() });
    }
  }
  return shown;
}

const pages = ["README.md", ...readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const commands = pages.flatMap(shownCommands);

/** What cannot run on a test machine, and why. */
const SKIPS: { when: (c: Shown) => boolean; why: string }[] = [
  { when: (c) => /--provider (openai|anthropic|ollama)|_API_KEY=|--local-model/.test(c.line), why: "needs a model provider's key or a running Ollama" },
  { when: (c) => /\.dmp\b/.test(c.line), why: "needs a minidump (the minidump tests build them with mingw and wine)" },
  { when: (c) => /--queue/.test(c.line), why: "needs a Redis queue" },
  { when: (c) => /--coredump|systemd\/coredump/.test(c.line), why: "needs systemd-coredump's store" },
  { when: (c) => /\/var\/crash\//.test(c.line), why: "needs an apport report" },
  { when: (c) => /https?:\/\//.test(c.line), why: "needs a symbol server" },
  { when: (c) => c.page === "docs/go.md" && !hasGo, why: "needs go to build a Go program's core" },
  { when: (c) => c.page === "docs/java.md", why: "needs a JVM's core and its hs_err log (the JVM tests make them)" },
  { when: (c) => c.page === "docs/python.md" && !python, why: "needs python3.11 to make a CPython core" },
];

/** Splits a shell line into words (quotes, `#` comments), its environment, its stdin from `echo … |`. */
function parse(line: string): { env: Record<string, string>; args: string[]; input: string | null } {
  let input: string | null = null;
  let rest = line;
  const piped = /^echo\s+('([^']*)'|"([^"]*)")\s*\|\s*(.*)$/.exec(line);
  if (piped) {
    input = `${piped[2] ?? piped[3]}\n`;
    rest = piped[4]!;
  }
  const words: string[] = [];
  for (const [, single, double, bare] of rest.matchAll(/'([^']*)'|"([^"]*)"|(#.*$|[^\s'"]+)/g)) {
    if (bare?.startsWith("#")) break;
    words.push(single ?? double ?? bare!);
  }
  // A redirection to a file: the test reads stdout instead.
  const redirect = words.indexOf(">");
  if (redirect >= 0) words.splice(redirect);
  const env: Record<string, string> = {};
  while (words[0] && /^\w+=/.test(words[0])) {
    const [name, ...value] = words.shift()!.split("=");
    env[name!] = value.join("=");
  }
  expect(words.shift()).toBe("dumpdbg");
  return { env, args: words, input };
}

function run(args: string[], options: { cwd: string; env: Record<string, string | undefined>; input: string | null }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

/** The folder every command runs in, the demo's core and program in it, and a session of it. */
let place: { dir: string; core: string; server: string; session: string; pid: number; env: Record<string, string | undefined> };
/** The live process `--pid` dumps: it sleeps until the tests are done. */
const sleeper = spawn("sleep", ["600"], { stdio: "ignore" });
afterAll(() => {
  sleeper.kill();
});
let kept = 0;

beforeAll(async () => {
  const dir = tempDir("dumpdbg-docs-");
  const server = path.join(dir, "server");
  execFileSync("gcc", ["-g", "-O0", "-pthread", "-o", server, path.join(root, "demo/crash.c")]);
  const core = path.join(dir, "core.1234");
  execFileSync("gdb", ["-nx", "-batch", "-ex", "run", "-ex", `generate-core-file ${core}`, server], { cwd: dir, stdio: "ignore" });
  mkdirSync(path.join(dir, "crashes"));
  copyFileSync(core, path.join(dir, "crashes", "core.1234"));
  // No model: what auto finds on this machine must not change what the pages' commands print.
  const env = { DUMPDBG_SESSIONS_DIR: path.join(dir, ".sessions"), OPENAI_API_KEY: undefined, ANTHROPIC_API_KEY: undefined, OLLAMA_HOST: "http://127.0.0.1:9" };
  const analysed = await run(["analyze", core, "--exe", server, "--provider", "offline", "--json"], { cwd: dir, env, input: null });
  expect(analysed.code, analysed.stderr).toBe(0);
  place = { dir, core, server, env, pid: sleeper.pid!, session: (JSON.parse(analysed.stdout) as { session: { id: string } }).session.id };
}, 120_000);

/** The Go and Python pages' cores: a Go service's nil-map panic, a Python program's crash under ctypes. */
const runtimeCores = new Map<string, Promise<{ core: string; exe: string | null; culprit: string }>>();
function runtimeCore(page: string): Promise<{ core: string; exe: string | null; culprit: string }> {
  if (!runtimeCores.has(page)) {
    runtimeCores.set(
      page,
      page === "docs/go.md"
        ? buildGoCore("nil-map").then((built) => ({ core: built.core, exe: built.exe, culprit: "main." }))
        : crashCore(tempDir("dumpdbg-docs-python-"), python!).then((crash) => ({ core: crash.core, exe: null, culprit: "parse_record" })),
    );
  }
  return runtimeCores.get(page)!;
}

/** The pages' placeholders, as the words of this machine; a kept dump goes to a new file each time. */
function placed(args: string[]): string[] {
  const words: Record<string, string> = {
    "core.1234": place.core,
    core: place.core,
    "./core": place.core,
    "./hung.core": place.core,
    "demo/build/crash.core": place.core,
    "./server": place.server,
    "./crashes": path.join(place.dir, "crashes"),
    "20261126-1430": place.session,
    "<session-id>": place.session,
    "/tmp/reports": path.join(place.dir, "other-reports"),
    "/srv/sessions": path.join(place.dir, ".sessions"),
    "4242": String(place.pid),
  };
  return args.map((arg, i) => (args[i - 1] === "--keep-dump" ? path.join(place.dir, `kept-${++kept}.core`) : (words[arg] ?? arg)));
}

/** What a Go or Python page's command prints: the runtime's culprit. */
function checkRuntimeShape(args: string[], result: { code: number | null; stdout: string; stderr: string }, culprit: string): void {
  expect(result.code, result.stderr).toBe(0);
  if (args[0] === "triage") expect(result.stdout).toMatch(new RegExp(`^Where: +${culprit}`, "m"));
  else if (args[0] === "analyze") expect(result.stdout).toMatch(/^Reports:/m);
  else expect(result.stdout).toMatch(/goroutine|Goroutine/);
}

/** What each command's output looks like when it worked. */
function checkShape(args: string[], result: { code: number | null; stdout: string; stderr: string }): void {
  const [command, sub] = args;
  if (command === "resume") {
    // The pages' session is a finished one: resume says so, in one line.
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^dumpdbg: session \S+ has already finished/);
    return;
  }
  expect(result.code, result.stderr).toBe(0);
  if (args.includes("--json")) {
    const doc = JSON.parse(result.stdout) as Record<string, unknown>;
    if (command === "analyze") expect(doc).toMatchObject({ schemaVersion: 1, crash: { kind: "null-dereference", culprit: { function: "queue_message" } } });
    if (command === "triage") expect(doc).toMatchObject({ kind: "null-dereference", culprit: { function: "queue_message" } });
    return;
  }
  if (args.includes("--pid")) {
    // A sleeping process: dumped on request, left running.
    expect(result.stdout).toMatch(command === "triage" ? /^Origin: +dump taken on request/m : /^Reports:/m);
    expect(process.kill(place.pid, 0)).toBe(true);
    const keep = args.indexOf("--keep-dump");
    if (keep >= 0) expect(existsSync(args[keep + 1]!)).toBe(true);
  } else if (command === "triage") expect(result.stdout).toMatch(/^Crash: +null pointer dereference[\s\S]*^Where: +queue_message/m);
  else if (command === "analyze") expect(result.stdout).toMatch(/^Null dereference in queue_message[\s\S]*^Reports:/m);
  else if (command === "exec") expect(result.stdout).toMatch(/queue_message/);
  else if (command === "doctor") expect(result.stdout).toMatch(/^ok +gdb /m);
  else if (command === "chat") expect(result.stderr).toMatch(/^dumpdbg chat: session \S+\ncrash: null-dereference in queue_message/m);
  else if (command === "sessions" && sub !== "cleanup") expect(result.stdout).toContain(place.session);
  else if (command === "completion") expect(result.stdout).toMatch(/dumpdbg/);
  else if (command === "batch") expect(result.stdout + result.stderr).toMatch(/null-dereference|1 bug/);
}

describe("the commands the README and the manual show", () => {
  it("are found in them", () => {
    expect(commands.length).toBeGreaterThan(30);
    expect(commands.some((c) => c.page === "README.md")).toBe(true);
  });

  for (const shown of commands) {
    const skip = SKIPS.find((s) => s.when(shown));
    const name = `${shown.page}: ${shown.line}`;
    if (skip) {
      it.skip(`${name} (skipped: ${skip.why})`, () => undefined);
      continue;
    }
    it(name, async () => {
      const { env, args, input } = parse(shown.line);
      if (shown.page === "docs/go.md" || shown.page === "docs/python.md") {
        const subject = await runtimeCore(shown.page);
        const argv = args.map((arg) => (arg === "core" ? subject.core : arg === "./svc" ? subject.exe! : arg));
        checkRuntimeShape(argv, await run(argv, { cwd: place.dir, env: { ...place.env, ...env }, input }), subject.culprit);
        return;
      }
      const argv = placed(args);
      const result = await run(argv, { cwd: place.dir, env: { ...place.env, ...env }, input });
      checkShape(argv, result);
    }, 120_000);
  }
});
