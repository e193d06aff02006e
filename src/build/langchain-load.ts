/**
 * What LangGraph's checkpoint serializer (`@langchain/langgraph-checkpoint`'s jsonplus) gets when it
 * imports `@langchain/core/load` (build.mjs): the same `load`, with `@langchain/core/load` evaluated
 * on its first call rather than when LangGraph is. That module's import map evaluates nearly every
 * module of @langchain/core (messages, prompts, decisions, vector stores: ~8 ms of an analysis), to
 * revive LangChain objects from a checkpoint; the analysis's state holds none, so a run never calls
 * it. jsonplus awaits `load`, so an async stand-in is the same to it.
 */
import type { load as coreLoad } from "@langchain/core/load";

export async function load(...args: Parameters<typeof coreLoad>): ReturnType<typeof coreLoad> {
  const core = await import("@langchain/core/load");
  return core.load(...args);
}
