/**
 * Where things live: config files (the project's and the user's), their precedence under flags
 * and environment variables, the default home of sessions, `dumpdbg config`, and session ids given
 * by a unique prefix. Real CLI runs in folders of their own.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { runCli } from "../helpers/cli.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

let core: BuiltCore;
beforeAll(async () => {
  core = await buildCore("null-deref");
});

/** A fresh folder, and an environment where no outside setting leaks in. */
function place(): { dir: string; env: Record<string, string | undefined> } {
  const dir = tempDir("dumpdbg-config-");
  return { dir, env: { DUMPDBG_SESSIONS_DIR: undefined, DUMPDBG_HOME: undefined, DUMPDBG_GDB: undefined, XDG_CONFIG_HOME: join(dir, "xdg-config"), XDG_STATE_HOME: join(dir, "xdg-state") } };
}

type Row = { setting: string; value: string; from: string };
async function settings(cwd: string, env: Record<string, string | undefined>): Promise<Record<string, Row>> {
  const run = await runCli(["config", "--json"], { cwd, env });
  expect(run.code, run.stderr).toBe(0);
  return Object.fromEntries((JSON.parse(run.stdout) as { settings: Row[] }).settings.map((row) => [row.setting, row]));
}

describe("config files", () => {
  it("a project's file sets the provider and the folders, relative to the file, for a run from a subfolder", async () => {
    const { dir, env } = place();
    writeFileSync(join(dir, "dumpdbg.config.json"), JSON.stringify({ provider: "offline", sessionsDir: "state/sessions", reportsDir: "out" }));
    const sub = join(dir, "src", "server");
    mkdirSync(sub, { recursive: true });
    const run = await runCli(["analyze", core.core, "--exe", core.exe], { cwd: sub, env });
    expect(run.code, run.stderr).toBe(0);
    expect(readdirSync(join(dir, "state", "sessions")).filter((name) => !name.endsWith(".json"))).toHaveLength(1);
    expect(readdirSync(join(dir, "out")).some((name) => name.endsWith(".md"))).toBe(true);
    expect(run.stderr).toMatch(/models: offline/);
    const shown = await settings(sub, env);
    expect(shown.provider).toEqual({ setting: "provider", value: "offline", from: join(dir, "dumpdbg.config.json") });
    expect(shown.sessionsDir!.value).toBe(join(dir, "state", "sessions"));
  }, 60_000);

  it("flags win over environment variables, which win over the project's file, which wins over the user's", async () => {
    const { dir, env } = place();
    mkdirSync(join(dir, "xdg-config", "dumpdbg"), { recursive: true });
    writeFileSync(join(dir, "xdg-config", "dumpdbg", "config.json"), JSON.stringify({ model: "user-model", gdb: "/opt/gdb-user/bin/gdb", provider: "anthropic" }));
    writeFileSync(join(dir, ".dumpdbgrc"), JSON.stringify({ provider: "offline" }));
    let shown = await settings(dir, env);
    expect(shown.provider).toMatchObject({ value: "offline", from: join(dir, ".dumpdbgrc") });
    expect(shown.model).toMatchObject({ value: "user-model", from: join(dir, "xdg-config", "dumpdbg", "config.json") });
    expect(shown.gdb).toMatchObject({ value: "/opt/gdb-user/bin/gdb" });
    shown = await settings(dir, { ...env, DUMPDBG_GDB: "/usr/bin/gdb" });
    expect(shown.gdb).toMatchObject({ value: "/usr/bin/gdb", from: "$DUMPDBG_GDB" });
    // The user's gdb reaches the command; a flag wins over it.
    const fromFile = await runCli(["doctor", "--json"], { cwd: dir, env });
    expect(JSON.parse(fromFile.stdout).find((f: { name: string }) => f.name === "gdb")).toMatchObject({ ok: false, detail: "/opt/gdb-user/bin/gdb: not found" });
    const fromFlag = await runCli(["doctor", "--json", "--gdb", "gdb"], { cwd: dir, env });
    expect(JSON.parse(fromFlag.stdout).find((f: { name: string }) => f.name === "gdb")).toMatchObject({ ok: true });
  });

  it("a config file with an unknown setting or bad JSON is a one-line usage error naming the file", async () => {
    const { dir, env } = place();
    writeFileSync(join(dir, "dumpdbg.config.json"), JSON.stringify({ provider: "offline", colour: "always" }));
    const unknown = await runCli(["triage", core.core], { cwd: dir, env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(`dumpdbg: config file ${join(dir, "dumpdbg.config.json")}: unknown setting "colour" (known: provider, model, localModel, gdb, lldb, cdb, dlv, sessionsDir, reportsDir, symbols, symbolsCache)\n`);
    writeFileSync(join(dir, "dumpdbg.config.json"), "{ provider: offline");
    const broken = await runCli(["config"], { cwd: dir, env });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^dumpdbg: config file .*dumpdbg\.config\.json is not valid JSON: /);
    expect(broken.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("outside a project, sessions live in dumpdbg's home: $DUMPDBG_HOME, else the XDG state folder", async () => {
    const { dir, env } = place();
    expect((await settings(dir, env)).sessionsDir).toMatchObject({ value: join(dir, "xdg-state", "dumpdbg", "sessions"), from: expect.stringMatching(/^default \(no project here/) });
    expect((await settings(dir, { ...env, DUMPDBG_HOME: join(dir, "home") })).sessionsDir!.value).toBe(join(dir, "home", "sessions"));
    // A .sessions folder already here is used, as before.
    mkdirSync(join(dir, ".sessions"));
    expect((await settings(dir, env)).sessionsDir!.value).toBe(join(dir, ".sessions"));
    const table = await runCli(["config"], { cwd: dir, env });
    expect(table.stdout).toMatch(/^SETTING +VALUE +FROM$/m);
    expect(table.stdout).toMatch(/^user config: +none \(/m);
  });
});

describe("session ids", () => {
  it("can be given by any unique prefix; an ambiguous one lists the candidates", async () => {
    const { dir, env } = place();
    const sessions = join(dir, "sessions");
    for (let i = 0; i < 2; i++) {
      const run = await runCli(["analyze", core.core, "--exe", core.exe, "--provider", "offline", "--sessions-dir", sessions, "--out", join(dir, "reports")], { env });
      expect(run.code, run.stderr).toBe(0);
    }
    const ids = readdirSync(sessions).filter((name) => existsSync(join(sessions, name, "session.json"))).sort();
    expect(ids).toHaveLength(2);
    // The shortest prefix that names only the first.
    let prefix = "";
    for (let n = 1; n <= ids[0]!.length; n++) {
      prefix = ids[0]!.slice(0, n);
      if (!ids[1]!.startsWith(prefix)) break;
    }
    const show = await runCli(["sessions", "show", prefix, "--sessions-dir", sessions], { env });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^session +${ids[0]}$`, "m"));
    const report = await runCli(["report", prefix, "--format", "md", "--sessions-dir", sessions, "--out", join(dir, "again")], { env });
    expect(report.code, report.stderr).toBe(0);
    const common = ids[0]!.slice(0, 8);
    const ambiguous = await runCli(["sessions", "show", common, "--sessions-dir", sessions], { env });
    expect(ambiguous.code).toBe(3);
    expect(ambiguous.stderr).toBe(`dumpdbg: "${common}" is the start of 2 sessions (${ids[0]}, ${ids[1]}); give more of the id\n`);
  }, 60_000);
});
