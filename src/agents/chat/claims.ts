/**
 * Claims a question makes about the crash ("why did thread 1 crash?", "it's a double free", "the
 * null pointer is `session`"), and the measurements that contradict them. Pure: finding claims
 * needs only the text, checking them needs what the chat has measured.
 */
import { normalizeFunctionName } from "../../analyzers/index.js";
import type { Frame, ThreadSummary } from "../../debuggers/model.js";
import { listed } from "../../report/numbers.js";
import type { Crash, CrashKind } from "../../report/schema.js";

export type Claim =
  | { about: "thread"; thread: number | "main" }
  | { about: "kind"; kind: CrashKind }
  | { about: "signal"; signal: string }
  | { about: "function"; function: string }
  | { about: "null"; expression: string };

/** What the chat measured, with the evidence ids that measured it (null when nothing in the store did). */
export interface Measurements {
  crash: Crash;
  threads: ThreadSummary[];
  /** The debugger's number of the process's main thread (its LWP is the process id), when known. */
  mainThread: number | null;
  /** The crashing thread's stack, innermost first. */
  frames: Frame[];
  evidence: { threads: string | null; signal: string | null; stack: string | null };
  /** The debugger's name (`gdb`), whose thread numbers the answers use. */
  debugger: string;
}

/** One sentence for the user, and the evidence it rests on. */
export interface Finding {
  text: string;
  evidenceIds: string[];
}

const KIND_PHRASES: ReadonlyArray<[RegExp, CrashKind]> = [
  [/\bdouble[- ]free[sd]?\b|\bfreed twice\b/, "double-free"],
  [/\bstack[- ]buffer[- ]overflow\b|\bstack smashing\b|\bstack protector\b/, "stack-buffer-overflow"],
  [/\bstack[- ]overflow\b|\b(infinite|unbounded|runaway) recursion\b/, "stack-overflow"],
  [/\bbuffer overflow\b|\bfortify\b/, "fortify-failure"],
  [/\bheap[- ]corruption\b|\bcorrupt(ed)? (the )?heap\b/, "heap-corruption"],
  [/\bnull[- ]?(pointer|deref\w*)\b|\bnullptr\b/, "null-dereference"],
  [/\bassert(ion)?( failure| failed)?\b/, "assertion-failure"],
  [/\bdeadlock(s|ed)?\b/, "deadlock"],
  [/\bhang(s|ing)?\b|\bhung\b|\bfroze(n)?\b/, "hang"],
  [/\bbreakpoint\b|\bint3\b|\b_*debugbreak\b|\bsigtrap\b/, "breakpoint"],
  [/\bdivi(de|sion)[- ]by[- ]zero\b|\bdiv[- ]by[- ]zero\b/, "division-by-zero"],
  [/\b(uncaught|unhandled) (c\+\+ )?exception\b/, "uncaught-exception"],
  [/\bpure virtual\b/, "pure-virtual-call"],
  [/\billegal instruction\b/, "illegal-instruction"],
  [/\bbus error\b/, "bus-error"],
  [/\bpanic(s|ked)?\b/, "panic"],
  [/\bout[- ]of[- ]memory\b|\boutofmemoryerror\b|\boom\b/, "out-of-memory"],
];

/** A claimed kind that names the measured one in other words is no contradiction. */
const SAME_KIND: Partial<Record<CrashKind, CrashKind[]>> = {
  "fortify-failure": ["stack-buffer-overflow"],
  "stack-buffer-overflow": ["fortify-failure"],
  "heap-corruption": ["double-free"],
  "null-dereference": ["bad-jump"],
  // A deadlock is a hang with a lock cycle: "it hung" names it too.
  hang: ["deadlock"],
  deadlock: ["hang"],
};

const SIGNAL_WORDS: ReadonlyArray<[RegExp, string]> = [
  [/\bsig(segv|abrt|bus|fpe|ill|kill|term|trap|sys|quit|pipe)\b/, ""],
  [/\bsegfault(ed|s)?\b|\bsegmentation fault\b/, "SIGSEGV"],
];

const THREAD = String.raw`(?:thread\s*#?\s*(\d+)|(?:the\s+)?(main) thread)`;
const CRASH_VERB = String.raw`(?:crash(?:ed|es)?|fault(?:ed)?|died|die|segfault(?:ed)?|abort(?:ed)?|panic(?:ked)?|got the signal|received the signal)`;
const THREAD_CLAIMS = [
  new RegExp(`${THREAD}\\s+(?:\\w+\\s+)?${CRASH_VERB}\\b`, "g"),
  new RegExp(`\\b(?:did|does|was|has|is)\\s+${THREAD}\\s+(?:\\w+\\s+)?${CRASH_VERB}`, "g"),
  new RegExp(`\\b(?:crash|crashed|fault|faulted|segfault|signal)\\s+(?:on|in)\\s+${THREAD}`, "g"),
  // "the crash was in thread 2", "the fault happened on the main thread"
  new RegExp(`\\b(?:crash|fault|segfault|signal)\\s+(?:was|is|happened|occurred)\\s+(?:on|in)\\s+${THREAD}`, "g"),
];

