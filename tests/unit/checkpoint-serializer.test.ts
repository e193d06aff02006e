/**
 * The checkpoints' serializer (src/evidence/checkpoints.ts) writes every value byte for byte as
 * LangGraph's JsonPlusSerializer does: plain JSON by JSON.stringify alone, anything its replacer
 * would change through it; and what it writes reads back the same.
 */
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { CheckpointSerializer, checkpointSaver, isPlainJson } from "../../src/evidence/checkpoints.js";

const theirs = new JsonPlusSerializer();
const ours = new CheckpointSerializer();

async function expectWrittenAlike(value: unknown): Promise<void> {
  const [type, bytes] = await ours.dumpsTyped(value);
  const [theirType, theirBytes] = await theirs.dumpsTyped(value);
  expect(type).toBe(theirType);
  expect(Buffer.from(bytes).toString("utf8")).toBe(Buffer.from(theirBytes).toString("utf8"));
  expect(await ours.loadsTyped(type, bytes)).toEqual(await theirs.loadsTyped(theirType, theirBytes));
}

class Frame {
  constructor(readonly pc = "0x401000") {}
}

const plain = {
  crashSite: { file: "crash.c", line: 60, function: "queue_message", frames: [{ pc: "0x5571f8fb1281", args: ["conn=0x557208b4a3e0"] }] },
  hypotheses: [{ id: "H1", statement: "`client` was NULL — «ü» 🙂", status: "confirmed", confidence: 0.9, evidence: ["E9", "E10"] }],
  numbers: [0, -0, 1.5, 1e21, -1e-7, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53],
  nothing: null,
  empty: { object: {}, array: [] },
  escapes: 'quote " backslash \\ newline \n tab \t nul \u0000 line sep \u2028',
  flags: [true, false],
};

describe("the checkpoints' serializer", () => {
  it("writes plain state as LangGraph's serializer does", async () => {
    expect(isPlainJson(plain)).toBe(true);
    await expectWrittenAlike(plain);
    await expectWrittenAlike(Object.assign(Object.create(null), { from: "a null prototype" }));
    await expectWrittenAlike("a string alone");
    await expectWrittenAlike([]);
  });

  it("leaves what LangGraph's replacer changes to LangGraph's serializer", async () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    let deep: unknown = "bottom";
    for (let i = 0; i < 100; i++) deep = { deeper: deep };
    const withHole = [1, , 3];
    const odd: [string, unknown][] = [
      ["an undefined field", { ...plain, missing: undefined }],
      ["an undefined element", [1, undefined, 3]],
      ["a hole", withHole],
      ["a Set", { seen: new Set(["E1", "E2"]) }],
      ["a Map", { byThread: new Map([[1, "main"]]) }],
      ["a RegExp", { pattern: /null|NULL/g }],
      ["an Error", { failure: new Error("gdb went away") }],
      ["bytes", { raw: new Uint8Array([1, 2, 255]) }],
      ["a Date", { at: new Date(0) }],
      ["a class instance", { frame: new Frame() }],
      ["a Send", { lg_name: "Send", node: "tester", args: { h: "H1" } }],
      ["a toJSON", { value: { toJSON: () => ({ later: undefined }) } }],
      ["a function", { callback: () => 1 }],
      ["a cycle", cyclic],
      ["depth past the limit", deep],
    ];
    for (const [what, value] of odd) {
      expect(isPlainJson(value), what).toBe(false);
      await expectWrittenAlike(value);
    }
  });

  it("is the one a session's checkpointer writes with, and reads back what it wrote", async () => {
    const db = new Database(":memory:");
    try {
      const saver = checkpointSaver(db);
      expect(saver.serde).toBeInstanceOf(CheckpointSerializer);
      const config = { configurable: { thread_id: "s1", checkpoint_ns: "" } };
      const checkpoint = { v: 4, id: "1ef4f797-8335-6428-8001-8a1503f9b875", ts: "2026-11-27T18:00:00.000Z", channel_values: { state: plain, gone: undefined }, channel_versions: { state: 1 }, versions_seen: {} };
      await saver.put(config, checkpoint, { source: "loop", step: 1, parents: {} });
      const saved = await saver.getTuple(config);
      // As JSON keeps it: NaN and the infinities are null, -0 is 0, either way.
      expect(saved?.checkpoint.channel_values).toEqual({ state: JSON.parse(JSON.stringify(plain)), gone: undefined });
      expect("gone" in (saved?.checkpoint.channel_values ?? {})).toBe(true);
    } finally {
      db.close();
    }
  });
});
