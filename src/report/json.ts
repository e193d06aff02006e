/** The JSON report of the contract (schemaVersion 1), validated before it leaves the program. */
import { ReportSchema, type Report } from "./schema.js";

/**
 * Throws zod's error when the report breaks the contract. Keys come out in the schema's order,
 * whatever order the report was built in, so reports diff cleanly.
 */
export function renderJson(report: Report): string {
  return `${JSON.stringify(ReportSchema.parse(report), null, 2)}\n`;
}