const EXPRESSION = String.raw`[A-Za-z_]\w*(?:(?:->|\.)[A-Za-z_]\w*|\[\w+\])*`;
const NULL_CLAIMS = [
  new RegExp(`\\bthe null pointer (?:is|was)\\s+\`?(${EXPRESSION})\`?`, "gi"),
  new RegExp(`\`?(${EXPRESSION})\`?\\s+(?:is|was)\\s+(?:a\\s+)?(?:null|nullptr|0x0)\\b`, "gi"),
];
/** Words that stand where a claim's subject would, without being one. */
const NOT_A_SUBJECT = new Set(["it", "this", "that", "what", "which", "pointer", "something", "anything", "nothing", "value", "there", "who", "thread", "frame", "line", "file", "function", "code", "the", "a", "an", "my", "our", "libc"]);

export function findClaims(question: string): Claim[] {
  const q = question.toLowerCase();
  const claims: Claim[] = [];
  const add = (claim: Claim) => {
    if (!claims.some((c) => JSON.stringify(c) === JSON.stringify(claim))) claims.push(claim);
  };

  for (const pattern of THREAD_CLAIMS) {
    for (const match of q.matchAll(pattern)) {
      if (negated(q, match.index)) continue;
      add({ about: "thread", thread: match[1] !== undefined ? Number(match[1]) : "main" });
    }
  }
  for (const [pattern, kind] of KIND_PHRASES) {
    const match = pattern.exec(q);
    if (match && !negated(q, match.index)) add({ about: "kind", kind });
  }
  for (const [pattern, name] of SIGNAL_WORDS) {
    const match = pattern.exec(q);
    if (match && !negated(q, match.index)) add({ about: "signal", signal: name || match[0].toUpperCase() });
  }
  const inFunction = /\b(?:crash(?:ed|es)?|fault(?:ed|s)?|died|segfault(?:ed)?|blew up)\s+(?:in|inside|at)\s+(?:the\s+)?(?:function\s+)?`?([A-Za-z_][\w:~]*)`?(\s*\(\))?(\s+thread)?/.exec(question);
  if (inFunction?.[1] && !inFunction[3] && !NOT_A_SUBJECT.has(inFunction[1].toLowerCase()) && !negated(q, inFunction.index)) {
    add({ about: "function", function: inFunction[1] });
  }
  for (const pattern of NULL_CLAIMS) {
    for (const match of question.matchAll(pattern)) {
      const expression = match[1] ?? "";
      if (!NOT_A_SUBJECT.has(expression.toLowerCase()) && !negated(q, match.index)) add({ about: "null", expression });
    }
  }
  return claims;
}

/** The contradiction between a claim and the measurements, or null when they agree or cannot tell. */
export function checkClaim(claim: Claim, measured: Measurements): Finding | null {
  switch (claim.about) {
    case "thread":
      return checkThread(claim.thread, measured);
    case "kind":
      return checkKind(claim.kind, measured);
    case "signal":
      return checkSignal(claim.signal, measured);
    case "function":
      return checkFunction(claim.function, measured);
    case "null":
      // Measured by evaluating the expression in the culprit frame: see nullClaimFinding.
      return null;
  }
}

/** The contradiction of "`expression` is the null pointer", from its value as the debugger printed it in the culprit frame. */
export function nullClaimFinding(expression: string, measured: { value: string | null; evidenceId: string }): Finding | null {
  if (measured.value === null || isNullPointer(measured.value)) return null;
  const shown = measured.value.replace(/^\([^)]*\)\s*/, "");
  return { text: `\`${expression}\` is not null: it is ${shown} in the culprit frame [${measured.evidenceId}].`, evidenceIds: [measured.evidenceId] };
}

/** A pointer value as a debugger prints it (`(struct client *) 0x0`, `0x0`) that is null. */
export function isNullPointer(printed: string): boolean {
  return /(^|\)\s*)0x0$/.test(printed.trim());
}

