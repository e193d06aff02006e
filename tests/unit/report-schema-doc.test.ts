/**
 * docs/report-schema.md and docs/report.schema.json are written from the zod schema
 * (npm run docs:schema): committed files that say otherwise than the schema fail here.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { reportJsonSchema, reportSchemaMarkdown } from "../../src/report/schema-doc.js";

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");

describe("the JSON report's reference", () => {
  it("docs/report-schema.md is what npm run docs:schema writes from src/report/schema.ts", () => {
    expect(read("docs/report-schema.md"), "stale: run npm run docs:schema").toBe(reportSchemaMarkdown(read("src/report/schema.ts")));
  });

  it("docs/report.schema.json is the schema's own JSON Schema", () => {
    expect(read("docs/report.schema.json"), "stale: run npm run docs:schema").toBe(reportJsonSchema());
  });

  it("names every field with its type, and the meaning the schema's comments give", () => {
    const page = reportSchemaMarkdown(read("src/report/schema.ts"));
    expect(page).toContain("| `crash.culprit.frame` | integer or null | Frame number in the crashing thread's backtrace. |");
    expect(page).toMatch(/\| `crash\.deadlock\.cycle\[\]\.heldByThread` \| integer or null \|/);
    expect(page).toMatch(/\| `redactions` \| object \(may be missing\) \|/);
  });
});
