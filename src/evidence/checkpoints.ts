/**
 * LangGraph's checkpoints of an analysis, kept in the session's evidence.db (SqliteSaver), written
 * the way LangGraph's own serializer writes them, faster.
 *
 * LangGraph writes the whole state at every step (a checkpoint, and each node's writes), through
 * `JsonPlusSerializer`: `JSON.stringify` with a replacer that turns `undefined`, Sets, Maps,
 * RegExps, Errors and byte arrays into records it can revive, after a pass that breaks cycles. A
 * replacer keeps V8 off its fast path, and an analysis's state is plain JSON: the checkpoints of an
 * offline analysis of the demo (~160 KB over 14 steps) cost ~10 ms that way. A value made only of
 * plain objects, arrays, strings, finite or not numbers, booleans and null is written by the plain
 * `JSON.stringify`, which gives the very same text for it; anything else goes through
 * `JsonPlusSerializer` as before. Reading is `JsonPlusSerializer`'s, unchanged, so checkpoints
 * written by either are read alike.
 */
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type Database from "better-sqlite3";

/** Deeper than any state of ours; a deeper value (or a cycle) takes LangGraph's own path. */
const MAX_DEPTH = 64;
const encoder = new TextEncoder();

export class CheckpointSerializer extends JsonPlusSerializer {
  override async dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
    if (isPlainJson(value)) return ["json", encoder.encode(JSON.stringify(value))];
    return super.dumpsTyped(value);
  }
}

/** The checkpointer of a session's analysis, on its evidence.db connection. */
export function checkpointSaver(db: Database.Database): SqliteSaver {
  return new SqliteSaver(db, new CheckpointSerializer());
}

/**
 * Whether `JSON.stringify` alone writes this value as `JsonPlusSerializer` does: nothing its
 * replacer would change (`undefined`, a Set, a Map, a RegExp, an Error, a byte array, a Send, an
 * instance of any class), nothing `JSON.stringify` would hand to a `toJSON`, and no cycle.
 */
export function isPlainJson(value: unknown, depth = 0): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
      return true;
    case "object":
      break;
    default:
      return false;
  }
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) {
      // A hole reads as undefined, which the replacer would write as a record.
      if (!isPlainJson(value[i], depth + 1)) return false;
    }
    return true;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  const record = value as Record<string, unknown>;
  // LangGraph's Send, as its replacer knows it.
  if (record.lg_name === "Send") return false;
  for (const key in record) {
    if (!isPlainJson(record[key], depth + 1)) return false;
  }
  return true;
}
