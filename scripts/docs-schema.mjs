#!/usr/bin/env node
// Writes docs/report-schema.md and docs/report.schema.json from the report's zod schema
// (src/report/schema-doc.ts). tests/unit/report-schema-doc.test.ts fails when they are stale.
import { build } from "esbuild";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const dir = mkdtempSync(path.join(tmpdir(), "dumpdbg-docs-"));
try {
  const outfile = path.join(dir, "schema-doc.cjs");
  await build({ entryPoints: [path.join(root, "src/report/schema-doc.ts")], bundle: true, format: "cjs", platform: "node", target: "node20", outfile, logLevel: "warning" });
  const { reportSchemaMarkdown, reportJsonSchema } = createRequire(outfile)(outfile);
  writeFileSync(path.join(root, "docs/report-schema.md"), reportSchemaMarkdown(readFileSync(path.join(root, "src/report/schema.ts"), "utf8")));
  writeFileSync(path.join(root, "docs/report.schema.json"), reportJsonSchema());
  console.log("docs: wrote docs/report-schema.md and docs/report.schema.json");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
