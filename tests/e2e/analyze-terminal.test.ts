/**
 * `dumpdbg analyze` as a person sees it in a 120×40 terminal (a tmux pane on its own server): the
 * agents' steps as a live list with each command collapsed, the verdict first and in colour, our
 * lines wrapped at word boundaries; NO_COLOR honoured; --quiet and --verbose.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN } from "../helpers/cli.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const run = promisify(execFile);
const SOCKET = `dumpdbg-analyze-tty-${process.pid}`;
const tmux = (...args: string[]) => run("tmux", ["-L", SOCKET, ...args]);

let core: BuiltCore;
let dir: string;
beforeAll(async () => {
  core = await buildCore("null-deref");
  dir = tempDir("dumpdbg-analyze-tty-");
});
afterAll(async () => {
  await tmux("kill-server").catch(() => undefined);
});

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/** Runs the command in a fresh 120×40 pane and returns the screen once it has ended. */
async function screen(name: string, args: string[], env: Record<string, string> = {}): Promise<{ plain: string; joined: string; escaped: string }> {
  const exports = Object.entries(env).map(([k, v]) => `export ${k}=${quote(v)}; `).join("");
  const command = `${exports}node ${quote(BIN)} ${args.map(quote).join(" ")}; echo "[exit $?]"; sleep 600`;
  await tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", command);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const plain = (await tmux("capture-pane", "-p", "-S", "-", "-t", name)).stdout;
    if (/\[exit \d+\]/.test(plain)) {
      const joined = (await tmux("capture-pane", "-p", "-J", "-S", "-", "-t", name)).stdout;
      const escaped = (await tmux("capture-pane", "-p", "-e", "-S", "-", "-t", name)).stdout;
      await tmux("kill-session", "-t", name).catch(() => undefined);
      return { plain, joined, escaped };
    }
    if (Date.now() > deadline) throw new Error(`no end in 60 s:\n${plain}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const common = () => ["analyze", core.core, "--exe", core.exe, "--provider", "offline", "--out", join(dir, "reports"), "--sessions-dir", join(dir, "sessions")];

describe("analyze in a terminal", () => {
  it("lists the agents' steps live with each command collapsed, then the verdict first, in colour, never cut mid-word", async () => {
    const { plain, joined, escaped } = await screen("live", common());
    expect(plain).toMatch(/\[exit 0\]/);
    // Steps persist with a mark; a single command's line does not.
    expect(plain).toMatch(/^✓ \[triage\] null-dereference in send_to_client/m);
    expect(plain).toMatch(/^✓ \[evaluator\] H1 confirmed/m);
    expect(plain).not.toMatch(/\[tester\] H1: p session->client \(E\d+/);
    // The verdict comes before the reasons and the paths.
    const verdict = plain.indexOf("Null dereference in send_to_client (null-deref.c:27)");
    expect(verdict).toBeGreaterThan(plain.indexOf("[critic]"));
    expect(plain.indexOf("Why: ")).toBeGreaterThan(verdict);
    expect(plain.indexOf("Confidence: high")).toBeGreaterThan(verdict);
    expect(plain.indexOf("Reports:")).toBeGreaterThan(plain.indexOf("Confidence: high"));
    // Our lines fit the terminal: joining the lines the terminal wrapped changes nothing.
    expect(joined).toBe(plain);
    // Bold red verdict.
    expect(escaped).toMatch(/\x1b\[1m.*\x1b\[31m.*Null dereference in send_to_client/);
  }, 90_000);

  it("prints no colour with NO_COLOR, the verdict and paths alone with --quiet, every line with --verbose", async () => {
    const noColour = await screen("nocolour", common(), { NO_COLOR: "1" });
    const verdictLine = noColour.escaped.split("\n").find((line) => line.includes("Null dereference in send_to_client"));
    expect(verdictLine).toBe("Null dereference in send_to_client (null-deref.c:27)");
    const quiet = await screen("quiet", [...common(), "--quiet"]);
    const lines = quiet.plain.split("\n").filter((line) => line.trim() !== "");
    expect(lines[0]).toBe("Null dereference in send_to_client (null-deref.c:27)");
    expect(lines.slice(1, 4).every((line) => /^ {2}\/.*\.(md|html|json)$/.test(line))).toBe(true);
    expect(lines[4]).toBe("[exit 0]");
    const verbose = await screen("verbose", [...common(), "--verbose"]);
    expect(verbose.joined).toMatch(/^\[tester\] H1: p session->client \(E\d+, \d+ ms\)$/m);
  }, 120_000);
});
