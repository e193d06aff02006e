/**
 * The third-party code of an analysis — LangGraph, LangChain and LangSmith beneath them, the model
 * providers, zod, marked — built apart into dist/vendor.cjs (build.mjs). As a CommonJS script its
 * compiled code can be kept between runs (vendor-code.ts); Node 20 keeps none for ES modules. The
 * rest of the bundle imports these packages through build.mjs's shims, which read them from here:
 * one copy of each, shared by the CLI's chunks, the MCP server and the providers.
 *
 * Each package is evaluated when first asked for (`require` inside a function: esbuild wraps it to
 * run once), so a command that needs only zod does not start LangGraph.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
export const vendorModules: Record<string, () => unknown> = {
  "@langchain/langgraph": () => require("@langchain/langgraph"),
  "@langchain/langgraph-checkpoint-sqlite": () => require("@langchain/langgraph-checkpoint-sqlite"),
  "@langchain/openai": () => require("@langchain/openai"),
  "@langchain/anthropic": () => require("@langchain/anthropic"),
  "@langchain/ollama": () => require("@langchain/ollama"),
  zod: () => require("zod"),
  "zod/v3": () => require("zod/v3"),
  "zod/v4": () => require("zod/v4"),
  "zod/v4-mini": () => require("zod/v4-mini"),
  marked: () => require("marked"),
};
