/**
 * Our schemas are built with zod's compiled fast path off (src/zod.ts): each module of src/ that
 * builds one takes `z` from there, not from "zod" itself, and a schema from there parses, and
 * rejects, as zod would with the fast path on. The bundles' zod has English alone for its locales
 * (src/build/zod-locales.ts), zod's own English, its default.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { z } from "../../src/zod.js";
import { ReportSchema } from "../../src/report/schema.js";
import * as bundledLocales from "../../src/build/zod-locales.js";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** The files of src/ that import a value (not only types) from "zod" itself. */
function valueImportsOfZod(): string[] {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts") && file !== "zod.ts" && !file.startsWith("build/"));
  return files.filter((file) => {
    const source = ts.createSourceFile(file, readFileSync(path.join(SRC, file), "utf8"), ts.ScriptTarget.Latest);
    return source.statements.some(
      (statement) =>
        ts.isImportDeclaration(statement) &&
        ts.isStringLiteral(statement.moduleSpecifier) &&
        /^zod(\/|$)/.test(statement.moduleSpecifier.text) &&
        !statement.importClause?.isTypeOnly &&
        !(statement.importClause?.namedBindings && ts.isNamedImports(statement.importClause.namedBindings) && statement.importClause.namedBindings.elements.every((e) => e.isTypeOnly)),
    );
  });
}

describe("zod's schemas", () => {
  it("are built from src/zod.ts everywhere in src/", () => {
    expect(valueImportsOfZod()).toEqual([]);
  });

  it("are built with the fast path off", () => {
    expect(z.config().jitless).toBe(true);
  });

  it("still check what they parse", () => {
    const point = z.object({ x: z.number(), label: z.string().optional() });
    expect(point.parse({ x: 1, extra: true })).toEqual({ x: 1 });
    expect(() => point.parse({ x: "1" })).toThrow(/expected number/);
    expect(() => ReportSchema.parse({ schemaVersion: 1 })).toThrow();
  });
});

describe("zod's locales in the bundles", () => {
  it("are English alone, zod's own", () => {
    expect(Object.keys(bundledLocales)).toEqual(["en"]);
    expect(bundledLocales.en).toBe(z.locales.en);
  });
});
