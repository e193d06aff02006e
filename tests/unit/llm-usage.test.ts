/** Token accounting per tier and its one-line summary. */
import { describe, expect, it } from "vitest";
import { Usage } from "../../src/llm/index.js";

describe("Usage", () => {
  it("adds each answered request to its tier", () => {
    const usage = new Usage();
    usage.add("local", { inputTokens: 1200, outputTokens: 300 });
    usage.add("cloud", { inputTokens: 15000, outputTokens: 900 });
    usage.add("cloud", { inputTokens: 1, outputTokens: 2 });
    usage.addTime(12_345);
    expect(usage.toJSON()).toEqual({ llmCalls: 3, local: { inputTokens: 1200, outputTokens: 300 }, cloud: { inputTokens: 15001, outputTokens: 902 } });
    expect(usage.llmMs).toBe(12_345);
    expect(usage.format()).toBe("tokens: local 1,200 in / 300 out, cloud 15,001 in / 902 out (3 model calls, 12.3 s)");
  });

  it("says so when no model was called", () => {
    expect(new Usage().format()).toBe("tokens: none (no model calls)");
  });

  it("serialises as the report's usage block", () => {
    const usage = new Usage();
    usage.add("local", { inputTokens: 1, outputTokens: 1 });
    expect(JSON.parse(JSON.stringify({ usage }))).toEqual({ usage: { llmCalls: 1, local: { inputTokens: 1, outputTokens: 1 }, cloud: { inputTokens: 0, outputTokens: 0 } } });
  });
});
