/**
 * How a crash verdict changed when evidence was taken away from its dump, judged by the rule the
 * issue states: a fact the dump does not hold is unknown, and unknown may make a verdict less
 * specific (a kind stays or generalises, a culprit or a line goes) but never different (another
 * kind, another culprit, another line) and never a higher exploitability rating. Pure.
 */
import path from "node:path";
import type { Crash, CrashKind, Exploitability } from "../../src/report/schema.js";

/** The parts of a crash the rule speaks of. */
export interface Verdict {
  kind: CrashKind;
  culprit: { function: string | null; module: string | null; line: number | null };
  rating: Exploitability["rating"];
  /** The runtime whose own frames were read into the stack (`jvm`, `cpython`); null where none was. */
  runtime?: string | null;
}

export type ChangeClass = "same" | "less-specific" | "changed-class";

export interface VerdictChange {
  class: ChangeClass;
  /** One phrase per field that changed, e.g. "kind double-free → abort (generalised)". */
  changes: string[];
  /** What broke the rule, empty unless the class is changed-class. */
  violations: string[];
}

/**
 * Kinds that cover other kinds: the general kind is what is left when the evidence that told the
 * specific one apart is missing.
 */
const GENERALISATIONS: Partial<Record<CrashKind, readonly CrashKind[]>> = {
  // glibc and the runtimes end all of these through abort(): without the message, the block's
  // header or the frames above abort, SIGABRT raised by the program is all that is shown.
  abort: ["assertion-failure", "stack-buffer-overflow", "double-free", "heap-corruption", "fortify-failure", "uncaught-exception", "pure-virtual-call"],
  // "double free or corruption" is malloc's word for both; the freed block's header tells them apart.
  "heap-corruption": ["double-free"],
  // A deadlock is a hang whose lock cycle was seen; without the locks' owners (memory the dump
  // lacks) the cycle cannot be drawn, and a hang is what is left.
  hang: ["deadlock"],
};

/** Least to most severe: "unknown" sits between the two sides, as !exploitable ranks it. */
const RATING_RANK: Record<Exploitability["rating"], number> = {
  "not-exploitable": 0,
  "probably-not-exploitable": 1,
  unknown: 2,
  "probably-exploitable": 3,
  exploitable: 4,
};

/** The verdict of a crash object as `dumpdbg triage --json` prints it. */
export function verdictOf(crash: Crash): Verdict {
  return {
    kind: crash.kind,
    culprit: { function: crash.culprit.function, module: crash.culprit.module, line: crash.culprit.line },
    rating: crash.exploitability?.rating ?? "unknown",
    runtime: crash.runtime?.name ?? null,
  };
}

/** Whether `after` is `before` or a kind that covers it, by GENERALISATIONS (transitively). */
function generalises(after: CrashKind, before: CrashKind): boolean {
  const covered = GENERALISATIONS[after] ?? [];
  return covered.some((kind) => kind === before || generalises(kind, before));
}

/**
 * The culprit's module by file name: an ablation moves the files a dump names (another folder,
 * a stripped copy), and a Mac or Windows path is not this machine's, so the folder says nothing.
 */
function moduleName(module: string | null): string | null {
  return module === null ? null : path.posix.basename(module.replaceAll("\\", "/"));
}

export function classifyChange(before: Verdict, after: Verdict): VerdictChange {
  const changes: string[] = [];
  const violations: string[] = [];
  const note = (change: string, allowed: boolean) => {
    changes.push(change);
    if (!allowed) violations.push(change);
  };

  if (after.kind !== before.kind) {
    if (after.kind === "unknown") note(`kind ${before.kind} → unknown`, true);
    else if (generalises(after.kind, before.kind)) note(`kind ${before.kind} → ${after.kind} (generalised)`, true);
    else note(`kind ${before.kind} → ${after.kind}`, false);
  }

  const [was, now] = [before.culprit, after.culprit];
  if (now.function !== was.function) {
    // A culprit that goes keeps its module, or loses it too; one that appears was inferred from less.
    const sameModule = moduleName(now.module) === null || moduleName(now.module) === moduleName(was.module);
    // A runtime's frames that could no longer be read (a Python line, a Java method) leave the native
    // stack the runtime ran, whose culprit is the runtime's code: that stack, less specific, not another verdict.
    const runtimeUnread = before.runtime != null && after.runtime == null && was.module === null;
    note(`culprit ${was.function ?? "unknown"} → ${now.function ?? "unknown"}${runtimeUnread ? ` (${before.runtime}'s frames not read)` : ""}`, (now.function === null && sameModule) || runtimeUnread);
  } else if (now.function === null && moduleName(now.module) !== moduleName(was.module)) {
    // Without function names (stripped code) the module is what the culprit says.
    note(`culprit module ${moduleName(was.module) ?? "unknown"} → ${moduleName(now.module) ?? "unknown"}`, moduleName(now.module) === null);
  }
  if (now.line !== was.line) note(`line ${was.line ?? "unknown"} → ${now.line ?? "unknown"}`, now.line === null);

  // "unknown" claims nothing, as a kind's unknown does: any rating may give way to it; none may rise to another.
  if (after.rating !== before.rating) note(`rating ${before.rating} → ${after.rating}`, after.rating === "unknown" || RATING_RANK[after.rating] < RATING_RANK[before.rating]);

  const changed = violations.length > 0 ? "changed-class" : changes.length > 0 ? "less-specific" : "same";
  return { class: changed, changes, violations };
}

/**
 * A rating that fell from the exploitable side to the not-exploitable side: lower, so the rule
 * allows it, but a missing fact then reads as evidence that the crash is harmless. Reported, not failed.
 */
export function ratingCrossedUnknown(before: Verdict, after: Verdict): boolean {
  return RATING_RANK[before.rating] > RATING_RANK.unknown && RATING_RANK[after.rating] < RATING_RANK.unknown;
}
