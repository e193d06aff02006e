/** `dumpdbg sessions ...` through the built CLI: a table of argv → behaviour on real session folders. */
import { existsSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { createSession, updateSession } from "../../src/evidence/sessions.js";
import { runCli } from "../helpers/cli.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

let root: string;
let ids: string[];

beforeEach(() => {
  root = tempDir("dumpdbg-sessions-cli-");
  ids = ["core.server", "core.worker", "crash.dmp"].map(
    (dump, i) =>
      createSession(root, { dump: `/var/crash/${dump}`, executable: null, debugger: { backend: "gdb", path: "gdb", version: null }, issue: `issue ${i}` }).id,
  );
});

describe("dumpdbg sessions", () => {
  it("list is a table, oldest first, with each session's verdict; a run killed without a word is interrupted", async () => {
    const [done, killed] = [...ids].sort();
    updateSession(root, done!, { state: "done" });
    writeFileSync(join(root, done!, "report.json"), JSON.stringify({ report: { crash: { kind: "null-dereference", culprit: { function: "send_to_client" } } } }));
    // Marked running, and its lock names a process that no longer exists.
    updateSession(root, killed!, { state: "running" });
    writeFileSync(join(root, killed!, "lock"), "2147483646\n");
    const run = await runCli(["sessions", "list", "--sessions-dir", root]);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^SESSION +STATE +VERDICT +UPDATED +DUMP$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual([...ids].sort());
    // Aligned: every row's STATE starts where the header's does.
    const column = lines[0]!.indexOf("STATE");
    for (const line of lines.slice(1)) expect(line.slice(column)).toMatch(/^(done|interrupted|created) /);
    expect(lines[1]).toMatch(/ done +null-dereference in send_to_client +\d{4}-\d\d-\d\d \d\d:\d\d +\/var\/crash\//);
    expect(lines[2]).toMatch(/ interrupted +- /);
    const json = JSON.parse((await runCli(["sessions", "list", "--json", "--sessions-dir", root])).stdout) as Array<{ id: string; state: string; verdict: string | null }>;
    expect(json.find((s) => s.id === killed)?.state).toBe("interrupted");
    expect(json.find((s) => s.id === done)?.verdict).toBe("null-dereference in send_to_client");
  });

  it("list --json is machine-readable, and DUMPDBG_SESSIONS_DIR is honoured", async () => {
    const run = await runCli(["sessions", "list", "--json"], { env: { DUMPDBG_SESSIONS_DIR: root } });
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as Array<{ id: string }>).map((s) => s.id).sort()).toEqual([...ids].sort());
  });

  it("show prints one session's details", async () => {
    updateSession(root, ids[0]!, { state: "done" });
    const run = await runCli(["sessions", "show", ids[0]!, "--sessions-dir", root]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^state +done$/m);
    expect(run.stdout).toMatch(/^dump +\/var\/crash\/core\.server$/m);
  });

  it("rm removes a session and its reports, and nothing else", async () => {
    const reports = tempDir("dumpdbg-sessions-reports-");
    const ours = join(reports, `${ids[1]}.md`);
    const replaced = join(reports, `${ids[1]}.html`);
    writeFileSync(ours, "<!-- dumpdbg report -->\n\n# Null dereference\n");
    // A file the user put where the HTML report was: not ours any more, kept.
    writeFileSync(replaced, "<html>my notes</html>");
    updateSession(root, ids[1]!, { reports: [ours, replaced, join(reports, "gone.json")] });
    const run = await runCli(["sessions", "rm", ids[1]!, "--sessions-dir", root]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`removed ${ids[1]} and its 1 report file\n`);
    expect(existsSync(join(root, ids[1]!))).toBe(false);
    expect(existsSync(join(root, ids[0]!))).toBe(true);
    expect(existsSync(ours)).toBe(false);
    expect(existsSync(replaced)).toBe(true);
  });

  it("rm refuses ids that would leave the sessions folder", async () => {
    const outside = tempDir("dumpdbg-outside-");
    writeFileSync(join(outside, "session.json"), "{}");
    symlinkSync(outside, join(root, "escape"));
    for (const id of ["../x", "..", "/etc", "escape"]) {
      const run = await runCli(["sessions", "rm", id, "--sessions-dir", root]);
      expect(run.code).toBe(3);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(existsSync(join(outside, "session.json"))).toBe(true);
  });

  it("show of an unknown id is a one-line error with exit 3", async () => {
    const run = await runCli(["sessions", "show", "20990101-000000-nope-0000", "--sessions-dir", root]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^dumpdbg: no session "20990101-000000-nope-0000"/);
  });

  it("cleanup removes old sessions but keeps the newest K", async () => {
    const old = new Date(Date.now() - 10 * 86_400_000).toISOString();
    const oldest = [...ids].sort()[0]!;
    const report = join(tempDir("dumpdbg-sessions-reports-"), `${oldest}.md`);
    writeFileSync(report, "<!-- dumpdbg report -->\n\n# Deadlock\n");
    updateSession(root, oldest, { reports: [report] });
    for (const id of ids) {
      const meta = join(root, id, "session.json");
      const json = JSON.parse((await import("node:fs")).readFileSync(meta, "utf8")) as Record<string, unknown>;
      writeFileSync(meta, JSON.stringify({ ...json, updatedAt: old }));
      utimesSync(meta, new Date(old), new Date(old));
    }
    mkdirSync(join(root, "not-a-session"));
    const run = await runCli(["sessions", "cleanup", "--days", "7", "--keep", "1", "--sessions-dir", root]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/2 removed, 1 left/);
    expect(run.stdout).toMatch(/^removed 1 report file of those sessions$/m);
    expect(existsSync(report)).toBe(false);
    expect(existsSync(join(root, [...ids].sort()[2]!))).toBe(true);
    expect(existsSync(join(root, "not-a-session"))).toBe(true);
  });

  it("cleanup without --days or --keep is a usage error", async () => {
    const run = await runCli(["sessions", "cleanup", "--sessions-dir", root]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/cleanup needs --days N, --keep K, or both/);
  });
});
