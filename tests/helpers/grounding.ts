/**
 * Checks a conclusion against the evidence it cites: every number it states right before a
 * citation (`holds 0x4141414141414141 (E13)`, `is -1 (E9)`) must be in the output of the command
 * it cites, so no fact in a conclusion is one the dump did not show.
 */
import path from "node:path";
import { EvidenceStore } from "../../src/evidence/store.js";

/** Each stated value with the evidence it cites, and whether that evidence's output holds it. */
export function ungroundedValues(text: string, sessionsDir: string, sessionId: string): string[] {
  const store = EvidenceStore.open(path.join(sessionsDir, sessionId, "evidence.db"));
  try {
    const problems: string[] = [];
    for (const citation of text.matchAll(/\(((?:E\d+(?:, )?)+)\)/g)) {
      const before = text.slice(Math.max(0, (citation.index ?? 0) - 60), citation.index).split(/\(E\d+[^)]*\)/).at(-1) ?? "";
      // Values, not source positions (`int-min.c:17`).
      const values = [...before.matchAll(/(?<![\w.:])(0x[0-9a-f]+|-?\d{2,})(?![\w.])/g)].map((m) => m[1] ?? "");
      if (values.length === 0) continue;
      const outputs = (citation[1] ?? "").split(", ").map((id) => store.output(id).toLowerCase());
      for (const value of values) {
        const bare = value.startsWith("0x") ? value.replace(/^0x0*/, "") : value;
        if (!outputs.some((output) => output.includes(bare))) problems.push(`${value} (${citation[1]})`);
      }
    }
    return problems;
  } finally {
    store.close();
  }
}
