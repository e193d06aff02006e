/** The stored evidence a question is about, found by full-text search over the session's evidence. */
import type { EvidenceStore, SearchHit } from "../../evidence/store.js";

/**
 * Words that match nearly every output and would drown the ones that matter ("in", "the", "was").
 * Each search term is OR-ed, so leaving them out changes the ranking, not what can match.
 */
const STOPWORDS = new Set(
  ("a an and any are as at be been but by can could did do does doing for from had has have how i if in into is it its " +
    "me my no not of on or our please show so tell than that the their them then there these this those to us was " +
    "we were what when where which who whom why will with would you your").split(" "),
);

/** The best hits, at most one per evidence id. */
export function relevantEvidence(store: EvidenceStore, question: string, limit: number): SearchHit[] {
  const terms = question
    .toLowerCase()
    .split(/[^\p{L}\p{N}_$>.-]+/u)
    .map((word) => word.replace(/^[.>-]+|[.>-]+$/g, ""))
    .filter((word) => word.length > 1 && !STOPWORDS.has(word));
  const hits: SearchHit[] = [];
  for (const hit of store.search(terms.join(" "), limit * 3)) {
    if (!hits.some((h) => h.evidenceId === hit.evidenceId)) hits.push(hit);
    if (hits.length === limit) break;
  }
  return hits;
}
