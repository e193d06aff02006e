/** The usage a killed run spent but never checkpointed, recovered from the transcript on resume. */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { uncheckpointedSpend } from "../../src/agents/runtime.js";
import { NOTHING_SPENT } from "../../src/state.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

function transcript(lines: unknown[]): string {
  const file = join(tempDir("dumpdbg-usage-"), "transcript.jsonl");
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return file;
}

const call = (input: number, output: number, tier: "cloud" | "local" = "cloud") => ({
  type: "model",
  agent: "tester",
  ok: true,
  cost: {
    llmCalls: 1,
    llmMs: 100,
    local: tier === "local" ? { inputTokens: input, outputTokens: output } : { inputTokens: 0, outputTokens: 0 },
    cloud: tier === "cloud" ? { inputTokens: input, outputTokens: output } : { inputTokens: 0, outputTokens: 0 },
  },
});

describe("uncheckpointedSpend", () => {
  it("is what the transcript's model calls cost beyond what the checkpoint counted", () => {
    const file = transcript([{ type: "command", command: "bt" }, call(900, 40), call(950, 41), call(300, 10, "local")]);
    const counted = { ...NOTHING_SPENT, llmCalls: 1, llmMs: 100, cloud: { inputTokens: 900, outputTokens: 40 } };
    expect(uncheckpointedSpend(file, counted)).toEqual({
      llmCalls: 2,
      llmMs: 200,
      local: { inputTokens: 300, outputTokens: 10 },
      cloud: { inputTokens: 950, outputTokens: 41 },
    });
  });

  it("is nothing when the checkpoint counted every call, or the transcript is missing", () => {
    const file = transcript([call(900, 40)]);
    expect(uncheckpointedSpend(file, { ...NOTHING_SPENT, llmCalls: 1, llmMs: 100, cloud: { inputTokens: 900, outputTokens: 40 } })).toBeNull();
    expect(uncheckpointedSpend(join(tmpdir(), "no-such-transcript.jsonl"), NOTHING_SPENT)).toBeNull();
  });
});
