/** `dumpdbg report` and `analyze --chat`, through the built CLI on a real core. */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ReportSchema } from "../../src/report/schema.js";
import { BIN, runCli } from "../helpers/cli.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

let built: BuiltCore;
let dir: string;
let id: string;

beforeAll(async () => {
  built = await buildCore("null-deref");
  dir = tempDir("dumpdbg-report-cli-");
  const run = await runCli(["analyze", built.core, "--exe", built.exe, "--provider", "offline", "--issue", "dies on disconnect", "--sessions-dir", join(dir, "sessions"), "--out", join(dir, "reports"), "--json"]);
  expect(run.code).toBe(0);
  id = ReportSchema.parse(JSON.parse(run.stdout)).session.id;
});

describe("dumpdbg report", () => {
  it("re-renders a finished session in the formats asked for", async () => {
    const out = join(dir, "again");
    const run = await runCli(["report", id, "--format", "md,json", "--out", out, "--sessions-dir", join(dir, "sessions")]);
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split("\n")).toEqual([join(out, `${id}.md`), join(out, `${id}.json`)]);
    expect(existsSync(join(out, `${id}.html`))).toBe(false);
    const original = JSON.parse(readFileSync(join(dir, "reports", `${id}.json`), "utf8"));
    expect(JSON.parse(readFileSync(join(out, `${id}.json`), "utf8"))).toEqual(original);
    // The re-rendered Markdown has what only the session's document holds: the source excerpt and the stack.
    const md = readFileSync(join(out, `${id}.md`), "utf8");
    expect(md).toMatch(/### Source/);
    expect(md).toMatch(/send_to_client/);
  });

  it("leaves a file of the user's at the output path alone", async () => {
    const out = join(dir, "users");
    rmSync(out, { recursive: true, force: true });
    (await import("node:fs")).mkdirSync(out, { recursive: true });
    writeFileSync(join(out, `${id}.md`), "my notes\n");
    const run = await runCli(["report", id, "--out", out, "--sessions-dir", join(dir, "sessions")]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/exists and is not a dumpdbg report/);
    expect(readFileSync(join(out, `${id}.md`), "utf8")).toBe("my notes\n");
    expect(existsSync(join(out, `${id}.html`))).toBe(false);
  });

  it("rejects an unknown format and an unknown session", async () => {
    const bad = await runCli(["report", id, "--format", "pdf", "--sessions-dir", join(dir, "sessions")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--format takes md, html, json/);
    const missing = await runCli(["report", "20990101-000000-none-0000", "--sessions-dir", join(dir, "sessions")]);
    expect(missing.code).toBe(3);
  });
});

describe("dumpdbg analyze with unusable folders", () => {
  it("refuses an --out or --sessions-dir that is a file before opening the dump", async () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "mine\n");
    for (const flag of ["--out", "--sessions-dir"]) {
      const run = await runCli(["analyze", built.core, "--exe", built.exe, "--provider", "offline", flag, file]);
      expect(run.code).toBe(3);
      expect(run.stderr).toMatch(new RegExp(`^dumpdbg: ${flag} .*a-file cannot be used: it is a file, not a folder\n$`));
      expect(readFileSync(file, "utf8")).toBe("mine\n");
    }
  });
});

describe("dumpdbg analyze --chat", () => {
  it("answers follow-up questions on the same session after the report", async () => {
    const sessions = join(dir, "chat-sessions");
    const child = spawn(process.execPath, [BIN, "analyze", built.core, "--exe", built.exe, "--provider", "offline", "--chat", "--sessions-dir", sessions, "--out", join(dir, "chat-reports")], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stdin.end("which pointer was null?\n/exec bt 1\n/exit\n");
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    expect(stdout).toMatch(/Null dereference in send_to_client/);
    expect(stdout).toMatch(/session->client/);
    expect(stdout).toMatch(/#0 .*send_to_client/);
    const [session] = (await import("node:fs")).readdirSync(sessions);
    const transcript = readFileSync(join(sessions, session!, "transcript.jsonl"), "utf8");
    expect(transcript).toMatch(/"type":"chat"/);
  });
});
