/**
 * `dumpdbg batch` on a folder of real cores: five bugs (two of them null dereferences, two of them
 * deadlocks), each from two builds of its program, plus a truncated core and a file that is no dump.
 * It must group exactly by bug: both builds of a bug together, different bugs of one kind apart.
 */
import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { groupByBug, stackSimilarity, type Triaged } from "../../src/batch/grouping.js";
import { runCli } from "../helpers/cli.js";
import { bugFolder, expectGroupedByBug } from "../helpers/bug-folder.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();


describe("dumpdbg batch", () => {
  it("groups a folder of dumps exactly by bug, lists what it could not read, and writes its report", async () => {
    const dir = tempDir("dumpdbg-batch-");
    const { dumps, placed } = await bugFolder(path.join(dir, "dumps"), { nested: true, strays: "README.txt" });

    const result = await runCli(["batch", dumps, "--jobs", "2", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout);
    expectGroupedByBug(doc.groups, placed);
    expect(doc.errors).toEqual([{ dump: path.join(dumps, "cut.core"), error: expect.stringMatching(/is truncated/) }]);
    expect(doc.skipped).toEqual([{ path: path.join(dumps, "README.txt"), reason: "not a crash dump" }]);
    const markdown = readFileSync(path.join(dir, "reports", readdirSync(path.join(dir, "reports")).find((f) => f.endsWith(".md")) ?? ""), "utf8");
    const html = readFileSync(path.join(dir, "reports", readdirSync(path.join(dir, "reports")).find((f) => f.endsWith(".html")) ?? ""), "utf8");
    expect(html).not.toMatch(/<script src=|<link /);
    expect(html).toMatch(/<input id="filter"/);
    expect(markdown).toMatch(/^# Batch \S+: 5 bugs in 10 dumps$/m);
    expect(markdown).toMatch(/\| G\d \| null-dereference \| probably-not-exploitable \| `send_to_client` at `null-deref\.c:\d+` \| 2 \|/);
    // A NULL write rates above a NULL read; a deadlock is no exploit.
    expect(markdown).toMatch(/\| G\d \| null-dereference \| probably-exploitable \| `cache_store` at `null-write\.c:\d+` \| 2 \|/);
    expect(markdown).toMatch(/\| G\d \| deadlock \| not-exploitable \| `transfer_funds`/);

    // A second batch over the same files reuses what the first triaged, and groups the same.
    const again = await runCli(["batch", dumps, "--jobs", "2", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/10 dumps were triaged by an earlier batch and reused/);
    expect(JSON.parse(again.stdout).groups).toEqual(doc.groups);
  }, 300_000);

  it("stops cleanly on Ctrl+C, keeps what is done, and a rerun goes on", async () => {
    const dir = tempDir("dumpdbg-batch-stop-");
    const { dumps } = await bugFolder(path.join(dir, "dumps"));
    const args = ["batch", dumps, "--jobs", "1", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")];
    const stopped = await runCli(args, {
      onSpawn(child) {
        let seen = "";
        let sent = false;
        child.stderr?.on("data", (chunk: Buffer) => {
          seen += chunk.toString("utf8");
          if (!sent && /batch: 2\/10 dumps/.test(seen)) {
            sent = true;
            child.kill("SIGINT");
          }
        });
      },
    });
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toMatch(/interrupted: \d+ dumps not triaged yet; run the same batch again to go on/);
    expect(readdirSync(path.join(dir, "reports")).some((f) => f.endsWith(".md"))).toBe(true);
    const resumed = await runCli(args);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/[2-9] dumps were triaged by an earlier batch and reused/);
    expect(resumed.stdout).toMatch(/^5 bugs in 10 dumps/);
  }, 300_000);

  it("keeps one gdb per job from dump to dump, and each dump reads as a gdb of its own reads it", async () => {
    const dir = tempDir("dumpdbg-batch-kept-");
    const { dumps, placed } = await bugFolder(path.join(dir, "dumps"));
    // A gdb that notes each start of itself (exec keeps the pid: the gdb it starts is the one noted).
    const starts = path.join(dir, "gdb-starts");
    const gdb = path.join(dir, "gdb");
    writeFileSync(gdb, `#!/bin/sh\necho $$ >> ${JSON.stringify(starts)}\nexec gdb "$@"\n`);
    chmodSync(gdb, 0o755);
    const sessions = path.join(dir, "sessions");
    const result = await runCli(["batch", dumps, "--jobs", "1", "--gdb", gdb, "--json", "--out", path.join(dir, "reports"), "--sessions-dir", sessions]);
    expect(result.code, result.stderr).toBe(0);
    expectGroupedByBug(JSON.parse(result.stdout).groups, placed);
    // Ten dumps, one job: one gdb read them all, and none is left running after the batch.
    const pids = readFileSync(starts, "utf8").trim().split("\n").map(Number);
    expect(pids).toHaveLength(1);
    expect(() => process.kill(pids[0]!, 0)).toThrow(/ESRCH/);

    // What each dump's triage said in the batch is what `triage` says with a gdb started for it.
    const cached = Object.values(JSON.parse(readFileSync(path.join(sessions, "batch-triage.json"), "utf8")) as Record<string, Triaged>);
    expect(cached).toHaveLength(10);
    for (const triaged of cached) {
      const alone = await runCli(["triage", triaged.dump, "--json"]);
      expect(alone.code, alone.stderr).toBe(0);
      const crash = JSON.parse(alone.stdout) as { kind: string; signature: string; culprit: Triaged["culprit"]; origin: { type: string } | null; exploitability: { rating: string } | null };
      expect({ kind: triaged.kind, signature: triaged.signature, function: triaged.culprit.function, line: triaged.culprit.line, origin: triaged.origin, exploitability: triaged.exploitability }, triaged.dump).toEqual({
        kind: crash.kind,
        signature: crash.signature,
        function: crash.culprit.function,
        line: crash.culprit.line,
        origin: crash.origin?.type ?? null,
        exploitability: crash.exploitability?.rating ?? null,
      });
    }
  }, 300_000);

  it("exits 3 when nothing at all could be read", async () => {
    const dir = tempDir("dumpdbg-batch-empty-");
    writeFileSync(path.join(dir, "notes.txt"), "nothing here\n");
    const result = await runCli(["batch", dir, "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^dumpdbg: no dump found$/m);
  });
});

describe("grouping by bug", () => {
  const dump = (name: string, kind: Triaged["kind"], frames: string[], line: number | null = 10): Triaged => ({
    dump: name,
    kind,
    signature: [kind, ...frames.slice(0, 3)].join(" | "),
    frames,
    culprit: { function: frames[0] ?? null, file: "a.c", line },
    completeness: (line !== null ? 10 : 0) + frames.length,
    modifiedAt: "2026-01-01T00:00:00.000Z",
    buildId: null,
  });

  it("weighs frames near the culprit more than far ones", () => {
    expect(stackSimilarity(["f", "g", "h"], ["f", "g", "h"])).toBe(1);
    expect(stackSimilarity(["f", "g", "x"], ["f", "g", "y"])).toBeGreaterThan(stackSimilarity(["x", "g", "h"], ["y", "g", "h"]));
    expect(stackSimilarity([], [])).toBe(0);
  });

  it("joins a bug reached from another outer caller, keeps one kind's different culprits apart, and takes the most complete dump", () => {
    const groups = groupByBug([
      dump("a", "null-dereference", ["send", "broadcast", "main", "start"], null),
      dump("b", "null-dereference", ["send", "broadcast", "serve", "start"]),
      dump("c", "null-dereference", ["store", "main"]),
      dump("d", "deadlock", ["send", "broadcast", "main", "start"]),
    ]);
    // The biggest first; groups of one size by signature.
    expect(groups.map((g) => g.members.map((m) => m.dump))).toEqual([["a", "b"], ["d"], ["c"]]);
    expect(groups[0]?.representative.dump).toBe("b");
    expect(groups[0]?.culprit.line).toBe(10);
  });
});

describe("dumpdbg batch --analyze", () => {
  it("analyses each bug once, on its most complete dump, links the analysis, and reuses it on the next run", async () => {
    const dir = tempDir("dumpdbg-batch-analyze-");
    const { dumps } = await bugFolder(path.join(dir, "dumps"), { bugs: ["null-deref", "div-zero"] });
    const args = ["batch", dumps, "--analyze", "--jobs", "2", "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")];
    const first = await runCli(args);
    expect(first.code, first.stderr).toBe(0);
    const doc = JSON.parse(first.stdout);
    expect(doc.groups).toHaveLength(2);
    for (const group of doc.groups) {
      expect(group.analysis).toMatch(/\.md$/);
      expect(readFileSync(group.analysis, "utf8")).toMatch(new RegExp(`^# .* in \`${group.culprit.function}\``, "m"));
    }
    const sessions = () => readdirSync(path.join(dir, "sessions")).filter((name) => !name.endsWith(".json"));
    expect(sessions()).toHaveLength(2);
    const second = await runCli(args);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).groups.map((g: { analysis: string }) => g.analysis)).toEqual(doc.groups.map((g: { analysis: string }) => g.analysis));
    expect(sessions()).toHaveLength(2);
  }, 300_000);
});
