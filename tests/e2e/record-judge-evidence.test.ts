/**
 * Records the evidence tests/unit/playbook-judges.test.ts judges: for each program with a file in
 * tests/fixtures/evidence/, an offline analysis with gdb through the built CLI, then the recorded
 * triage and the output of every command a judge looks up, with the fixture programs' folder as
 * `<programs>` and the build's as `<build>`. Runs only when asked, after a change to what a judge
 * asks or to a fixture program: DUMPDBG_RECORD_EVIDENCE=1 npx vitest run tests/e2e/record-judge-evidence.test.ts
 */
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { evidenceOf, type Evidence } from "../../src/agents/evidence.js";
import { playbookOf } from "../../src/agents/playbooks/index.js";
import { gdbVocabulary } from "../../src/debuggers/gdb/vocabulary.js";
import { EvidenceStore } from "../../src/evidence/store.js";
import type { State } from "../../src/state.js";
import { runCli } from "../helpers/cli.js";
import { buildCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const EVIDENCE_DIR = fileURLToPath(new URL("../fixtures/evidence/", import.meta.url));
const PROGRAMS_DIR = fileURLToPath(new URL("../fixtures/programs", import.meta.url));
const programs = readdirSync(EVIDENCE_DIR).filter((file) => file.endsWith(".json")).map((file) => file.slice(0, -".json".length));

describe.runIf(process.env.DUMPDBG_RECORD_EVIDENCE)("recording the judges' evidence", () => {
  it.each(programs)("%s", async (program) => {
    const built = await buildCore(program);
    const dir = tempDir(`dumpdbg-record-${program}-`);
    const run = await runCli(["analyze", built.core, "--exe", built.exe, "--provider", "offline", "--debugger", "gdb", "--json", "--out", "reports", "--sessions-dir", "sessions"], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const id = (JSON.parse(run.stdout) as { session: { id: string } }).session.id;
    const dbPath = path.join(dir, "sessions", id, "evidence.db");
    const db = new Database(dbPath, { readonly: true });
    const store = EvidenceStore.open(dbPath);
    try {
      const state = (await new SqliteSaver(db).getTuple({ configurable: { thread_id: id } }))?.checkpoint.channel_values as unknown as State;
      const evidence = evidenceOf(state, store, gdbVocabulary);
      const looked = new Map<string, { id: string; command: string; ok: boolean; output: string }>();
      const recording: Evidence = {
        ...evidence,
        find(probe) {
          const found = evidence.find(probe);
          if (found) looked.set(found.id, { id: found.id, command: found.command, ok: found.ok, output: found.output });
          return found;
        },
      };
      for (const planned of playbookOf(state).hypotheses) {
        const ran = state.hypotheses.find((h) => h.rule === planned.rule);
        if (ran && ran.status !== "untested") expect(planned.judge(recording).status, planned.rule).toBe(ran.status);
      }
      const recorded = { homeThread: state.crashSite?.homeThread ?? null, triage: state.triage, evidence: [...looked.values()].sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1))) };
      const text = JSON.stringify(recorded, null, 2).split(PROGRAMS_DIR).join("<programs>").split(built.dir).join("<build>");
      writeFileSync(path.join(EVIDENCE_DIR, `${program}.json`), `${text}\n`);
    } finally {
      store.close();
      db.close();
    }
  });
});
