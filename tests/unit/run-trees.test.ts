/**
 * LangGraph's nodes run with no LangSmith run tree built for LangChain's mock store, and as before
 * where a real AsyncLocalStorage is installed. A real graph from LangGraph's web entry (the one the
 * analysis uses), its nodes reading the config they are handed.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph/web";
import { RunTree } from "langsmith";
import { afterEach, describe, expect, it, vi } from "vitest";
import { skipDiscardedRunTrees } from "../../src/agents/run-trees.js";

const State = Annotation.Root({
  seen: Annotation<string[]>({ reducer: (all, more) => [...all, ...more], default: () => [] }),
});

/** Three steps, each noting the thread it was run for (its config) and what the ambient config says. */
function graph() {
  const step = (name: string) => (_state: typeof State.State, config: { configurable?: { thread_id?: string } }) => ({
    seen: [`${name}:${config.configurable?.thread_id}:${AsyncLocalStorageProviderSingleton.getRunnableConfig()?.configurable?.thread_id ?? "none"}`],
  });
  return new StateGraph(State)
    .addNode("a", step("a"))
    .addNode("b", step("b"))
    .addNode("c", step("c"))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", "c")
    .addEdge("c", END)
    .compile();
}

afterEach(() => vi.restoreAllMocks());

describe("the run trees LangGraph's steps build", () => {
  it("are built for the mock store and thrown away, as LangChain does by itself", async () => {
    const built = vi.spyOn(RunTree as unknown as { getDefaultConfig: () => object }, "getDefaultConfig");
    const result = await graph().invoke({}, { configurable: { thread_id: "t1" } });
    expect(result.seen).toEqual(["a:t1:none", "b:t1:none", "c:t1:none"]);
    expect(built).toHaveBeenCalled();
  });

  it("are not built once skipped, and every step still gets its config", async () => {
    skipDiscardedRunTrees();
    skipDiscardedRunTrees();
    const built = vi.spyOn(RunTree as unknown as { getDefaultConfig: () => object }, "getDefaultConfig");
    const result = await graph().invoke({}, { configurable: { thread_id: "t2" } });
    expect(result.seen).toEqual(["a:t2:none", "b:t2:none", "c:t2:none"]);
    expect(built).not.toHaveBeenCalled();
  });

  it("are built as before where a real AsyncLocalStorage holds the ambient config", async () => {
    skipDiscardedRunTrees();
    AsyncLocalStorageProviderSingleton.initializeGlobalInstance(new AsyncLocalStorage());
    const built = vi.spyOn(RunTree as unknown as { getDefaultConfig: () => object }, "getDefaultConfig");
    const result = await graph().invoke({}, { configurable: { thread_id: "t3" } });
    // The ambient config is there again: what the run tree carries.
    expect(result.seen).toEqual(["a:t3:t3", "b:t3:t3", "c:t3:t3"]);
    expect(built).toHaveBeenCalled();
  });
});
