/**
 * The session's checkpointer (src/evidence/checkpoints.ts' SessionSaver) writes the rows the
 * package's SqliteSaver writes, from the same calls, with statements it prepares once; and reads
 * back what a real LangGraph run through it checkpointed.
 */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph/web";
import { ERROR, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointSerializer, checkpointSaver, SessionSaver } from "../../src/evidence/checkpoints.js";

const opened: Database.Database[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
});

function database(): Database.Database {
  const db = new Database(":memory:");
  opened.push(db);
  return db;
}

function rows(db: Database.Database): unknown {
  return {
    checkpoints: db.prepare("SELECT * FROM checkpoints ORDER BY checkpoint_id").all(),
    writes: db.prepare("SELECT * FROM writes ORDER BY checkpoint_id, task_id, idx").all(),
  };
}

function checkpoint(id: string, step: number): Checkpoint {
  return {
    v: 4,
    id,
    ts: `2026-11-30T02:0${step}:00.000Z`,
    channel_values: { triage: { kind: "null-dereference", culprit: "queue_message" }, hypotheses: [{ id: "H1", status: step > 1 ? "confirmed" : "open" }] },
    channel_versions: { triage: 1, hypotheses: step },
    versions_seen: { tester: { hypotheses: step - 1 } },
  };
}

describe("the session's checkpointer", () => {
  it("writes the rows the package's SqliteSaver writes, call for call", async () => {
    const ours = database();
    const theirs = database();
    const savers = [new SessionSaver(ours, new CheckpointSerializer()), new SqliteSaver(theirs, new CheckpointSerializer())];
    for (const saver of savers) {
      const thread = { configurable: { thread_id: "20261130-013804-crash-core-b746", checkpoint_ns: "" } };
      const first = await saver.put(thread, checkpoint("1ef4f797-8335-6428-8001-8a1503f9b875", 1), { source: "loop", step: 1, parents: {} });
      // A write of a node's channels, then an error write (LangGraph's special channel: replaced, not ignored, when written again).
      await saver.putWrites(first, [["hypotheses", [{ id: "H1", status: "confirmed" }]], ["trail", ["tester"]]], "task-1");
      await saver.putWrites(first, [["hypotheses", [{ id: "H1", status: "rejected" }]]], "task-1");
      await saver.putWrites(first, [[ERROR, { message: "gdb went away" }]], "task-2");
      await saver.putWrites(first, [[ERROR, { message: "gdb went away again" }]], "task-2");
      const second = await saver.put(first, checkpoint("1ef4f797-8335-6428-8002-8a1503f9b875", 2), { source: "loop", step: 2, parents: {} });
      expect(second.configurable).toEqual({ thread_id: thread.configurable.thread_id, checkpoint_ns: "", checkpoint_id: "1ef4f797-8335-6428-8002-8a1503f9b875" });
    }
    expect(rows(ours)).toEqual(rows(theirs));
    const written = rows(ours) as { checkpoints: unknown[]; writes: { channel: string; value: Buffer }[] };
    expect(written.checkpoints).toHaveLength(2);
    // The first write of task-1 stays (OR IGNORE); task-2's error is the last one (OR REPLACE).
    expect(written.writes.map((w) => [w.channel, w.value.toString()])).toEqual([
      ["hypotheses", '[{"id":"H1","status":"confirmed"}]'],
      ["trail", '["tester"]'],
      [ERROR, '{"message":"gdb went away again"}'],
    ]);
  });

  it("refuses what the package refuses: a config without a thread or a checkpoint", async () => {
    const saver = checkpointSaver(database());
    await expect(saver.put({}, checkpoint("c1", 1), { source: "loop", step: 1, parents: {} })).rejects.toThrow(/Empty configuration/);
    await expect(saver.put({ configurable: {} }, checkpoint("c1", 1), { source: "loop", step: 1, parents: {} })).rejects.toThrow(/thread_id/);
    await expect(saver.putWrites({ configurable: { thread_id: "t" } }, [["trail", []]], "task")).rejects.toThrow(/checkpoint_id/);
  });

  it("checkpoints a LangGraph run it can be resumed from", async () => {
    const State = Annotation.Root({ trail: Annotation<string[]>({ reducer: (all, more) => [...all, ...more], default: () => [] }) });
    const build = (db: Database.Database) =>
      new StateGraph(State)
        .addNode("hypothesis", () => ({ trail: ["hypothesis"] }))
        .addNode("tester", () => ({ trail: ["tester"] }))
        .addEdge(START, "hypothesis")
        .addEdge("hypothesis", "tester")
        .addEdge("tester", END)
        .compile({ checkpointer: checkpointSaver(db) });
    const db = database();
    const config = { configurable: { thread_id: "s1" } };
    expect(await build(db).invoke({ trail: ["triage"] }, config)).toEqual({ trail: ["triage", "hypothesis", "tester"] });
    // A new graph on the same file reads the state back, as `resume` does.
    const state = await build(db).getState(config);
    expect(state.values).toEqual({ trail: ["triage", "hypothesis", "tester"] });
    expect(state.next).toEqual([]);
    const history = [];
    for await (const snapshot of build(db).getStateHistory(config)) history.push(snapshot.metadata?.step);
    expect(history).toEqual([2, 1, 0, -1]);
  });
});
