/** `dumpdbg sessions ...` through the built CLI: a table of argv → behaviour on real session folders. */
import { existsSync, mkdirSync, mkdtempSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { createSession, updateSession } from "../../src/evidence/sessions.js";
import { runCli } from "../helpers/cli.js";

let root: string;
let ids: string[];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "dumpdbg-sessions-cli-"));
  ids = ["core.server", "core.worker", "crash.dmp"].map(
    (dump, i) =>
      createSession(root, { dump: `/var/crash/${dump}`, executable: null, debugger: { backend: "gdb", path: "gdb", version: null }, issue: `issue ${i}` }).id,
  );
});

describe("dumpdbg sessions", () => {
  it("list shows every session, oldest first", async () => {
    const run = await runCli(["sessions", "list", "--sessions-dir", root]);
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual([...ids].sort());
    expect(run.stdout).toMatch(/"issue 0"/);
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

  it("rm removes a session and nothing else", async () => {
    const run = await runCli(["sessions", "rm", ids[1]!, "--sessions-dir", root]);
    expect(run.code).toBe(0);
    expect(existsSync(join(root, ids[1]!))).toBe(false);
    expect(existsSync(join(root, ids[0]!))).toBe(true);
  });

  it("rm refuses ids that would leave the sessions folder", async () => {
    const outside = mkdtempSync(join(tmpdir(), "dumpdbg-outside-"));
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
    expect(existsSync(join(root, [...ids].sort()[2]!))).toBe(true);
    expect(existsSync(join(root, "not-a-session"))).toBe(true);
  });

  it("cleanup without --days or --keep is a usage error", async () => {
    const run = await runCli(["sessions", "cleanup", "--sessions-dir", root]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/cleanup needs --days N, --keep K, or both/);
  });
});
