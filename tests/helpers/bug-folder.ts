/**
 * A folder of real dumps for batch tests: five bugs (two null dereferences, two deadlocks), each
 * from two builds of its program, optionally with a core cut inside its notes and a file that is no dump; and
 * the check that a batch document groups them exactly by bug.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { buildCore, culpritLine } from "./cores.js";

export const BUGS = ["null-deref", "null-write", "div-zero", "deadlock", "deadlock-3"] as const;
export type Bug = (typeof BUGS)[number];
export const CULPRITS: Record<Bug, string> = {
  "null-deref": "send_to_client",
  "null-write": "cache_store",
  "div-zero": "average_latency",
  deadlock: "transfer_funds",
  "deadlock-3": "hand_over_item",
};

export interface BugFolder {
  dumps: string;
  /** Each dump's path → the bug (program) it is a core of. */
  placed: Map<string, Bug>;
}

/**
 * Links two builds' cores of `bugs` into `dumps` (every second one in `nested/` with `nested`),
 * plus, with `strays`, `cut.core` (a core cut inside its notes, which nothing reads) and a text file named `strays`.
 */
export async function bugFolder(dumps: string, options: { bugs?: readonly Bug[]; nested?: boolean; strays?: string } = {}): Promise<BugFolder> {
  const bugs = options.bugs ?? BUGS;
  mkdirSync(options.nested ? path.join(dumps, "nested") : dumps, { recursive: true });
  const builds = await Promise.all(bugs.flatMap((name) => [buildCore(name), buildCore(name, { variant: "second-build" })]));
  const placed = new Map<string, Bug>();
  builds.forEach((built, i) => {
    const file = path.join(options.nested && i % 2 ? path.join(dumps, "nested") : dumps, `${built.name}-${i}.core`);
    symlinkSync(built.core, file);
    placed.set(file, built.name as Bug);
  });
  if (options.strays) {
    writeFileSync(path.join(dumps, options.strays), "crash dumps from the nightly run\n");
    writeFileSync(path.join(dumps, "cut.core"), cutInsideNotes(readFileSync(builds[0]?.core ?? "")));
  }
  return { dumps, placed };
}

/** The first bytes of a 64-bit core, up to a little way into its note segment: a copy cut short that early. */
function cutInsideNotes(core: Buffer): Buffer {
  const phoff = Number(core.readBigUInt64LE(32));
  const [entrySize, count] = [core.readUInt16LE(54), core.readUInt16LE(56)];
  for (let i = 0; i < count; i++) {
    const at = phoff + i * entrySize;
    if (core.readUInt32LE(at) === 4) return core.subarray(0, Number(core.readBigUInt64LE(at + 8)) + 64);
  }
  throw new Error("the core has no note segment");
}

interface BatchGroup {
  count: number;
  members: string[];
  representative: string;
  culprit: { function: string | null; line: number | null };
}

/** Every group holds the two builds of one bug, named by its culprit and line; every bug has a group. */
export function expectGroupedByBug(groups: BatchGroup[], placed: Map<string, Bug>): void {
  expect(groups).toHaveLength(new Set(placed.values()).size);
  for (const group of groups) {
    const names = new Set(group.members.map((member) => placed.get(member)));
    expect(names.size, JSON.stringify(group)).toBe(1);
    const name = [...names][0] as Bug;
    expect(group.count).toBe(2);
    expect(group.culprit).toMatchObject({ function: CULPRITS[name], line: culpritLine(name) });
    expect(group.members).toContain(group.representative);
  }
}
