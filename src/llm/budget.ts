/**
 * Context budgets: prompts stay bounded however big the dump. Sizes are estimated locally at four
 * characters a token; a real tokenizer would have to download its ranks, and nothing may be fetched.
 */

const CHARS_PER_TOKEN = 4;

/** The smallest budget `budget` accepts: room for the omission marker and a little text. */
const MIN_BUDGET_TOKENS = 16;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/**
 * Trims `text` to about `maxTokens`, keeping its head and its tail (where a crash's story usually
 * is: the first frames, the last lines) and putting a "[... N lines omitted ...]" marker between.
 * Cuts fall on line boundaries unless a single line is longer than the room there is.
 */
export function budget(text: string, maxTokens: number): string {
  if (!(maxTokens >= MIN_BUDGET_TOKENS)) throw new RangeError(`a context budget must be at least ${MIN_BUDGET_TOKENS} tokens, got ${maxTokens}`);
  const maxChars = Math.floor(maxTokens * CHARS_PER_TOKEN);
  if (text.length <= maxChars) return text;

  // Reserve the longest marker this text could need and its two newlines, so the result never
  // exceeds the budget.
  const room = maxChars - marker(text.length, "characters").length - 2;
  const headLimit = Math.ceil(room / 2);
  const tailLimit = room - headLimit;

  let head = text.slice(0, headLimit);
  const lastNewline = head.lastIndexOf("\n");
  if (lastNewline >= 0) head = head.slice(0, lastNewline + 1);

  let tailStart = text.length - tailLimit;
  const nextNewline = text.indexOf("\n", tailStart - 1);
  if (nextNewline >= 0 && nextNewline + 1 < text.length) tailStart = nextNewline + 1;

  const omitted = text.slice(head.length, tailStart);
  const newlines = countNewlines(omitted);
  const lines = newlines + (omitted.endsWith("\n") ? 0 : 1);
  const note = newlines === 0 ? marker(omitted.length, "characters") : marker(lines, "lines");
  return `${head}${head.endsWith("\n") || head === "" ? "" : "\n"}${note}\n${text.slice(tailStart)}`;
}

/**
 * Shares `maxTokens` among a prompt's values, fairly: values smaller than an equal share are kept
 * whole, and what they leave is split among the larger ones, which are trimmed with `budget`.
 */
export function fitValues(values: Record<string, string>, maxTokens: number): Record<string, string> {
  const bySize = Object.entries(values).sort(([, a], [, b]) => a.length - b.length);
  const fitted: Record<string, string> = {};
  let left = maxTokens;
  let count = bySize.length;
  for (const [name, value] of bySize) {
    const share = Math.floor(left / count);
    if (estimateTokens(value) <= share) {
      fitted[name] = value;
    } else {
      if (share < MIN_BUDGET_TOKENS) throw new Error(`prompt value "${name}" cannot fit: only ${left} tokens of context budget left for ${count} values`);
      fitted[name] = budget(value, share);
    }
    left -= estimateTokens(fitted[name]);
    count -= 1;
  }
  return fitted;
}

function marker(n: number, unit: "lines" | "characters"): string {
  return `[... ${n} ${n === 1 ? unit.slice(0, -1) : unit} omitted ...]`;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count += 1;
  return count;
}
