/**
 * `dumpdbg batch` over a folder of Go services' cores, as an SRE holds them after a bad deploy: the
 * same panic dumped twice, and another bug. Go cores are grouped by their user frames (the
 * signature skips Go's runtime), so the two nil-map panics are one bug and the index panic another.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { runCli } from "../helpers/cli.js";
import { buildGoCore } from "../helpers/go.js";

describe("dumpdbg batch over Go cores", () => {
  it("groups the same panic dumped twice as one bug, apart from another, by the user frames", async () => {
    const [nilMap, indexRange] = await Promise.all([buildGoCore("nil-map"), buildGoCore("index-range")]);
    const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-go-batch-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const dumps = path.join(dir, "cores");
    mkdirSync(dumps);
    // The program each core names in its notes is where the fixture was built: batch finds it there.
    copyFileSync(nilMap.core, path.join(dumps, "cache-1.core"));
    copyFileSync(nilMap.core, path.join(dumps, "cache-2.core"));
    copyFileSync(indexRange.core, path.join(dumps, "queue-1.core"));

    const result = await runCli(["batch", dumps, "--jobs", "2", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout) as { groups: { kind: string; signature: string; count: number; members: string[]; culprit: { function: string | null } }[]; errors: unknown[] };
    expect(doc.errors).toEqual([]);
    const bySignature = Object.fromEntries(doc.groups.map((g) => [g.signature, g]));
    expect(Object.keys(bySignature).sort()).toEqual(["panic | main.(*Cache).Put | main.load | main.main", "panic | main.(*Queue).Next | main.drain | main.main"]);
    expect(bySignature["panic | main.(*Cache).Put | main.load | main.main"]).toMatchObject({ kind: "panic", count: 2, culprit: { function: "main.(*Cache).Put" } });
    expect(bySignature["panic | main.(*Queue).Next | main.drain | main.main"]).toMatchObject({ kind: "panic", count: 1, culprit: { function: "main.(*Queue).Next" } });
  }, 180_000);
});
