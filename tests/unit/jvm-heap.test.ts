/** The Java heap as the SA prints it, read bounded: spaces from `universe`, the types from `jhisto`. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

import { parseHeap } from "../../src/runtimes/jvm/index.js";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/jvm/${name}`, import.meta.url), "utf8");

describe("parseHeap", () => {
  it("reads the serial collector's spaces and the largest types of a heap that ran out", () => {
    const heap = parseHeap(fixture("oom.universe.txt"), fixture("oom.jhisto.txt"));
    expect(heap.spaces.map((space) => [space.name, space.capacity])).toEqual([
      ["eden", 8912896],
      ["from", 1114112],
      ["to", 1114112],
      ["old", 22413312],
    ]);
    expect(heap.capacity).toBe(33554432);
    expect((heap.used ?? 0) / (heap.capacity ?? 1)).toBeGreaterThan(0.95);
    expect(heap.histogram[0]).toEqual({ type: "byte[]", instances: 1692, bytes: 31554464 });
    expect(heap.histogram.map((row) => row.bytes)).toEqual([...heap.histogram.map((row) => row.bytes)].sort((a, b) => b - a));
    expect(heap.histogram.length).toBeLessThanOrEqual(10);
  });

  it("gives no spaces, and so an unknown capacity, for a collector whose output it does not know", () => {
    const heap = parseHeap("garbage-first heap   [0x0000000080000000, 0x0000000100000000] region size 1024K\n", "");
    expect([heap.spaces, heap.capacity, heap.used, heap.histogram]).toEqual([[], null, null, []]);
  });

  it("skips lines that are not what they claim: a percentage over 100, a histogram row cut short", () => {
    const heap = parseHeap("Gen 0:   eden [0x0,0x1,0x2) space capacity = 100, 250.0 used\n", "1:\t\t12\n2:\t\t3\t96\tjava.lang.String\n");
    expect([heap.spaces, heap.histogram]).toEqual([[], [{ type: "java.lang.String", instances: 3, bytes: 96 }]]);
  });
});