function checkThread(claimed: number | "main", measured: Measurements): Finding | null {
  const { crash, threads, mainThread } = measured;
  const ids = [measured.evidence.threads, measured.evidence.signal].filter((id): id is string => id !== null);
  if (crash.kind === "deadlock") {
    const members = [...new Set((crash.deadlock?.cycle ?? []).map((edge) => edge.thread))];
    return {
      text: `No thread crashed: the dump is of a hung process, in which threads ${listed(members)} wait for each other's locks${cite(ids)}.`,
      evidenceIds: ids,
    };
  }
  const crashed = crash.thread.id;
  const number = claimed === "main" ? mainThread : claimed;
  if (crashed === null || number === null) return null;
  const signal = crash.signal ?? "crash";
  const crashedThread = `thread ${crashed}${lwp(crash.thread.lwp)}`;
  const worker = mainThread !== null && mainThread !== crashed ? ", a worker thread, not the main thread" : "";
  if (number === crashed) {
    // In a core, the debugger numbers the thread that received the signal 1, whoever it was: say so
    // when "thread 1" may be meant as the main thread.
    if (claimed !== 1 || worker === "") return null;
    return {
      text: `Note: thread 1 is ${measured.debugger}'s number for the thread that received the ${signal}${worker}; the main thread is thread ${mainThread}${lwp(threadLwp(threads, mainThread))}${cite(ids)}.`,
      evidenceIds: ids,
    };
  }
  const thread = threads.find((t) => t.id === number);
  if (threads.length > 0 && !thread) {
    const had = threads.length === 1 ? "only 1 thread" : `${threads.length} threads`;
    return { text: `There is no thread ${number}: the process had ${had}, and the ${signal} was on ${crashedThread}${worker}${cite(ids)}.`, evidenceIds: ids };
  }
  const who = claimed === "main" ? `The main thread, thread ${number}${lwp(thread?.lwp ?? null)},` : `Thread ${number}`;
  const doing = thread?.frame?.function ? ` (it was in \`${normalizeFunctionName(thread.frame.function)}\`)` : "";
  return { text: `${who} did not crash${doing}: the ${signal} was on ${crashedThread}${worker}${cite(ids)}.`, evidenceIds: ids };
}

function checkKind(claimed: CrashKind, measured: Measurements): Finding | null {
  const { crash } = measured;
  if (claimed === crash.kind || SAME_KIND[claimed]?.includes(crash.kind) || crash.kind === "unknown") return null;
  const ids = [measured.evidence.signal, measured.evidence.stack].filter((id): id is string => id !== null);
  const how = crash.signal ? ` (${[crash.signal, faultText(crash)].filter(Boolean).join(", ")})` : "";
  const where = crash.culprit.function ? ` in \`${crash.culprit.function}\`` : "";
  return { text: `It is not ${kindPhrase(claimed)}: the crash is ${kindPhrase(crash.kind)}${where}${how}${cite(ids)}.`, evidenceIds: ids };
}

function checkSignal(claimed: string, measured: Measurements): Finding | null {
  const { crash } = measured;
  const ids = [measured.evidence.signal].filter((id): id is string => id !== null);
  if (crash.signal === claimed) return null;
  if (crash.signal === null) {
    if (crash.kind !== "deadlock") return null;
    return { text: `No signal stopped the process: the dump is of a hung process (a deadlock), not of a ${claimed}${cite(ids)}.`, evidenceIds: ids };
  }
  return { text: `The signal was ${crash.signal}, not ${claimed}${cite(ids)}.`, evidenceIds: ids };
}

function checkFunction(claimed: string, measured: Measurements): Finding | null {
  const { crash, frames } = measured;
  if (frames.length === 0 || crash.kind === "deadlock") return null;
  const culprit = crash.culprit.frame ?? 0;
  const name = normalizeFunctionName(claimed);
  const frame = frames.find((f) => f.function !== null && normalizeFunctionName(f.function) === name);
  if (frame && frame.level <= culprit) return null;
  const ids = [measured.evidence.stack].filter((id): id is string => id !== null);
  const at = crash.culprit.file ? ` at ${crash.culprit.file}:${crash.culprit.line ?? "?"}` : "";
  const fault = crash.culprit.function ? `the fault is in \`${crash.culprit.function}\` (frame ${culprit}${at})` : `the fault is in frame ${culprit}`;
  const text = frame
    ? `It did not crash in \`${claimed}\`: ${fault}, which \`${claimed}\` (frame ${frame.level}) called${cite(ids)}.`
    : `\`${claimed}\` is not on the crashing thread's stack: ${fault}${cite(ids)}.`;
  return { text, evidenceIds: ids };
}

/** "not a double free", "isn't a deadlock": the user already denies it. */
function negated(q: string, index: number): boolean {
  return /\b(not|no|never|isn't|wasn't|isnt|wasnt|doesn't|didn't)\s+(\S+\s+){0,2}$/.test(q.slice(Math.max(0, index - 40), index));
}

function faultText(crash: Crash): string | null {
  if (crash.faultAddress === null) return null;
  const verb = crash.access === null ? "at" : { read: "reading", write: "writing", execute: "executing" }[crash.access];
  return `${verb} address ${crash.faultAddress}`;
}

/** "a null dereference", "an abort", "a crash of unknown kind": a kind as a sentence names it. */
export function kindPhrase(kind: CrashKind): string {
  if (kind === "unknown") return "a crash of unknown kind";
  const text = kind.replaceAll("-", " ");
  return `${/^[aeiou]/.test(text) ? "an" : "a"} ${text}`;
}

function lwp(value: number | null): string {
  return value === null ? "" : ` (LWP ${value})`;
}

function threadLwp(threads: ThreadSummary[], id: number | null): number | null {
  return threads.find((t) => t.id === id)?.lwp ?? null;
}

function cite(ids: string[]): string {
  return ids.length > 0 ? ` [${ids.join(", ")}]` : "";
}

