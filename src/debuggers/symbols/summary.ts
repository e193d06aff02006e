/**
 * One line on what the symbol fetch did, for the report and the terminal:
 * `symbols: 3 modules from https://…, 2 missing: kernel32.dll (404), ntdll.dll (timeout)` (modules by their own names).
 */
import type { SymbolOutcome, SymbolResult } from "./server.js";

/** Modules named in the line before the rest are only counted. */
const NAMED = 5;

export function symbolsSummary(results: SymbolResult[]): string | null {
  if (results.length === 0) return null;
  const counts: [number, string][] = [];
  const fetched = new Map<string, number>();
  for (const { outcome } of results) if (outcome.status === "fetched") fetched.set(outcome.from, (fetched.get(outcome.from) ?? 0) + 1);
  for (const [from, count] of fetched) counts.push([count, `from ${from}`]);
  const local = results.filter((r) => r.outcome.status === "found").length;
  if (local > 0) counts.push([local, "already here"]);
  const missing = results.filter((r) => r.outcome.status === "missing");
  if (missing.length > 0) counts.push([missing.length, `missing: ${named(missing.map((r) => `${printable(r.module)} (${answers(r.outcome)})`))}`]);
  const refused = results.filter((r) => r.outcome.status === "refused");
  if (refused.length > 0) counts.push([refused.length, `refused, another build's file: ${named(refused.map((r) => printable(r.module)))}`]);
  // The noun goes with the first count only: `3 modules from A, 1 from B, 2 missing`.
  const parts = counts.map(([count, what], i) => (i === 0 ? `${count} ${count === 1 ? "module" : "modules"} ${what}` : `${count} ${what}`));
  return `symbols: ${parts.join(", ")}`;
}

function named(items: string[]): string {
  return items.length <= NAMED ? items.join(", ") : `${items.slice(0, NAMED).join(", ")} and ${items.length - NAMED} more`;
}

/** What the stores answered, each answer once: `404`, `404, timeout`, `no server asked`. */
function answers(outcome: SymbolOutcome): string {
  const tried = outcome.status === "missing" ? outcome.tried : [];
  const words = [...new Set(tried.map((t) => t.outcome))];
  return words.length > 0 ? words.join(", ") : "no server asked";
}

/** Module names come from the dump: a control character in one must not reach the terminal. */
function printable(name: string): string {
  return name.replace(/[\x00-\x1f\x7f]/g, "?");
}
