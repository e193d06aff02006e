/**
 * A hung process: triage found a cycle of threads each waiting for a mutex another one holds. Here
 * each mutex's owner is read back from the mutex, each thread's lock calls are found in its
 * function, and the locks are named by the expressions the program used to take them.
 */
import { normalizeFunctionName } from "../../analyzers/index.js";
import type { ThreadSummary } from "../../debuggers/model.js";
import { placed, probes, type Probe, type ProbeOf } from "../../debuggers/probe.js";
import type { Evidence, Found } from "../evidence.js";
import type { Facts } from "./facts.js";
import { Citations, notYetRun, THREADS, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { concludeOn } from "./conclusions.js";
import { basename } from "./prose.js";
import { codeOf, functionSpan, grep } from "./source.js";
import { fieldOf, pointerOf, printed } from "./values.js";
import { listed } from "../../report/numbers.js";

const LOCK_CALL = /\b(pthread_mutex_lock|pthread_mutex_timedlock|mtx_lock|EnterCriticalSection|AcquireSRWLockExclusive|\.lock|->lock)\s*\(\s*&?\s*([^)]*?)\s*\)|\b(lock_guard|unique_lock|scoped_lock)\b[^(]*\(\s*([^)]*?)\s*\)/;

export function deadlockPlaybook(facts: Facts): Playbook {
  const cycle = facts.crash.deadlock?.cycle ?? [];
  const threads = [...new Set(cycle.map((edge) => edge.thread))];
  const locks = [...new Set(cycle.map((edge) => edge.lock).filter((lock): lock is string => lock !== null))];
  const backtraces: ProbeOf<"thread-backtraces"> = { kind: "thread-backtraces", threads };
  // A Windows CRITICAL_SECTION is read as memory (a minidump cannot evaluate expressions); its
  // third word, OwningThread, is its owner's thread id.
  const windows = facts.triage.os === "windows";
  const mutex = (lock: string): Probe => (windows ? probes.memory(lock, 3) : probes.evaluate(`*(pthread_mutex_t *) ${lock}`));
  const lockWord = windows ? "critical section" : "mutex";
  const ownerField = windows ? "OwningThread" : "__owner";
  const info = (evidence: Evidence): ThreadSummary[] => evidence.find(THREADS)?.reading ?? [];
  const ownerOf = (evidence: Evidence, lock: string) => {
    const found = evidence.find(mutex(lock));
    let lwp: number | null = null;
    if (windows) {
      const words = found?.ok && found.probe.kind === "memory" ? (found.reading as { words: bigint[] }).words : [];
      const owner = words[2];
      lwp = owner !== undefined && owner > 0n && owner < 1n << 32n ? Number(owner) : null;
    } else {
      // glibc's pthread_mutex_t keeps the owner's LWP in __data.__owner.
      const owner = fieldOf(fieldOf(printed(found), "__data"), "__owner");
      lwp = owner !== null && /^\d+$/.test(owner) ? Number(owner) : null;
    }
    return { found, lwp, thread: info(evidence).find((t) => t.lwp === lwp) ?? null };
  };
  const threadName = (evidence: Evidence, id: number | null) => {
    const t = info(evidence).find((candidate) => candidate.id === id);
    return t?.name ? `Thread ${id} "${t.name}"` : `Thread ${id}`;
  };

  /**
   * Where the locks are not in the dump: for each edge, the line at which the lock's holder took it,
   * from the holder's function up to its own waiting line, not released since (read from the code).
   */
  const takenBy = cycle.map((edge) => {
    const holder = cycle.find((other) => other.thread === edge.heldByThread);
    const fn = holder?.function?.split("::").at(-1) ?? null;
    const span = fn && holder?.line != null ? functionSpan(facts.source, fn, holder.line) : null;
    const taken = span && holder?.line != null ? grep(facts.source, LOCK_CALL, span.start, holder.line - 1) : [];
    const name = edge.lockName ?? null;
    const line = taken.find((n) => {
      const m = LOCK_CALL.exec(codeOf(facts.source?.lines[n - 1] ?? ""));
      return name !== null && (m?.[2] ?? m?.[4] ?? "").replace(/^&/, "").trim() === name;
    });
    return { edge, holder, line: line ?? null, listing: line !== undefined ? facts.list(line) : null };
  });

  const cycleHypothesis: PlannedHypothesis = {
    rule: "lock-cycle",
    statement:
      threads.length > 1
        ? `threads ${listed(threads)} deadlocked: each holds a ${lockWord} the next one waits for (a lock-order inversion)`
        : `threads wait for each other's ${lockWord}s in a cycle`,
    plan: [[backtraces, ...locks.slice(0, 2).map(mutex)], [...locks.slice(2).map(mutex), ...takenBy.map((t) => t.listing).filter((p) => p !== null)]],
    judge(evidence) {
      const c = new Citations();
      const bt = evidence.find(backtraces);
      const read = locks.map((lock) => ({ lock, ...ownerOf(evidence, lock) }));
      const unread = read.filter((r) => r.lwp === null);
      // No owner in the locks as read (not in the dump, or the module's empty .bss in their place): each
      // holder's code, which took the lock and has not left it, says who holds it.
      const missing = read.filter((r) => r.found !== null && r.lwp === null);
      if (missing.length === read.length && read.length > 0 && takenBy.every((t) => t.line !== null && evidence.find(t.listing)?.ok)) {
        const text = takenBy
          .map((t) => `thread ${t.holder?.thread} took \`${t.edge.lockName}\` at ${basename(t.holder?.file ?? facts.culprit?.file ?? "")}:${t.line}${c.cite(evidence.find(t.listing))} and waits at line ${t.holder?.line}, while thread ${t.edge.thread} waits for it`)
          .join("; ");
        return verdict("confirmed", `No owner is recorded in the ${lockWord}s as the dump has them${c.cite(...missing.map((r) => r.found))} (a dump without data segments), so their owners are read from the code: ${text}${c.cite(bt)}: a closed cycle.`, bt, ...missing.map((r) => r.found), ...takenBy.map((t) => evidence.find(t.listing)));
      }
      if (unread.length > 0) {
        return verdict("inconclusive", `The owner of ${unread.map((r) => r.lock).join(", ")} is not read yet${c.cite(...unread.map((r) => r.found))}.`, ...read.map((r) => r.found));
      }
      const agree = cycle.every((edge) => read.find((r) => r.lock === edge.lock)?.thread?.id === edge.heldByThread);
      const text = cycle
        .map((edge) => {
          const owner = read.find((r) => r.lock === edge.lock);
          return `thread ${edge.thread} waits for ${edge.lock}, whose ${ownerField} is ${windows ? "thread id" : "LWP"} ${owner?.lwp} = thread ${owner?.thread?.id ?? "?"}${c.cite(owner?.found)}`;
        })
        .join("; ");
      if (agree) return verdict("confirmed", `${text}${c.cite(bt, evidence.find(THREADS))}: a closed cycle.`, bt, evidence.find(THREADS), ...read.map((r) => r.found));
      return verdict("rejected", `${text}: the owners do not close the cycle.`, ...read.map((r) => r.found));
    },
  };
  const lostUnlock: PlannedHypothesis = {
    rule: "lost-unlock",
    statement: `a thread that exited (or returned early) without unlocking left a ${lockWord} held`,
    plan: [[...locks.slice(0, 2).map(mutex), THREADS]],
    judge(evidence) {
      const c = new Citations();
      const read = locks.map((lock) => ({ lock, ...ownerOf(evidence, lock) }));
      if (read.some((r) => r.lwp === null)) return verdict("inconclusive", `Not every ${lockWord}'s owner has been read.`, ...read.map((r) => r.found));
      const orphaned = read.filter((r) => r.thread === null);
      if (orphaned.length === 0) {
        return verdict("rejected", `Every ${lockWord} in the cycle is owned by a live thread of the process${c.cite(evidence.find(THREADS), ...read.map((r) => r.found))}, and each owner is itself waiting.`, evidence.find(THREADS), ...read.map((r) => r.found));
      }
      return verdict("confirmed", `${orphaned.map((r) => `${r.lock} is owned by LWP ${r.lwp}`).join(", ")}, which is no thread of the process${c.cite(...orphaned.map((r) => r.found))}.`, ...orphaned.map((r) => r.found));
    },
  };
  const notLocks: PlannedHypothesis = {
    rule: "condition-wait",
    statement: `the threads wait on a condition variable, barrier or I/O rather than on each other's ${lockWord}s`,
    plan: [[backtraces]],
    judge(evidence) {
      const bt = evidence.find(backtraces);
      const traces = bt?.reading ?? [];
      const inLock = traces.filter((t) => t.frames.some((f) => f.function && /mutex_lock|lll_lock_wait|EnterCriticalSection|WaitForCriticalSection/.test(f.function)));
      if (traces.length > 0 && inLock.length === traces.length) {
        return verdict("rejected", `Every thread of the cycle is inside ${windows ? "EnterCriticalSection" : "pthread_mutex_lock"}${new Citations().cite(bt)}, not a condition or barrier wait.`, bt);
      }
      // Without the system DLLs the waits are not on the stacks the debugger unwinds, but each
      // thread's critical section was found held by the next: that is a lock wait, not a condition.
      const owners = locks.map((lock) => ownerOf(evidence, lock));
      if (windows && owners.length > 0 && owners.every((o) => o.thread !== null)) {
        return verdict("rejected", `Each thread of the cycle waits on a critical section another holds (${owners.map((o) => `thread ${o.thread?.id}`).join(", ")})${new Citations().cite(...owners.map((o) => o.found))}, which is no condition or barrier wait.`, ...owners.map((o) => o.found));
      }
      return verdict("inconclusive", `Not all threads of the cycle are in a mutex lock${new Citations().cite(bt)}.`, bt);
    },
  };

  /** Per thread: the waiter's frame level, and the lock calls in its function up to the waiting line. */
  const waiters = (evidence: Evidence) => {
    const traces = evidence.find(backtraces)?.reading ?? [];
    return cycle.map((edge) => {
      const frame = traces.find((t) => t.thread === edge.thread)?.frames.find((f) => f.function && edge.function && normalizeFunctionName(f.function) === edge.function);
      const fn = edge.function?.split("::").at(-1) ?? null;
      const span = fn && edge.line !== null ? functionSpan(facts.source, fn, edge.line) : null;
      const lockLines = span && edge.line !== null ? grep(facts.source, LOCK_CALL, span.start, edge.line) : [];
      const expressions = lockLines.map((line) => {
        const m = LOCK_CALL.exec(codeOf(facts.source?.lines[line - 1] ?? ""));
        return { line, expression: (m?.[2] ?? m?.[4] ?? "").replace(/^&/, "").trim() };
      });
      const at = <P extends Probe>(probe: P): P | null => (frame ? placed(probe, { thread: edge.thread, frame: frame.level }) : null);
      return { edge, frame, expressions, at };
    });
  };
  return {
    hypotheses: [cycleHypothesis, lostUnlock, notLocks],
    investigate(rule, evidence) {
      if (rule !== "lock-cycle") return [];
      const commands: (Probe | null)[] = [];
      for (const waiter of waiters(evidence)) {
        commands.push(waiter.at(probes.arguments()));
        for (const { expression } of waiter.expressions) if (expression) commands.push(waiter.at(probes.evaluate(`&${expression}`)));
      }
      const first = waiters(evidence)[0];
      const lines = first?.expressions.map((e) => e.line) ?? [];
      if (lines.length && first?.edge.file) commands.push(facts.list(Math.min(...lines), Math.max(...lines), first.edge.file));
      return notYetRun(evidence, commands);
    },
    conclude: concludeOn(facts, ["lock-cycle"], "what the threads wait for", ({ evidence }, c) => {
      const named = waiters(evidence).map((w) => {
        const held = w.expressions.map((e) => {
          const probe = e.expression ? w.at(probes.evaluate(`&${e.expression}`)) : null;
          return { ...e, found: probe ? evidence.find(probe) : null };
        });
        const address = (found: Found | null | undefined) => pointerOf(printed(found ?? null));
        const waitsFor = held.find((e) => w.edge.lock !== null && address(e.found) === BigInt(w.edge.lock));
        const holds = held.filter((e) => e !== waitsFor && address(e.found) !== null);
        return { ...w, waitsFor, holds };
      });
      const file = basename(facts.crash.culprit.file ?? "");
      const sentences = named.map((w) => {
        const holds = w.holds.map((h) => `\`${h.expression}\` (${printed(h.found ?? null)?.replace(/^\([^)]*\)\s*/, "")}, locked at ${file}:${h.line}${c.cite(h.found)})`).join(" and ");
        const waits = w.waitsFor ? `\`${w.waitsFor.expression}\` (${w.edge.lock}${c.cite(w.waitsFor.found)})` : w.edge.lock;
        return `${threadName(evidence, w.edge.thread)} in \`${w.edge.function}\` holds ${holds || `a ${lockWord}`} and waits at ${file}:${w.edge.line} for ${waits}, held by thread ${w.edge.heldByThread}.`;
      });
      const sameFunction = new Set(cycle.map((e) => e.function)).size === 1;
      const order = named[0]?.holds[0] && named[0]?.waitsFor ? `\`${named[0].holds[0].expression}\` then \`${named[0].waitsFor.expression}\`` : "one lock then the other";
      const orders = named
        .filter((w) => w.holds[0] && w.edge.lock)
        .map((w) => `thread ${w.edge.thread} takes ${printed(w.holds[0]?.found ?? null)?.replace(/^\([^)]*\)\s*/, "")} then ${w.edge.lock}`);
      const listing = named[0]?.expressions.length && named[0].edge.file ? facts.list(Math.min(...named[0].expressions.map((e) => e.line)), Math.max(...named[0].expressions.map((e) => e.line)), named[0].edge.file) : null;
      const lockLines = listing ? evidence.find(listing) : null;
      const summary = `Deadlock: ${threads.length} threads each hold a ${lockWord} the next one waits for${c.cite(evidence.find(backtraces))}. ${sentences.join(" ")}`;
      return {
        summary,
        cause: [
          sameFunction
            ? `All of them run \`${cycle[0]?.function}\`, which locks ${order}${lockLines?.ok ? ` (${c.cite(lockLines).trim().slice(1, -1)})` : ""}. Called on different objects, the threads take the same mutexes in different orders${orders.length ? ` (${orders.join("; ")})` : ""}: a lock-order inversion.`
            : "The threads take the same mutexes in different orders in different functions: a lock-order inversion.",
        ],
        confidence: 0.95,
        recommendations: [
          `Take the mutexes in one global order in \`${cycle[0]?.function ?? "the locking code"}\`: e.g. always lock the object with the lower address (or id) first, whatever the direction of the operation.`,
          windows
            ? "Or hold a single lock for the whole operation, or use TryEnterCriticalSection and back off when the second lock is busy."
            : "Or hold a single lock for the whole operation, or use pthread_mutex_trylock and back off when the second lock is busy.",
          windows
            ? "Check the lock order with Application Verifier's Locks checks, or run the code under ThreadSanitizer on Linux, which reports lock-order inversions even when no deadlock happens."
            : "Run the test suite under ThreadSanitizer, which reports lock-order inversions even when no deadlock happens.",
        ],
      };
    }),
    openQuestions: [
      { text: "A dump of a hung process cannot show how long the threads had been waiting.", question: "How often does the hang happen, and does it need two operations in opposite directions at the same moment (e.g. two transfers between the same accounts)?" },
      { text: "Other code paths that take the same mutexes are not on these stacks.", question: "Which other functions lock these objects, and do they follow the same order?" },
    ],
  };
}
