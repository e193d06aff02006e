/**
 * The JSON report's reference page (docs/report-schema.md) and JSON Schema (docs/report.schema.json),
 * written from the zod schema: the types from zod's own JSON Schema, the meanings from the doc
 * comments in schema.ts. `npm run docs:schema` writes them; a unit test fails when they are stale.
 */
import ts from "typescript";
import { z } from "../zod.js";
import { ReportSchema } from "./schema.js";

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: (string | number)[];
  const?: unknown;
  additionalProperties?: JsonSchema | boolean;
  minimum?: number;
  maximum?: number;
  default?: unknown;
}

/** The report's JSON Schema, as zod writes it for the report dumpdbg outputs. */
export function reportJsonSchema(): string {
  return `${JSON.stringify(z.toJSONSchema(ReportSchema, { io: "output" }), null, 2)}\n`;
}

/** The doc comment of each field, by its dotted path (`crash.culprit.frame`; `[]` for an array's items). */
function fieldComments(source: string): Map<string, string> {
  const file = ts.createSourceFile("schema.ts", source, ts.ScriptTarget.ES2022, true);
  const variables = new Map<string, { init: ts.Expression; doc: string }>();
  const docOf = (node: ts.Node) =>
    ts
      .getJSDocCommentsAndTags(node)
      .map((d) => (typeof d.comment === "string" ? d.comment : ""))
      .join(" ")
      .replace(/\s+/g, " ")
      .trim();
  file.forEachChild((statement) => {
    const declarations = ts.isVariableStatement(statement) ? statement.declarationList.declarations : [];
    for (const d of declarations) if (ts.isIdentifier(d.name) && d.initializer) variables.set(d.name.text, { init: d.initializer, doc: docOf(statement) });
  });
  const comments = new Map<string, string>();
  const walk = (expression: ts.Expression, path: string, seen: Set<string>): void => {
    if (ts.isIdentifier(expression)) {
      const variable = variables.get(expression.text);
      if (!variable || seen.has(expression.text)) return;
      if (variable.doc && path) comments.set(path, [variable.doc, comments.get(path)].filter(Boolean).join(" "));
      return walk(variable.init, path, new Set([...seen, expression.text]));
    }
    if (!ts.isCallExpression(expression) || !ts.isPropertyAccessExpression(expression.expression)) return;
    const callee = expression.expression;
    const isZ = ts.isIdentifier(callee.expression) && callee.expression.text === "z";
    const argument = expression.arguments[0];
    if (isZ && callee.name.text === "object" && argument && ts.isObjectLiteralExpression(argument)) {
      for (const property of argument.properties) {
        if (!ts.isPropertyAssignment(property) || !ts.isIdentifier(property.name)) continue;
        const field = path ? `${path}.${property.name.text}` : property.name.text;
        const doc = docOf(property);
        if (doc) comments.set(field, doc);
        walk(property.initializer, field, seen);
      }
    } else if (isZ && callee.name.text === "array" && argument) {
      walk(argument, `${path}[]`, seen);
    } else if (!isZ) {
      // .nullable(), .default(null), .optional(), .int(): the same field.
      walk(callee.expression, path, seen);
    }
  };
  walk(ts.factory.createIdentifier("ReportSchema"), "", new Set());
  return comments;
}

const code = (text: string) => `\`${text}\``;

/** A field's type in a few words: `string or null`, `"read" \| "write"`, `array of string`. */
function typeOf(schema: JsonSchema): string {
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(" or ");
  if (schema.const !== undefined) return code(JSON.stringify(schema.const));
  if (schema.enum) return schema.enum.map((v) => code(JSON.stringify(v))).join(" \\| ");
  if (schema.type === "array") return `array of ${schema.items ? typeOf(schema.items) : "any"}`;
  if (schema.type === "object" && !schema.properties) {
    const values = typeof schema.additionalProperties === "object" ? typeOf(schema.additionalProperties) : "any";
    return `object of ${values} by name`;
  }
  if (schema.type === "number" && schema.minimum !== undefined && schema.maximum !== undefined) return `number, ${schema.minimum} to ${schema.maximum}`;
  if (Array.isArray(schema.type)) return schema.type.join(" or ");
  return schema.type ?? "any";
}

/** Every field, depth first, as a row: path, type, whether it may be missing, meaning. */
function rows(schema: JsonSchema, path: string, comments: Map<string, string>, out: string[]): void {
  const objects = (s: JsonSchema): JsonSchema[] => (s.anyOf ? s.anyOf.flatMap(objects) : s.type === "object" && s.properties ? [s] : []);
  const arrays = (s: JsonSchema): JsonSchema[] => (s.anyOf ? s.anyOf.flatMap(arrays) : s.type === "array" && s.items ? [s.items] : []);
  for (const object of objects(schema)) {
    for (const [name, field] of Object.entries(object.properties ?? {})) {
      const fieldPath = path ? `${path}.${name}` : name;
      const optional = !(object.required ?? []).includes(name);
      const meaning = (comments.get(fieldPath) ?? "").replace(/\|/g, "\\|");
      out.push(`| ${code(fieldPath)} | ${typeOf(field)}${optional ? " (may be missing)" : ""} | ${meaning} |`);
      rows(field, fieldPath, comments, out);
    }
  }
  for (const items of arrays(schema)) rows(items, `${path}[]`, comments, out);
}

/** docs/report-schema.md, from the schema and the source text of schema.ts (its doc comments). */
export function reportSchemaMarkdown(schemaSource: string): string {
  const schema = z.toJSONSchema(ReportSchema, { io: "output" }) as JsonSchema;
  const table: string[] = [];
  rows(schema, "", fieldComments(schemaSource), table);
  return [
    "# The JSON report: every field",
    "",
    "<!-- Written by `npm run docs:schema` from src/report/schema.ts: change the schema, then run it. -->",
    "",
    "`dumpdbg analyze --json` prints this document alone on stdout, and every analysis writes it to",
    "`reports/<session-id>.json`; `dumpdbg triage --json` prints its `crash` object. Fields that do not",
    "apply are `null`, never missing; the few marked *may be missing* were added in a later version and",
    "are absent from older reports. `[]` in a path stands for each element of an array. The same",
    "contract as a JSON Schema (draft 2020-12): [report.schema.json](report.schema.json). How to read a",
    "report: [reports.md](reports.md).",
    "",
    "| field | type | meaning |",
    "|---|---|---|",
    ...table,
    "",
  ].join("\n");
}
