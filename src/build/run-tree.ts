/**
 * What @langchain/core's ambient config (`AsyncLocalStorageProvider.runWithConfig`, which LangGraph
 * calls for every node, edge and channel write it runs) gets for LangSmith's `RunTree` (build.mjs).
 * There it only builds the value handed to the async-local storage, and ours is LangChain's no-op
 * one: build.mjs keeps out the LangGraph entry that installs Node's, and tracing is always off
 * (cli/main.ts' keepTracingOff). LangSmith's own draws a UUID v7, a dotted order, a shared API
 * client and a dozen environment variables for each, ~12 ms of every offline analysis, all
 * dropped unread.
 *
 * This one holds what LangChain reads back from the storage's value, should a real storage ever hold
 * it: the name and `extra`, where the config of the node being run is kept.
 */
export class RunTree {
  name: string;
  extra: Record<PropertyKey, unknown>;

  constructor(fields: { name: string; extra?: Record<PropertyKey, unknown> }) {
    this.name = fields.name;
    this.extra = fields.extra ?? {};
  }
}
