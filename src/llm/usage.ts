/** Token accounting per tier, as the providers report it (never estimated: see design, "Models"). */
import { thousands } from "../report/numbers.js";
import type { Tier } from "./models.js";

export interface TokenCount {
  inputTokens: number;
  outputTokens: number;
}

/** The `usage` block of the JSON report. */
export interface UsageReport {
  llmCalls: number;
  local: TokenCount;
  cloud: TokenCount;
}

/**
 * What one run spent on models. A call is one answered request: a request refused with 429 or 500
 * costs nothing and is not counted, a malformed answer is billed and is.
 */
export class Usage {
  llmCalls = 0;
  readonly local: TokenCount = { inputTokens: 0, outputTokens: 0 };
  readonly cloud: TokenCount = { inputTokens: 0, outputTokens: 0 };
  /** Wall time spent waiting on models, retries and backoff included (the report's `timings.llmMs`). */
  llmMs = 0;

  /** The usage a report records (all the processes of a resumed run), to print it the same way. */
  static of(report: UsageReport, llmMs: number): Usage {
    const usage = new Usage();
    usage.llmCalls = report.llmCalls;
    Object.assign(usage.local, report.local);
    Object.assign(usage.cloud, report.cloud);
    usage.llmMs = llmMs;
    return usage;
  }

  /** Records one answered request. */
  add(tier: Tier, tokens: TokenCount): void {
    this.llmCalls += 1;
    this[tier].inputTokens += tokens.inputTokens;
    this[tier].outputTokens += tokens.outputTokens;
  }

  addTime(ms: number): void {
    this.llmMs += ms;
  }

  toJSON(): UsageReport {
    return { llmCalls: this.llmCalls, local: { ...this.local }, cloud: { ...this.cloud } };
  }

  /** One line for stderr, at the end of a run and on Ctrl+C. */
  format(): string {
    if (this.llmCalls === 0) return "tokens: none (no model calls)";
    const tier = (name: Tier) => `${name} ${count(this[name].inputTokens)} in / ${count(this[name].outputTokens)} out`;
    const calls = `${this.llmCalls} model call${this.llmCalls === 1 ? "" : "s"}`;
    return `tokens: ${tier("local")}, ${tier("cloud")} (${calls}, ${(this.llmMs / 1000).toFixed(1)} s)`;
  }
}

function count(n: number): string {
  return thousands(n);
}
