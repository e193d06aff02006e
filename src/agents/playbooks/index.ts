/**
 * The offline brain: for each crash kind, the hypotheses worth testing and the 2–3 commands that
 * test each, the rules that judge them from what the commands printed, the commands that go
 * deeper once one is confirmed, and the conclusion a senior engineer would write from it all.
 *
 * A playbook is rebuilt from the same facts whenever an agent needs it (the triage and the crash
 * site, both in the graph's state), so the state keeps only each hypothesis' `rule` name and the
 * closures never need to be checkpointed.
 */
import type { CrashKind } from "../../report/schema.js";
import type { State } from "../../state.js";
import { abortPlaybook, assertionPlaybook, fortifyPlaybook, stackProtectorPlaybook } from "./aborts.js";
import { divisionPlaybook, illegalInstructionPlaybook } from "./arithmetic.js";
import { badJumpPlaybook } from "./bad-jump.js";
import { breakpointPlaybook } from "./breakpoint.js";
import { busErrorPlaybook } from "./bus-error.js";
import { pureVirtualPlaybook, uncaughtExceptionPlaybook } from "./cpp.js";
import { deadlockPlaybook } from "./deadlock.js";
import { crashFacts, type Facts } from "./facts.js";
import { goPanicPlaybook } from "./go-panics.js";
import { goWaitPlaybook } from "./go-waits.js";
import { hangPlaybook } from "./hang.js";
import { doubleFreePlaybook, heapCorruptionPlaybook } from "./heap.js";
import { invalidAccessPlaybook } from "./invalid-access.js";
import { javaWaitsPlaybook } from "./java-waits.js";
import { pythonWaitsPlaybook } from "./python-waits.js";
import type { Playbook } from "./kit.js";
import { nullDereferencePlaybook } from "./null-dereference.js";
import { outOfMemoryPlaybook } from "./out-of-memory.js";
import { panicPlaybook } from "./panic.js";
import { isJavaScriptException, javaScriptExceptionPlaybook } from "./javascript.js";
import { runtimeCallPlaybook } from "./runtime-call.js";
import { stackOverflowPlaybook } from "./stack-overflow.js";
import { unknownPlaybook } from "./unknown.js";

const PLAYBOOKS: Record<CrashKind, (facts: Facts) => Playbook> = {
  "null-dereference": nullDereferencePlaybook,
  "invalid-memory-access": invalidAccessPlaybook,
  "bad-jump": badJumpPlaybook,
  "bus-error": busErrorPlaybook,
  "stack-overflow": stackOverflowPlaybook,
  "stack-buffer-overflow": stackProtectorPlaybook,
  "fortify-failure": fortifyPlaybook,
  "double-free": doubleFreePlaybook,
  "heap-corruption": heapCorruptionPlaybook,
  "assertion-failure": assertionPlaybook,
  abort: abortPlaybook,
  "uncaught-exception": uncaughtExceptionPlaybook,
  "out-of-memory": outOfMemoryPlaybook,
  "pure-virtual-call": pureVirtualPlaybook,
  "division-by-zero": divisionPlaybook,
  "illegal-instruction": illegalInstructionPlaybook,
  panic: panicPlaybook,
  deadlock: deadlockPlaybook,
  hang: hangPlaybook,
  breakpoint: breakpointPlaybook,
  unknown: unknownPlaybook,
};

export function playbookFor(facts: Facts): Playbook {
  return goPlaybookFor(facts) ?? javaWaitsPlaybookFor(facts) ?? pythonWaitsPlaybookFor(facts) ?? runtimeCallPlaybookFor(facts) ?? (isJavaScriptException(facts) ? javaScriptExceptionPlaybook(facts) : null) ?? PLAYBOOKS[facts.crash.kind](facts);
}

/** A hung CPython process whose waits were read on its Python side: its threads' locks are threading's, or the GIL. */
function pythonWaitsPlaybookFor(facts: Facts): Playbook | null {
  return facts.triage.python?.waitsDecided && (facts.crash.kind === "deadlock" || facts.crash.kind === "hang") ? pythonWaitsPlaybook(facts) : null;
}

/** A hung JVM whose waits were read on its Java side: its threads are Java threads, its locks Java's. */
function javaWaitsPlaybookFor(facts: Facts): Playbook | null {
  return facts.triage.jvm && facts.culprit?.found === "runtime" && (facts.crash.kind === "deadlock" || facts.crash.kind === "hang") ? javaWaitsPlaybook(facts) : null;
}

/** Faults in native code the program's own code on a runtime called. */
const NATIVE_FAULTS = new Set<CrashKind>(["null-dereference", "invalid-memory-access", "bad-jump", "bus-error"]);

/**
 * A memory fault whose culprit is a runtime's frame (a Java method): no debugger can select that frame
 * or print its variables, so the fault is read where it happened, in the native code it called.
 */
function runtimeCallPlaybookFor(facts: Facts): Playbook | null {
  return facts.culprit?.found === "runtime" && NATIVE_FAULTS.has(facts.crash.kind) ? runtimeCallPlaybook(facts) : null;
}

/** A Go program is read through its runtime's words, not the crashing thread's signal machinery. */
function goPlaybookFor(facts: Facts): Playbook | null {
  if (!facts.triage.go) return null;
  if (facts.crash.kind === "deadlock" || facts.crash.kind === "hang") return goWaitPlaybook(facts);
  return goPanicPlaybook(facts);
}

/** The playbook of the analysis' crash, from its crash site. */
export function playbookOf(state: State): Playbook {
  return playbookFor(crashFacts(state));
}
