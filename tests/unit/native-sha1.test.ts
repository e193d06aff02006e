/**
 * The SHA-1 @langchain/core's UUID v5 is built with (src/build/sha1.ts) gives the package's own
 * digest, so LangGraph's task ids are the same.
 */
import { describe, expect, it } from "vitest";
import sha1 from "../../src/build/sha1.js";

// The package's own, by its file: its exports do not name it, and it ships no types for it.
const packageFile = new URL("../../node_modules/@langchain/core/dist/utils/uuid/sha1.js", import.meta.url).href;
const { default: packageSha1 } = (await import(packageFile)) as { default: (bytes: Uint8Array) => Uint8Array };

describe("the SHA-1 of UUID v5", () => {
  it("is the package's digest for empty, short, block-sized and long inputs", () => {
    for (const length of [0, 1, 55, 56, 63, 64, 65, 1000]) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff);
      expect(sha1(bytes)).toEqual(packageSha1(bytes));
    }
  });
});
