/**
 * LangChain's ambient config without the LangSmith run tree nobody keeps. LangGraph runs each node
 * (and each of its internal steps) through `runWithConfig`, which builds a LangSmith `RunTree` to
 * hold the config and hands it to the process's AsyncLocalStorage. We load LangGraph's web entry,
 * which installs none (workflows.ts says why): the store is LangChain's mock, which keeps nothing,
 * so the run tree (a random id, a microsecond time stamp, a dozen environment lookups, and on the
 * first one a LangSmith client) is built and thrown away. That was half of LangGraph's own time per
 * step in a 13-step graph of empty nodes run without V8's code cache (15 ms to 10 ms a run, 55–80
 * to 45 ms the first); in an offline analysis, run with the cache, `runWithConfig` went from 36 ms
 * to 19 under V8's profiler.
 *
 * `runWithConfig` takes a flag not to build that root run tree; LangGraph never passes it. Here it
 * is passed whenever the store is the mock, where the callback then runs as it did. With a real
 * AsyncLocalStorage installed the call is left as LangChain makes it, and a run traced to LangSmith
 * (a tracer among the callbacks) gets its run tree from the tracer either way.
 */
import { AsyncLocalStorageProviderSingleton, MockAsyncLocalStorage } from "@langchain/core/singletons";

let done = false;

export function skipDiscardedRunTrees(): void {
  if (done) return;
  done = true;
  const provider = AsyncLocalStorageProviderSingleton;
  const runWithConfig = provider.runWithConfig.bind(provider);
  provider.runWithConfig = (config, callback, avoidCreatingRootRunTree) =>
    runWithConfig(config, callback, avoidCreatingRootRunTree ?? provider.getInstance() instanceof MockAsyncLocalStorage);
}
