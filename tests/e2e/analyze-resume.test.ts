/**
 * Resume: an analysis killed with SIGKILL in the middle of its graph continues with `dumpdbg
 * resume <id>` from the last checkpoint in the session's evidence.db, ends in the same kind of
 * report as an uninterrupted run, and neither loses nor repeats evidence. The killed run leaves
 * nothing in the temporary folder (gdb's output log is unlinked once gdb and dumpdbg hold it open).
 */
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ReportSchema } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { buildCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

describe("dumpdbg resume", () => {
  it("continues a run killed mid-graph, from its checkpoint, without running any command twice", async () => {
    const built = await buildCore("null-deref");
    const dir = tempDir("dumpdbg-resume-");
    const privateTemp = tempDir("dumpdbg-resume-tmp-");
    const common = ["--provider", "offline", "--out", "reports", "--sessions-dir", "sessions"];

    let sessionId: string | null = null;
    const killed = await runCli(["analyze", built.core, "--exe", built.exe, "--issue", "dies on disconnect", ...common], {
      cwd: dir,
      env: { TMPDIR: privateTemp },
      onSpawn(child) {
        let seen = "";
        child.stderr?.on("data", (chunk: Buffer) => {
          seen += chunk.toString("utf8");
          sessionId ??= /^session (\S+);/m.exec(seen)?.[1] ?? null;
          // The first tester command: triage and the hypotheses are checkpointed, the graph is mid-run.
          if (/^\[tester\] H1: /m.test(seen)) child.kill("SIGKILL");
        });
      },
    });
    expect(killed.signal).toBe("SIGKILL");
    expect(readdirSync(privateTemp)).toEqual([]);
    expect(sessionId).not.toBeNull();
    const id = sessionId as unknown as string;
    const sessionDir = path.join(dir, "sessions", id);
    expect(JSON.parse(readFileSync(path.join(sessionDir, "session.json"), "utf8")).state).toBe("running");
    const before = rows(sessionDir);
    expect(before.length).toBeGreaterThan(8);

    const resumed = await runCli(["resume", id, "--json", ...common], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/^resuming session /m);
    expect(resumed.stderr).not.toMatch(/^\[triage\]|^\[hypothesis\]/m);
    const report = ReportSchema.parse(JSON.parse(resumed.stdout));
    expect(JSON.parse(readFileSync(path.join(sessionDir, "session.json"), "utf8")).state).toBe("done");

    // Nothing lost: every row of the killed run is still there, first, unchanged; nothing repeated.
    const after = rows(sessionDir);
    expect(after.slice(0, before.length)).toEqual(before);
    const keys = after.map((r) => `${r.command}|${r.thread}|${r.frame}`);
    expect(keys.length).toBe(new Set(keys).size);
    expect(report.evidence.map((e) => e.id)).toEqual(after.map((r) => `E${r.seq}`));

    // The same kind of report as a run that was never interrupted.
    const whole = await runCli(["analyze", built.core, "--exe", built.exe, "--issue", "dies on disconnect", "--json", ...common], { cwd: dir });
    expect(whole.code, whole.stderr).toBe(0);
    const reference = ReportSchema.parse(JSON.parse(whole.stdout));
    expect(report.crash).toEqual(reference.crash);
    expect(report.hypotheses.map((h) => [h.id, h.statement, h.status])).toEqual(reference.hypotheses.map((h) => [h.id, h.statement, h.status]));
    expect(report.conclusion.summary).toBe(reference.conclusion.summary);
    expect(report.critique.rounds.map((r) => r.round)).toEqual([1, 2]);

    // Checkpoints are written as LangGraph's own serializer writes them (src/evidence/checkpoints.ts).
    await expectWrittenAsLangGraphWrites(sessionDir);
  });
});

/** Every checkpoint, its metadata and every node's write, byte for byte as JsonPlusSerializer writes what it reads back. */
async function expectWrittenAsLangGraphWrites(sessionDir: string): Promise<void> {
  const serde = new JsonPlusSerializer();
  const db = new Database(path.join(sessionDir, "evidence.db"), { readonly: true });
  try {
    const stored = [
      ...(db.prepare("SELECT type, checkpoint AS value FROM checkpoints UNION ALL SELECT type, metadata AS value FROM checkpoints").all() as { type: string; value: Buffer }[]),
      ...(db.prepare("SELECT type, value FROM writes").all() as { type: string; value: Buffer }[]),
    ];
    expect(stored.length).toBeGreaterThan(20);
    for (const { type, value } of stored) {
      const [againType, again] = await serde.dumpsTyped(await serde.loadsTyped(type, value));
      expect(againType).toBe(type);
      expect(Buffer.from(again).toString("utf8")).toBe(Buffer.from(value).toString("utf8"));
    }
  } finally {
    db.close();
  }
}

function rows(sessionDir: string): { seq: number; command: string; thread: number | null; frame: number | null; summary: string }[] {
  const db = new Database(path.join(sessionDir, "evidence.db"), { readonly: true });
  try {
    return db.prepare("SELECT seq, command, thread, frame, summary FROM evidence ORDER BY seq").all() as never;
  } finally {
    db.close();
  }
}
