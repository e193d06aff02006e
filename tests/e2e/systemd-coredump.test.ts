/**
 * systemd-coredump's store as a machine keeps it: real cores compressed with zstd and lz4, named
 * `core.<comm>.<uid>.<boot id>.<pid>.<µs>.zst` and tagged with `setfattr` as systemd does. Their
 * attributes are evidence (and the program, when the core's own path is gone); `--coredump` picks
 * the newest, by pid or program, from the folder or from coredumpctl's list; batch reads the store.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const BOOT = "0123456789abcdef0123456789abcdef";

let nullDeref: BuiltCore;
let abort: BuiltCore;
let store: string;
let tmp: string;
const env = (more: Record<string, string> = {}) => ({ TMPDIR: tmp, DUMPDBG_COREDUMP_DIR: store, DUMPDBG_COREDUMPCTL: "/nonexistent/coredumpctl", ...more });

/** A core stored as systemd-coredump stores it: compressed, named, and tagged. */
function stored(core: BuiltCore, comm: string, pid: number, time: number, tool: "zstd" | "lz4", tags: Record<string, string>): string {
  const file = path.join(store, `core.${comm}.1000.${BOOT}.${pid}.${time}.${tool === "zstd" ? "zst" : "lz4"}`);
  writeFileSync(file, execFileSync(tool, ["-q", "-c", core.core]));
  for (const [name, value] of Object.entries(tags)) execFileSync("setfattr", ["-n", `user.coredump.${name}`, "-v", value, file]);
  return file;
}

beforeAll(async () => {
  [nullDeref, abort] = await Promise.all([buildCore("null-deref"), buildCore("abort")]);
  store = tempDir("dumpdbg-store-");
  tmp = tempDir("dumpdbg-store-tmp-");
  stored(nullDeref, "null-deref", 4242, 1764410000000000, "zstd", { exe: nullDeref.exe, pid: "4242", signal: "11", timestamp: "1764410000000000", comm: "null-deref", hostname: "buildbox" });
  stored(nullDeref, "null-deref", 4300, 1764410100000000, "lz4", { exe: nullDeref.exe, pid: "4300", signal: "11", timestamp: "1764410100000000", comm: "null-deref", hostname: "buildbox" });
  stored(abort, "abort", 5000, 1764410050000000, "zstd", { exe: abort.exe, pid: "5000", signal: "6" });
}, 300_000);

describe("systemd-coredump", () => {
  it("shows what systemd recorded of a stored core", async () => {
    const file = readdirSync(store).find((n) => n.includes(".4242."))!;
    const result = await runCli(["triage", path.join(store, file)], { env: env() });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/null pointer dereference/);
    expect(result.stderr).toContain(`systemd-coredump recorded program ${nullDeref.exe}, pid 4242, uid 1000, signal 11, at 2025-11-29T09:53:20.000Z, on buildbox`);
  });

  it("takes the program from the attributes, before the path the core names", async () => {
    // A copy of the program elsewhere, named by the attribute: the debugger is given it.
    const moved = tempDir("dumpdbg-moved-");
    const exe = path.join(moved, "null-deref-moved");
    copyFileSync(nullDeref.exe, exe);
    const own = tempDir("dumpdbg-own-store-");
    const file = path.join(own, `core.null-deref.1000.${BOOT}.77.1764410000000000.zst`);
    writeFileSync(file, execFileSync("zstd", ["-q", "-c", nullDeref.core]));
    execFileSync("setfattr", ["-n", "user.coredump.exe", "-v", exe, file]);
    const result = await runCli(["exec", file, "-c", "info inferiors", "-c", "bt 1"], { env: env() });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(exe);
    expect(result.stdout).toContain("send_to_client");
  });

  it("--coredump picks the newest core, of a pid or of a program, from the folder", async () => {
    const newest = await runCli(["triage", "--coredump", "--json"], { env: env() });
    expect(newest.code).toBe(0);
    expect(newest.stderr).toContain("pid 4300");
    const byName = await runCli(["triage", "--coredump", "abort"], { env: env() });
    expect(byName.code).toBe(0);
    expect(byName.stdout).toMatch(/abort/i);
    expect(byName.stderr).toContain("pid 5000");
    const byPid = await runCli(["triage", "--coredump", "4242"], { env: env() });
    expect(byPid.stderr).toContain("pid 4242");
    const none = await runCli(["triage", "--coredump", "nginx"], { env: env() });
    expect(none.code).toBe(3);
    expect(none.stderr).toBe(`dumpdbg: no core of nginx in systemd-coredump's store ${store} (DUMPDBG_COREDUMP_DIR)\n`);
    const both = await runCli(["triage", "core", "--coredump"], { env: env() });
    expect(both.code).toBe(2);
  });

  it("--coredump follows coredumpctl's list when the journal has one", async () => {
    const fake = path.join(tempDir("dumpdbg-ctl-"), "coredumpctl");
    // The journal's newest crash of null-deref is pid 4242 (its other core predates the journal).
    writeFileSync(fake, `#!/bin/sh\necho '[{"time":1764410000000000,"pid":4242,"uid":1000,"gid":1000,"sig":11,"corefile":"present","exe":"${nullDeref.exe}","size":1}]'\n`);
    chmodSync(fake, 0o755);
    const result = await runCli(["triage", "--coredump", "null-deref"], { env: env({ DUMPDBG_COREDUMPCTL: fake }) });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("pid 4242");
  });

  it("batch --coredump triages the whole store, one row per bug", async () => {
    const out = tempDir("dumpdbg-store-out-");
    mkdirSync(path.join(out, "sessions"));
    const result = await runCli(["batch", "--coredump", "--json", "--jobs", "2", "--out", out, "--sessions-dir", path.join(out, "sessions")], { env: env() });
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout) as { groups: { kind: string; count: number }[] };
    expect(doc.groups.map((g) => [g.kind, g.count]).sort()).toEqual([["abort", 1], ["null-dereference", 2]]);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
