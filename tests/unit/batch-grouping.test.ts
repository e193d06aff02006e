/** Grouping dumps by bug: the pure part of `dumpdbg batch`. */
import { describe, expect, it } from "vitest";
import { groupByBug, type Triaged } from "../../src/batch/grouping.js";

const dump = (name: string, over: Partial<Triaged> = {}): Triaged => ({
  dump: `/crashes/${name}.core`,
  kind: "unknown",
  signature: "unknown | serve_forever | main",
  frames: ["serve_forever", "main"],
  culprit: { function: "serve_forever", file: "/src/server.c", line: 12 },
  completeness: 12,
  modifiedAt: "2026-11-27T06:00:00.000Z",
  buildId: null,
  origin: "sent",
  ...over,
});

describe("grouping by bug", () => {
  it("keeps dumps a watchdog killed apart from a crash with the same stack: their origins differ", () => {
    const groups = groupByBug([dump("killed-1"), dump("killed-2"), dump("crashed", { origin: "fault" })]);
    expect(groups.map((g) => [g.origin, g.members.map((m) => m.dump)])).toEqual([
      ["sent", ["/crashes/killed-1.core", "/crashes/killed-2.core"]],
      ["fault", ["/crashes/crashed.core"]],
    ]);
  });

  it("reads results kept from before origins were recorded as one origin, unknown", () => {
    const old = dump("old", { origin: undefined });
    expect(groupByBug([old, { ...old, dump: "/crashes/old-2.core" }]).map((g) => [g.origin, g.members.length])).toEqual([[null, 2]]);
  });
});
