/** A class file's `SourceFile` read bounded: from javac's output, and from the same bytes cut or damaged. */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

import { sourceFileOf } from "../../src/runtimes/jvm/class-file.js";

const hasJavac = spawnSync("javac", ["-version"]).status === 0;

/** A class with a field of each constant kind that takes room (a long and a double take two entries), compiled by javac. */
function compiled(withDebug: boolean): Uint8Array {
  const dir = mkdtempSync(path.join(tmpdir(), "dumpdbg-class-"));
  writeFileSync(
    path.join(dir, "Ledger.java"),
    `package shop.books;\nclass Entry { long cents = 12345678901L; }\npublic class Ledger {\n  static final double RATE = 0.075;\n  long total(long cents) { return cents + (long) (cents * RATE) + 4000000000L; }\n}\n`,
  );
  execFileSync("javac", [withDebug ? "-g" : "-g:none", "-d", dir, path.join(dir, "Ledger.java")], { stdio: "ignore" });
  return readFileSync(path.join(dir, "shop", "books", "Ledger.class"));
}

describe.skipIf(!hasJavac)("sourceFileOf", () => {
  it("reads the source file javac recorded, past constants that take two entries", () => {
    expect(sourceFileOf(compiled(true))).toBe("Ledger.java");
  });

  it("names none for a class compiled without it, rather than guessing from the class's name", () => {
    expect(sourceFileOf(compiled(false))).toBeNull();
  });

  it("names none for bytes cut anywhere or damaged, and never throws", () => {
    const bytes = compiled(true);
    for (let length = 0; length < bytes.length; length++) expect(sourceFileOf(bytes.subarray(0, length))).toBeNull();
    const damaged = Uint8Array.from(bytes);
    damaged[9] = 0xff; // the constant pool's count, far past its end
    expect(sourceFileOf(damaged)).toBeNull();
    expect(sourceFileOf(new TextEncoder().encode("not a class file"))).toBeNull();
  });
});
