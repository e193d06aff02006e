/**
 * The stand-in LangGraph's checkpoint serializer is built with for `@langchain/core/load`
 * (src/build/langchain-load.ts): what it revives is what the real `load` revives. And why it must:
 * the serializer (here unbundled, with the real `load`) revives a checkpointed LangChain object
 * through `load`, so a checkpoint that held one would reach the stand-in.
 */
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { AIMessage } from "@langchain/core/messages";
import { load as coreLoad } from "@langchain/core/load";
import { describe, expect, it } from "vitest";
import { load } from "../../src/build/langchain-load.js";

describe("@langchain/core/load, evaluated on first use", () => {
  it("revives a serialized LangChain object as the real load does", async () => {
    const text = JSON.stringify(new AIMessage({ content: "the pointer was NULL", id: "m1" }));
    const revived = await load(text);
    expect(revived).toBeInstanceOf(AIMessage);
    expect(revived).toEqual(await coreLoad(text));
  });

  it("is what a checkpointed message goes through in LangGraph's serializer", async () => {
    const serde = new JsonPlusSerializer();
    const [type, bytes] = await serde.dumpsTyped({ messages: [new AIMessage("freed twice")] });
    const back = (await serde.loadsTyped(type, bytes)) as { messages: AIMessage[] };
    expect(back.messages[0]).toBeInstanceOf(AIMessage);
    expect(back.messages[0]!.content).toBe("freed twice");
  });
});
