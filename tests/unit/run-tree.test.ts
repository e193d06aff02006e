/**
 * The RunTree the bundle gives LangChain's ambient config (src/build/run-tree.ts): should a real
 * async-local storage ever hold it, LangChain reads the node's config back from it as from
 * LangSmith's own.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { RunTree } from "../../src/build/run-tree.js";

const LC_CHILD_KEY = Symbol.for("lc:child_config");
// LangSmith's RunTree, the one @langchain/core imports (langsmith is its dependency, not ours).
const fromCore = createRequire(createRequire(import.meta.url).resolve("@langchain/core/package.json"));
const { RunTree: LangSmithRunTree } = fromCore("langsmith") as { RunTree: new (fields: { name: string; tracingEnabled?: boolean }) => { extra: Record<PropertyKey, unknown> } };

describe("the bundle's RunTree for LangChain's ambient config", () => {
  it("holds the node's config where LangChain reads it back, as LangSmith's does", () => {
    const storage = new AsyncLocalStorage<unknown>();
    const config = { configurable: { thread_id: "20261130-013804-crash-core-b746" }, tags: ["tester"] };
    const readBack = (tree: { extra: Record<PropertyKey, unknown> }) => {
      tree.extra = { ...tree.extra, [LC_CHILD_KEY]: config };
      return storage.run(tree, () => (storage.getStore() as { extra?: Record<PropertyKey, unknown> } | undefined)?.extra?.[LC_CHILD_KEY]);
    };
    expect(readBack(new RunTree({ name: "<runnable_lambda>" }))).toBe(config);
    expect(readBack(new LangSmithRunTree({ name: "<runnable_lambda>", tracingEnabled: false }))).toBe(config);
    expect(new RunTree({ name: "tester", extra: { step: 3 } })).toMatchObject({ name: "tester", extra: { step: 3 } });
  });
});
