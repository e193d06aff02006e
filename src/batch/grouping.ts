/**
 * Dumps grouped by bug: the same signature is the same bug; otherwise two crashes of the same kind
 * whose culprit-side stacks are alike enough (CASR's idea: a similarity over the frames from the
 * culprit outwards, with a threshold) are one. Names only, never addresses, so two builds and two
 * runs of one bug meet. Pure.
 */
import type { CrashKind, Exploitability, OriginType } from "../report/schema.js";

export interface Triaged {
  dump: string;
  kind: CrashKind;
  signature: string;
  /** Function names from the culprit outwards (normalised), as many as triage kept. */
  frames: string[];
  /** The culprit's language where triage knew it (`javascript` for a Node.js program's function); absent in a row kept before it was recorded. */
  culprit: { function: string | null; file: string | null; line: number | null; language?: string | null };
  /** How complete the dump's reading is: a culprit line, named frames. */
  completeness: number;
  modifiedAt: string;
  /** The program's build id, when the dump records it: an analysis is reused within one build. */
  buildId: string | null;
  /** Where the stop came from (a fault, a signal another process sent, a dump on request…); null in results kept from before origins were read. */
  origin?: OriginType | null;
  /** How exploitable the crash looks; null in results kept from before crashes were rated. */
  exploitability?: Exploitability["rating"] | null;
  /** The debugger that died twice opening this dump before another read it (`OpenedDump.crashedDebugger`), said as the dump is done. */
  crashedDebugger?: string | null;
}

export interface Group {
  id: string;
  kind: CrashKind;
  signature: string;
  culprit: Triaged["culprit"];
  /** Where its dumps' stops came from: a kill from outside and a crash with the same stack are not one bug. */
  origin: OriginType | null;
  members: Triaged[];
  representative: Triaged;
}

/** Frames compared from the culprit outwards. */
const FRAMES_COMPARED = 8;
/** How alike two culprit-side stacks must be to be one bug. */
export const SIMILARITY_THRESHOLD = 0.75;

/**
 * How alike two stacks are, from the culprit outwards: matching frames weigh more near the culprit
 * (where a bug is told apart) than far from it (shared callers like `main`). 1 for the same stack.
 */
export function stackSimilarity(a: string[], b: string[]): number {
  const n = Math.min(FRAMES_COMPARED, Math.max(a.length, b.length));
  if (n === 0) return 0;
  let same = 0;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const weight = 1 / (1 + i);
    total += weight;
    if (a[i] !== undefined && a[i] === b[i]) same += weight;
  }
  return same / total;
}

/** Groups, biggest first; within a group, its most complete member represents it. */
export function groupByBug(triaged: Triaged[]): Group[] {
  const groups: Group[] = [];
  const sorted = [...triaged].sort((x, y) => x.dump.localeCompare(y.dump));
  for (const dump of sorted) {
    const origin = dump.origin ?? null;
    const home =
      groups.find((g) => g.signature === dump.signature && g.origin === origin) ??
      groups.find((g) => g.kind === dump.kind && g.origin === origin && dump.culprit.function !== null && g.culprit.function === dump.culprit.function && stackSimilarity(g.representative.frames, dump.frames) >= SIMILARITY_THRESHOLD);
    if (home) {
      home.members.push(dump);
      if (dump.completeness > home.representative.completeness) {
        home.representative = dump;
        home.culprit = dump.culprit;
      }
    } else {
      groups.push({ id: "", kind: dump.kind, signature: dump.signature, culprit: dump.culprit, origin, members: [dump], representative: dump });
    }
  }
  groups.sort((x, y) => y.members.length - x.members.length || x.signature.localeCompare(y.signature));
  return groups.map((group, index) => ({ ...group, id: `G${index + 1}` }));
}
