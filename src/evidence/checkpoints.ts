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
import type { RunnableConfig } from "@langchain/core/runnables";
import { copyCheckpoint, JsonPlusSerializer, WRITES_IDX_MAP, type Checkpoint, type CheckpointMetadata, type PendingWrite } from "@langchain/langgraph-checkpoint";
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
  return new SessionSaver(db, new CheckpointSerializer());
}

/**
 * SqliteSaver writing the same rows with statements it prepares once: the package prepares its
 * INSERT (and builds better-sqlite3's transaction wrapper) at every call, ~0.2 ms each of the ~27
 * writes of an offline analysis. Reading is the package's, unchanged.
 */
export class SessionSaver extends SqliteSaver {
  private statements: {
    checkpoint: Database.Statement;
    /** The writes of LangGraph's special channels (errors, interrupts) replace earlier ones; others never do. */
    writes: Record<"replace" | "ignore", (rows: unknown[][]) => void>;
  } | null = null;

  private prepared(): NonNullable<SessionSaver["statements"]> {
    this.setup();
    if (this.statements) return this.statements;
    const insertWrites = (verb: string) => {
      const statement = this.db.prepare(`INSERT ${verb} INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
      return this.db.transaction((rows: unknown[][]) => {
        for (const row of rows) statement.run(...row);
      });
    };
    this.statements = {
      checkpoint: this.db.prepare("INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"),
      writes: { replace: insertWrites("OR REPLACE"), ignore: insertWrites("OR IGNORE") },
    };
    return this.statements;
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    const { checkpoint: insert } = this.prepared();
    if (!config.configurable) throw new Error("Empty configuration supplied.");
    const threadId = config.configurable.thread_id as string | undefined;
    const checkpointNs = (config.configurable.checkpoint_ns as string | undefined) ?? "";
    const parentId = config.configurable.checkpoint_id as string | undefined;
    if (!threadId) throw new Error('Missing "thread_id" field in passed "config.configurable".');
    const [[type, serialized], [metadataType, serializedMetadata]] = await Promise.all([this.serde.dumpsTyped(copyCheckpoint(checkpoint)), this.serde.dumpsTyped(metadata)]);
    if (type !== metadataType) throw new Error("Failed to serialized checkpoint and metadata to the same type.");
    insert.run(threadId, checkpointNs, checkpoint.id, parentId, type, serialized, serializedMetadata);
    return { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpoint.id } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const { writes: insert } = this.prepared();
    if (!config.configurable) throw new Error("Empty configuration supplied.");
    if (!config.configurable.thread_id) throw new Error("Missing thread_id field in config.configurable.");
    if (!config.configurable.checkpoint_id) throw new Error("Missing checkpoint_id field in config.configurable.");
    const special = WRITES_IDX_MAP as Record<string, number>;
    const rows = await Promise.all(
      writes.map(async ([channel, value], idx) => {
        const [type, serialized] = await this.serde.dumpsTyped(value);
        return [config.configurable?.thread_id, config.configurable?.checkpoint_ns, config.configurable?.checkpoint_id, taskId, special[channel] ?? idx, channel, type, serialized];
      }),
    );
    insert[writes.every(([channel]) => channel in special) ? "replace" : "ignore"](rows);
  }
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
