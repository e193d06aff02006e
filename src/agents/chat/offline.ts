/**
 * The chat without a model: the common questions answered from the debugger, deterministically.
 * Every question is a probe asked through the executor (the store serves what the analysis
 * already ran), read into the model by the session's vocabulary, and every statement cites the
 * evidence that measured it. Probes name their thread and frame, so an answer does not depend on
 * what the user selected with /exec, and the debugger's own selection is left as it was.
 *
 * What the analysis judged, the chat judges the same way: which pointer was null, and why it
 * crashed when the session has no report, are the playbooks' hypotheses over the playbooks' facts,
 * their probes asked where the analysis asked them (so the store serves its evidence) and read by
 * their own judges.
 */
import { NULL_PAGE_LIMIT } from "../../analyzers/address-space.js";
import { lockText } from "../../analyzers/deadlock.js";
import { ALL_STACKS, coreSegmentAt, culpritIndex, fileSectionAt, lockWait, mappingAt, mutexOwnerExpression, normalizeFunctionName, type LockWait } from "../../analyzers/index.js";
import { normalizeAddress, toBigInt, type Frame, type SymbolAt, type ThreadSummary } from "../../debuggers/model.js";
import { placed, probes, type Probe } from "../../debuggers/probe.js";
import { senderText } from "../../report/origin.js";
import type { Crash } from "../../report/schema.js";
import type { Hypothesis } from "../../state.js";
import type { Facts } from "../playbooks/facts.js";
import { playbookFor } from "../playbooks/index.js";
import { BACKTRACE, MAPPINGS, SECTIONS, SIGNAL_INFO, THREADS, type Draft, type PlannedHypothesis, type Verdict } from "../playbooks/kit.js";
import { nullDereferencePlaybook } from "../playbooks/null-dereference.js";
import { suspects, type Suspect } from "../playbooks/pointers.js";
import { quoteLine } from "../playbooks/prose.js";
import { printed } from "../playbooks/values.js";
import { COMMANDS_PER_STEP, DEFAULT_LIMITS, INITIAL_HYPOTHESES } from "../runtime.js";
import { firstEvidence } from "./briefing.js";
import { checkClaim, findClaims, kindPhrase, nullClaimFinding, type Measurements, type Finding } from "./claims.js";
import { relevantEvidence } from "./evidence-search.js";
import { QuestionProbes, type Measured, type ProbeDeps } from "./probes.js";
import type { JvmFacts, NodeFacts, PythonFacts } from "../../analyzers/index.js";
import { classifyQuestion, type FrameRef, type Intent, type ThreadRef } from "./intent.js";

/** Frames listed for one thread: as many as triage's and the playbooks' backtrace, so the crashing thread's are usually stored. */
const STACK_FRAMES = BACKTRACE.limit;
const EXIT_SIGNAL: Probe = { kind: "exit-signal" };
const MAX_LISTED_THREADS = 40;
const MAX_LOCKS = 8;
const MAX_POINTERS = 6;
/** The null-dereference playbook's rules that each name a pointer that may have been null. */
const NULL_RULE = /^null(:|-argument$|-register$)/;
const MAX_VALUE_CHARS = 300;

const OFFLINE_TOPICS =
  "the crash itself, how to fix it, a thread's stack, what all threads were doing, a frame's locals, a register's value, " +
  "the fault address and what an address points into, which pointer was null, the value of an expression " +
  "(in backticks), who holds which lock, what was thrown, and in a Go program which goroutine panicked and what a map held";

/** An answer that ends early, e.g. a thread that does not exist; its text is the answer. */
class Unanswerable extends Error {
  constructor(readonly finding: Finding) {
    super(finding.text);
  }
}

/** The offline answers to one question, from its probes. */
export class OfflineEngine {
  private readonly probes: QuestionProbes;

  constructor(
    private readonly deps: ProbeDeps,
    signal: AbortSignal,
  ) {
    this.probes = new QuestionProbes(deps, signal);
  }

  private get crash(): Crash {
    return this.deps.briefing.crash;
  }

  /** The playbooks' facts of the crash. */
  private get facts(): Facts {
    return this.deps.briefing.facts;
  }

  /** The claims of the question that the measurements contradict, each with its evidence. */
  async corrections(question: string): Promise<Finding[]> {
    const claims = findClaims(question);
    if (claims.length === 0) return [];
    const needs = new Set(claims.map((claim) => claim.about));
    const threads = needs.has("thread") ? await this.threads() : null;
    const measured: Measurements = {
      crash: this.crash,
      threads: threads?.list ?? [],
      mainThread: needs.has("thread") ? await this.mainThread() : null,
      frames: needs.has("function") && this.crash.thread.id !== null ? (await this.stack(this.crash.thread.id)).frames : [],
      evidence: {
        threads: this.firstEvidence(THREADS) ?? threads?.id ?? null,
        signal: this.firstEvidence(SIGNAL_INFO, EXIT_SIGNAL),
        stack: this.firstEvidence(BACKTRACE),
      },
      debugger: this.deps.vocabulary.debugger,
    };
    const findings: Finding[] = [];
    try {
      for (const claim of claims) {
        const finding = claim.about === "null" ? await this.checkNullClaim(claim.expression) : checkClaim(claim, measured);
        if (finding) findings.push(finding);
      }
    } finally {
      await this.probes.putSelectionBack();
    }
    return findings;
  }

  /**
   * The answer to the question's intent. A question that only makes a claim ("it's a double free,
   * isn't it?") and was `corrected` gets the crash's facts after its correction.
   */
  async answer(question: string, corrected: boolean): Promise<Finding> {
    // A Java or Python thread asked about by its name ("what is teller-2 doing?"): its frames and locks in that language.
    const named = this.runtimeThreadNamed(question);
    if (named !== null) {
      const runtime = this.javaStackAnswer(named) ?? this.pythonStackAnswer(named);
      if (runtime) return runtime;
    }
    const classified = classifyQuestion(question);
    const intent: Intent = classified.kind === "unknown" && corrected ? { kind: "crash" } : classified;
    try {
      return await this.answerIntent(intent, question);
    } catch (error) {
      if (error instanceof Unanswerable) return error.finding;
      throw error;
    } finally {
      await this.probes.putSelectionBack();
    }
  }

  private answerIntent(intent: Intent, question: string): Promise<Finding> {
    switch (intent.kind) {
      case "stack":
        return this.stackAnswer(intent.thread);
      case "all-stacks":
        return this.allStacksAnswer();
      case "threads":
        return this.threadsAnswer();
      case "locals":
        return this.localsAnswer(intent.thread, intent.frame);
      case "registers":
        return this.registersAnswer(intent.names, intent.thread, intent.frame);
      case "fault-address":
        return this.faultAddressAnswer();
      case "address":
        return this.region(normalizeAddress(intent.address));
      case "locks":
        return this.locksAnswer(intent.lock === null ? null : normalizeAddress(intent.lock));
      case "null-pointer":
        return this.nullPointerAnswer();
      case "value":
        return this.valueAnswer(intent.expression, intent.thread, intent.frame);
      case "goroutine":
        return Promise.resolve(this.goroutineAnswer());
      case "map-contents":
        return Promise.resolve(this.mapAnswer());
      case "thrown": {
        const thrown = this.nodeThrownAnswer();
        return thrown ? Promise.resolve(thrown) : this.crashAnswer();
      }
      case "crash":
        return this.crashAnswer();
      case "fix":
        return this.fixAnswer();
      case "unknown":
        return Promise.resolve(this.cannotAnswer(question));
    }
  }

  /** A JVM's Java side as triage read it (the JDK's jhsdb), with the evidence id of its reading of the threads; null for another program. */
  private java(): { jvm: JvmFacts; id: string | null } | null {
    const jvm = this.facts.triage.jvm ?? null;
    if (!jvm) return null;
    return { jvm, id: jvm.threadsCommand ? (this.deps.briefing.triageEvidence[jvm.threadsCommand] ?? null) : null };
  }

  /** A Java thread's frames and what it holds and waits for, as jhsdb read them; null for a thread the JVM does not run Java on. */
  private javaStackAnswer(thread: number): Finding | null {
    const java = this.java();
    const read = java?.jvm.threads.find((t) => t.id === thread);
    if (!java || !read || read.frames.length === 0) return null;
    const cite = java.id ? ` [${java.id}]` : "";
    const lines = [`Thread ${thread} "${read.name ?? "?"}", ${read.state ?? "state not shown"}, its Java frames as jhsdb read them${cite}:`];
    for (const frame of read.frames) lines.push(`  ${frame.function ?? "??"}${frame.file ? ` (${frame.file}${frame.line !== null ? `:${frame.line}` : ""})` : frame.line !== null ? ` (line ${frame.line})` : ""}`);
    if (read.holds.length > 0) lines.push(`It holds ${read.holds.join(", ")}.`);
    if (read.waitsFor) lines.push(read.waitKind === "monitor" || read.waitKind === "ownable" ? `It waits to lock ${read.waitsFor}${this.holderOf(java.jvm, read.waitsFor)}.` : `It waits on ${read.waitsFor} (${read.waitKind === "wait" ? "Object.wait, for a notify" : "parked, for an unpark"}).`);
    return { text: lines.join("\n"), evidenceIds: java.id ? [java.id] : [] };
  }

  /** The thread a question names by its Java or Python name (`teller-2`, `"order-desk"`), where exactly one has it; "main" is the main thread's word. */
  private runtimeThreadNamed(question: string): number | null {
    const threads = [...(this.java()?.jvm.threads ?? []), ...(this.python()?.python.threads ?? [])];
    const named = threads.filter((t) => t.id !== null && t.name && t.name !== "main" && new RegExp(`(^|[\\s"'\`(])${t.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[\\s"'\`),.?!:;])`).test(question));
    return named.length === 1 ? (named[0]?.id ?? null) : null;
  }

  /** ", held by thread 16 "teller-2"" for a lock a Java thread holds. */
  private holderOf(jvm: JvmFacts, lock: string): string {
    const holder = jvm.threads.find((t) => t.holds.includes(lock));
    return holder ? `, held by thread ${holder.id ?? "?"} "${holder.name ?? "?"}"` : ", whose holder the reading does not show";
  }

  /** Which Java threads hold and wait for which locks (monitors, ReentrantLocks), and the cycle among them. */
  private javaLocksAnswer(): Finding | null {
    const java = this.java();
    if (!java) return null;
    const cite = java.id ? ` [${java.id}]` : "";
    const waiting = java.jvm.threads.filter((t) => t.waitsFor !== null);
    const lines: string[] = [];
    const cycle = this.crash.deadlock?.cycle ?? [];
    if (cycle.length > 1) {
      const name = (id: number | null) => `thread ${id ?? "?"} "${java.jvm.threads.find((t) => t.id === id)?.name ?? "?"}"`;
      lines.push(`Java deadlock${cite}: ${cycle.map((edge) => `${name(edge.thread)} waits in ${edge.function ?? "?"}${edge.line !== null ? ` (${edge.file ?? "line"}${edge.file ? ":" : " "}${edge.line})` : ""} for ${edge.lockName ?? "a lock"} (${edge.lock ?? "?"}), held by ${name(edge.heldByThread)}`).join("; ")}. None of them can go on.`);
    }
    for (const t of waiting.slice(0, MAX_LOCKS)) {
      if (cycle.some((edge) => edge.thread === t.id)) continue;
      // Object.wait and parking release what they wait on: they wait for a notify or an unpark, not for a holder.
      const how = t.waitKind === "wait" ? `waits on ${t.waitsFor} (Object.wait) for a notify` : t.waitKind === "park" ? `is parked on ${t.waitsFor} until something releases it` : `waits to lock ${t.waitsFor}${this.holderOf(java.jvm, t.waitsFor as string)}`;
      lines.push(`Thread ${t.id ?? "?"} "${t.name ?? "?"}" (${t.state ?? "?"}) ${how}${cite}.`);
    }
    if (lines.length === 0) lines.push(`No Java thread waits for a lock another holds${cite}.`);
    return { text: lines.join("\n"), evidenceIds: java.id ? [java.id] : [] };
  }

  /** A CPython process's Python side as triage read it from the core, with the evidence id of that reading; null for another program. */
  private python(): { python: PythonFacts; id: string | null } | null {
    const python = this.facts.triage.python ?? null;
    if (!python) return null;
    return { python, id: python.threadsCommand ? (this.deps.briefing.triageEvidence[python.threadsCommand] ?? null) : null };
  }

  /** A Python thread's frames, the locks it holds and the one it waits for, as read from the interpreter's structures; null for a thread that runs no Python. */
  private pythonStackAnswer(thread: number): Finding | null {
    const python = this.python();
    const read = python?.python.threads.find((t) => t.id === thread);
    if (!python || !read || read.frames.length === 0) return null;
    const cite = python.id ? ` [${python.id}]` : "";
    const lines = [`Thread ${thread}${read.name ? ` "${read.name}"` : ""}, its Python frames as read from the interpreter in the core${cite}:`];
    for (const frame of read.frames) lines.push(`  ${pythonFrameText(frame)}`);
    if (read.holds.length > 0) lines.push(`It holds ${read.holds.join(", ")}.`);
    if (read.waitsFor) lines.push(`It waits for ${read.waitsFor}${read.waitsForHeldBy !== null ? `, held by ${this.pythonThreadName(read.waitsForHeldBy)}` : ", held by no thread the dump shows"}.`);
    if (python.python.gil?.thread === thread) lines.push("It held the GIL.");
    if (read.exception) lines.push(`It was raising ${read.exception.type}${read.exception.message !== null ? `: ${read.exception.message}` : ""}.`);
    return { text: lines.join("\n"), evidenceIds: python.id ? [python.id] : [] };
  }

  /** `thread 3 "order-desk"`. */
  private pythonThreadName(id: number | null): string {
    const name = this.python()?.python.threads.find((t) => t.id !== null && t.id === id)?.name;
    return id === null ? "a thread" : name ? `thread ${id} "${name}"` : `thread ${id}`;
  }

  /** Which Python threads hold and wait for which locks of threading, the cycle among them, and who held the GIL; null for another program. */
  private pythonLocksAnswer(): Finding | null {
    const python = this.python();
    if (!python) return null;
    const cite = python.id ? ` [${python.id}]` : "";
    const lines: string[] = [];
    const cycle = this.crash.deadlock?.cycle ?? [];
    if (cycle.length > 1 && python.python.waitsDecided) {
      lines.push(`Python deadlock${cite}: ${cycle.map((edge) => `${this.pythonThreadName(edge.thread)} waits in ${edge.function ?? "?"}${edge.line !== null ? ` (${edge.file ?? "line"}${edge.file ? ":" : " "}${edge.line})` : ""} for ${edge.lockName ?? "a lock"} (${edge.lock ?? "?"}), held by ${this.pythonThreadName(edge.heldByThread)}`).join("; ")}. None of them can go on.`);
    }
    for (const t of python.python.threads.filter((thread) => thread.waitsFor !== null).slice(0, MAX_LOCKS)) {
      if (cycle.some((edge) => edge.thread === t.id)) continue;
      lines.push(`Thread ${t.id ?? "?"}${t.name ? ` "${t.name}"` : ""} waits for ${t.waitsFor}${t.waitsForHeldBy !== null ? `, held by ${this.pythonThreadName(t.waitsForHeldBy)}` : ", held by no thread the dump shows (a Lock records no holder, and no with block of another thread holds it)"}${cite}.`);
    }
    for (const t of python.python.threads.filter((thread) => thread.holds.length > 0 && thread.waitsFor === null).slice(0, MAX_LOCKS)) lines.push(`Thread ${t.id ?? "?"}${t.name ? ` "${t.name}"` : ""} holds ${t.holds.join(", ")}${cite}.`);
    if (python.python.gil) lines.push(`The GIL was held by ${this.pythonThreadName(python.python.gil.thread)}${cite}.`);
    if (lines.length === 0) return null;
    return { text: lines.join("\n"), evidenceIds: python.id ? [python.id] : [] };
  }

  /**
   * A Python frame's locals as read from the interpreter's frame in the core: the culprit's where it
   * is a Python frame, or the frame of the Python function asked about; null where the question is
   * about no Python frame (the debugger answers for native frames).
   */
  private pythonLocalsAnswer(thread: number, ref: FrameRef): Finding | null {
    const python = this.python();
    const read = python?.python.threads.find((t) => t.id === thread);
    if (!python || !read) return null;
    const culprit = this.crash.culprit;
    const frame = this.runtimeFrame(read.frames, thread, ref, "python", (f) => f.function === culprit.function && f.line === culprit.line);
    if (!frame) return null;
    const cite = python.id ? ` [${python.id}]` : "";
    const lines = [`Python frame ${pythonFrameText(frame)} of thread ${thread}, its locals as read from the interpreter's frame in the core${cite}:`];
    if (frame.locals === null) lines.push("Locals: not read (only the innermost frames' are kept).");
    else if (frame.locals.length === 0) lines.push("Locals: none bound.");
    else lines.push("Locals:", ...frame.locals.map((local) => `  ${local.name} = ${clip(local.value)}`));
    return { text: lines.join("\n"), evidenceIds: python.id ? [python.id] : [] };
  }

  /** A Node.js process's side as triage read it with llnode; null for another program. */
  private node(): NodeFacts | null {
    return this.facts.triage.node ?? null;
  }

  /** The evidence id of the llnode command that read a thread's frames. */
  private nodeEvidence(command: string): string[] {
    const id = this.deps.briefing.triageEvidence[command];
    return id ? [id] : [];
  }

  /** The error an uncaught JavaScript exception threw, as read from the heap; null where there is no Node.js side or none was read (the crash's own answer says why). */
  private nodeThrownAnswer(): Finding | null {
    const node = this.node();
    if (!node) return null;
    const crashing = node.threads.find((t) => t.id === this.crash.thread.id) ?? node.threads[0];
    const ids = crashing ? this.nodeEvidence(crashing.command) : [];
    const cite = ids.length > 0 ? ` [${ids.join(", ")}]` : "";
    const error = node.error;
    if (!error) {
      const why = node.notes.find((note) => /error object|thrown/.test(note));
      const text = this.crash.kind === "uncaught-exception" ? `V8 aborted on a JavaScript exception nothing caught, but what was thrown was not read${why ? `: ${why}` : ""}.` : `Nothing was thrown: the crash is ${kindPhrase(this.crash.kind)}, not an uncaught JavaScript exception${cite}.`;
      return { text, evidenceIds: ids };
    }
    const lines = [`${error.type}${error.message !== null ? `: ${error.message}` : " (its message was not read)"}, the heap's one error object (${error.address}), read by llnode${cite}.`];
    lines.push(error.at ? `It was thrown at ${error.at.file}:${error.at.line}:${error.at.column}, the position V8 kept on the error.` : "Where in its line it was thrown is not known: V8 kept no position on the error that was read.");
    const thrower = crashing?.frames[0];
    if (thrower) lines.push(`The innermost JavaScript frame is ${nodeFrameText(thrower)}${thrower.args ? `, called with ${clip(thrower.args)}` : ""}.`);
    lines.push("llnode reads no record of the value V8 was throwing: the error is taken to be the heap's only one.");
    return { text: lines.join("\n"), evidenceIds: ids };
  }

  /** A thread's JavaScript frames with their arguments, as llnode read them; null for a thread whose frames it did not read. */
  private nodeStackAnswer(thread: number): Finding | null {
    const read = this.node()?.threads.find((t) => t.id === thread);
    if (!read) return null;
    const ids = this.nodeEvidence(read.command);
    const cite = ids.length > 0 ? ` [${ids.join(", ")}]` : "";
    const culprit = this.crash.culprit;
    const lines = [`Thread ${thread} (LWP ${read.lwp}), its JavaScript frames as llnode read them, innermost first${cite}:`];
    // The crash's own native frames below the culprit's JavaScript caller (an addon's C), as triage placed them.
    const mixed = thread === this.crash.thread.id ? this.facts.triage.frames : [];
    const firstScript = mixed.findIndex((frame) => frame.language === "javascript");
    const stackIds = firstScript > 0 ? this.firstEvidence(BACKTRACE) : null;
    if (firstScript > 0) {
      lines.unshift(`Thread ${thread}'s native frames from the culprit to its first JavaScript frame, as ${this.deps.vocabulary.debugger} unwound them${stackIds ? ` [${stackIds}]` : ""}:`, ...mixed.slice(0, firstScript).map((frame) => `  ${frameText(frame, false)}`));
      if (stackIds) ids.push(stackIds);
    }
    for (const frame of read.frames.slice(0, STACK_FRAMES)) {
      const isCulprit = thread === this.crash.thread.id && culprit.language === "javascript" && frame.function === culprit.function && frame.file === culprit.file;
      lines.push(`  ${nodeFrameText(frame)}${isCulprit ? "   <- culprit" : ""}`);
    }
    if (read.frames.length > STACK_FRAMES) lines.push(`  ... ${read.frames.length - STACK_FRAMES} more in ${ids[0] ?? "llnode's output"}`);
    lines.push("A JavaScript frame's line is where its function begins, as V8 records it; the native frames are the debugger's (ask for the stack of the thread in the debugger with /exec).");
    return { text: lines.join("\n"), evidenceIds: ids };
  }

  /**
   * The frame of a runtime's stack (Python's, JavaScript's) a question is about: the culprit, where
   * it is this thread's and in that language (`isCulprit` finds it), or the function named.
   */
  private runtimeFrame<F extends { function: string | null }>(frames: readonly F[], thread: number, ref: FrameRef, language: string, isCulprit: (frame: F) => boolean): F | undefined {
    if (ref === "culprit") return thread === this.crash.thread.id && this.crash.culprit.language === language ? frames.find(isCulprit) : undefined;
    if (typeof ref !== "object") return undefined;
    return frames.find((f) => f.function !== null && (f.function === ref.function || f.function.split(".").pop() === ref.function));
  }

  /** A JavaScript frame's arguments as llnode printed them: the culprit's where it is JavaScript, or the frame of the function asked about; null where the question is about no JavaScript frame. */
  private nodeArgumentsAnswer(thread: number, ref: FrameRef): Finding | null {
    const read = this.node()?.threads.find((t) => t.id === thread);
    if (!read) return null;
    const culprit = this.crash.culprit;
    const frame = this.runtimeFrame(read.frames, thread, ref, "javascript", (f) => f.function === culprit.function && f.file === culprit.file);
    if (!frame) return null;
    const ids = this.nodeEvidence(read.command);
    const cite = ids.length > 0 ? ` [${ids.join(", ")}]` : "";
    const lines = [`JavaScript frame ${nodeFrameText(frame)} of thread ${thread}, its arguments as llnode printed them${cite}:`];
    lines.push(frame.args === "" ? "Arguments: none printed." : `Arguments: ${clip(frame.args)}`);
    lines.push("Each is its address and llnode's short view of it (a string cut at 16 characters, `this` first); the function's locals are not read.");
    return { text: lines.join("\n"), evidenceIds: ids };
  }

  private async stackAnswer(ref: ThreadRef): Promise<Finding> {
    const thread = await this.resolveThread(ref);
    const runtime = this.javaStackAnswer(thread) ?? this.pythonStackAnswer(thread) ?? this.nodeStackAnswer(thread);
    if (runtime) return runtime;
    const stack = await this.stack(thread);
    if (stack.frames.length === 0) return failed(`${this.deps.vocabulary.debugger} shows no stack for thread ${thread}`, stack);
    const culprit = thread === this.crash.thread.id ? this.crash.culprit.frame : null;
    const lines = [`Thread ${thread}${await this.threadRole(thread)} [${stack.id}]:`];
    for (const frame of stack.frames) lines.push(`  ${frameText(frame)}${frame.level === culprit ? "   <- culprit" : ""}`);
    if (stack.truncated) {
      const outermost = this.deps.vocabulary.render({ kind: "backtrace", limit: 10, outermost: true, thread });
      lines.push(`  ... more frames follow (the innermost ${STACK_FRAMES} are shown; /exec ${outermost} shows the outermost)`);
    }
    return { text: lines.join("\n"), evidenceIds: [stack.id] };
  }

  private async allStacksAnswer(): Promise<Finding> {
    const all = await this.probes.run(ALL_STACKS);
    const traces = [...(all.reading ?? [])].sort((a, b) => a.thread - b.thread);
    if (traces.length === 0) return failed(`${this.deps.vocabulary.debugger} listed no threads`, all);
    const lines = [`${traces.length} thread${traces.length === 1 ? "" : "s"} [${all.id}]:`];
    for (const trace of traces.slice(0, MAX_LISTED_THREADS)) {
      const top = trace.frames[0];
      const own = ownFrame(trace.frames);
      const via = own && own !== top ? ` <- ${frameText(own, false)}` : "";
      lines.push(`  thread ${trace.thread}${lwp(trace.lwp)}: ${top ? frameText(top, false) : "no frames"}${via}${this.mark(trace.thread)}`);
    }
    if (traces.length > MAX_LISTED_THREADS) lines.push(`  ... ${traces.length - MAX_LISTED_THREADS} more in ${all.id}`);
    return { text: lines.join("\n"), evidenceIds: [all.id] };
  }

  private async threadsAnswer(): Promise<Finding> {
    const { list, id } = await this.threads();
    const main = await this.mainThread();
    const lines = [`${list.length} thread${list.length === 1 ? "" : "s"} [${id}]:`];
    for (const thread of list.slice(0, MAX_LISTED_THREADS)) {
      const name = thread.name ? ` "${thread.name}"` : "";
      const role = thread.id === main ? " (main thread)" : "";
      lines.push(`  thread ${thread.id}${lwp(thread.lwp)}${name}${role}: ${thread.frame ? frameText({ ...thread.frame, level: 0 }, false) : "??"}${this.mark(thread.id)}`);
    }
    if (list.length > MAX_LISTED_THREADS) lines.push(`  ... ${list.length - MAX_LISTED_THREADS} more in ${id}`);
    return { text: lines.join("\n"), evidenceIds: [id] };
  }

  private async localsAnswer(threadRef: ThreadRef, frameRef: FrameRef): Promise<Finding> {
    const thread = await this.resolveThread(threadRef);
    const runtime = this.pythonLocalsAnswer(thread, frameRef) ?? this.nodeArgumentsAnswer(thread, frameRef);
    if (runtime) return runtime;
    const level = await this.resolveFrame(thread, frameRef);
    // The locals are printed without their frame: the frame (its function, arguments, line) is the stack's.
    const frame = await this.frameOf(thread, level);
    // A debugger prints nothing for a frame level the stack does not have.
    if (frame.missing) return { text: `Thread ${thread} has no frame ${level} [${frame.id}]; ask for its stack to see the frames it has.`, evidenceIds: [frame.id] };
    const result = await this.probes.run(placed(probes.locals(), { thread, frame: level }));
    if (!result.ok) return failed(`${this.deps.vocabulary.debugger} could not read the locals of frame ${level} of thread ${thread}`, result);
    const locals = result.reading ?? [];
    const ids = frame.frame ? [result.id, frame.id] : [result.id];
    const text = [`Frame ${level} of thread ${thread}${frame.frame ? `: ${frameText(frame.frame)}` : ""} [${ids.join(", ")}]`];
    if (frame.frame?.args) text.push(`Arguments: ${clip(frame.frame.args)}`);
    if (locals.length === 0) text.push(`Locals: none (${this.deps.vocabulary.debugger} says: no locals)`);
    else text.push("Locals:", ...locals.map((v) => `  ${v.name} = ${clip(v.value)}`));
    return { text: text.join("\n"), evidenceIds: ids };
  }

  private async registersAnswer(names: string[], threadRef: ThreadRef, frameRef: FrameRef): Promise<Finding> {
    const thread = await this.resolveThread(threadRef);
    const level = await this.resolveFrame(thread, frameRef);
    const result = await this.probes.run(placed({ kind: "registers", ...(names.length > 0 ? { names } : {}) }, { thread, frame: level }));
    const registers = result.reading ?? [];
    if (!result.ok || registers.length === 0) return failed(`${this.deps.vocabulary.debugger} could not read ${names.join(", ") || "the registers"} in frame ${level} of thread ${thread}`, result);
    // The registers are printed without their frame: which function it is, the stack says.
    const { frame, id: stackId } = await this.frameOf(thread, level);
    const ids = frame?.function ? [result.id, stackId] : [result.id];
    const fault = toBigInt(this.crash.faultAddress);
    const lines = [`In thread ${thread}, frame ${level}${frame?.function ? ` (\`${normalizeFunctionName(frame.function)}\`)` : ""} [${ids.join(", ")}]:`];
    for (const register of registers) {
      const natural = register.natural !== register.value ? ` (${register.natural})` : "";
      const isFault = fault !== null && toBigInt(register.value) === fault ? " <- the fault address" : "";
      lines.push(`  ${register.name} = ${register.value}${natural}${isFault}`);
    }
    if (level > 0) lines.push(`In frame ${level}, ${this.deps.vocabulary.debugger} recovers only the registers the callees saved; the others show frame 0's values or <not saved>.`);
    return { text: lines.join("\n"), evidenceIds: ids };
  }

  private async faultAddressAnswer(): Promise<Finding> {
    const { crash } = this;
    const signalId = this.firstEvidence(SIGNAL_INFO);
    const cited = signalId ? ` [${signalId}]` : "";
    if (crash.faultAddress === null) {
      const origin = crash.origin;
      const why =
        crash.kind === "deadlock" || crash.kind === "hang" || crash.signal === null || origin?.type === "requested"
          ? "the dump is of a process that was stopped from outside, not of a fault"
          : origin?.type === "sent"
            ? `${crash.signal} was sent ${senderText(origin)}, not raised by a memory access`
            : origin?.type === "raised"
              ? `the program raised ${crash.signal} itself, no memory access did (the crash is ${kindPhrase(crash.kind)})`
              : `${crash.signal} is not raised by a memory access (the crash is ${kindPhrase(crash.kind)})`;
      return { text: `There is no fault address: ${why}${cited}.`, evidenceIds: signalId ? [signalId] : [] };
    }
    const address = crash.faultAddress;
    const verb = crash.access === null ? "" : ` (${{ read: "reading", write: "writing", execute: "executing" }[crash.access]} it)`;
    const lines = [`The fault address is ${address}${verb}, from ${crash.signal ?? "the signal"}'s siginfo${cited}.`];
    const ids = signalId ? [signalId] : [];
    const value = BigInt(address);
    if (value < NULL_PAGE_LIMIT && crash.access === "execute") {
      lines.push(`It points into nothing: the first ${NULL_PAGE_LIMIT / 1024n} KiB of the address space are never mapped, and the program jumped there, as a call through a null function pointer does.`);
    } else if (value < NULL_PAGE_LIMIT) {
      lines.push(
        `It points into nothing: the first ${NULL_PAGE_LIMIT / 1024n} KiB of the address space are never mapped, and ${address} is ` +
          (value === 0n ? "address 0 itself: a null pointer was used." : `address 0 plus ${value} bytes: a field at offset ${address} read through a null pointer.`),
      );
      const pointer = await this.nullPointer();
      lines.push(pointer.text);
      ids.push(...pointer.evidenceIds);
    } else {
      const region = await this.region(address);
      lines.push(
        crash.kind === "stack-overflow"
          ? `No mapping contains it: it is just past the end of the crashing thread's stack, in the unmapped guard page the stack grew into [${region.evidenceIds.join(", ")}].`
          : region.text,
      );
      ids.push(...region.evidenceIds);
    }
    return { text: lines.join("\n"), evidenceIds: unique(ids) };
  }

  /** What an address is: a symbol, a section of the program or a library, memory saved in the core, or nothing. */
  private async region(address: string): Promise<Finding> {
    const symbol = await this.probes.run(probes.symbol(address));
    const filesResult = await this.probes.run(SECTIONS);
    const files = filesResult.reading ?? { executable: null, core: null, sections: [] };
    const filesId = filesResult.id;
    const mappings = await this.probes.run(MAPPINGS);
    const value = BigInt(address);
    const section = fileSectionAt(files, value);
    const segment = coreSegmentAt(files, value);
    const mapping = mappingAt(mappings.reading ?? [], value);
    const named = symbol.reading ? symbolText(symbol.reading) : null;
    const lines: string[] = [];
    const ids: string[] = [];
    if (named) {
      lines.push(`${address} is ${named} [${symbol.id}].`);
      ids.push(symbol.id);
    }
    if (section) {
      const file = section.source === "exec" ? (files.executable ?? "the executable") : section.source;
      const readOnly = /^\.(text|rodata|eh_frame|eh_frame_hdr|gcc_except_table|plt|init|fini)/.test(section.name);
      const write = readOnly && this.crash.access === "write" && this.crash.faultAddress === address ? "; the section is read-only, so writing there faults" : "";
      lines.push(`It is in section ${section.name} of ${file} (${section.start}-${section.end})${write} [${filesId}].`);
      ids.push(filesId);
    } else if (mapping) {
      lines.push(`It is in a mapping of ${mapping.objfile ?? "anonymous memory"} (${mapping.start}-${mapping.end}) [${mappings.id}].`);
      ids.push(mappings.id);
    } else if (segment) {
      lines.push(`It is in memory the core saved (${segment.name}, ${segment.start}-${segment.end}) that belongs to no file: the heap, a thread's stack, or other anonymous memory [${filesId}].`);
      ids.push(filesId);
    } else {
      lines.push(`No mapping of the process contains it: nothing was there when the dump was written, so a pointer to it is wild or dangling [${filesId}, ${mappings.id}].`);
      ids.push(filesId, mappings.id);
    }
    return { text: lines.join("\n"), evidenceIds: unique(ids) };
  }

  private async locksAnswer(only: string | null): Promise<Finding> {
    const runtime = only === null ? (this.javaLocksAnswer() ?? this.pythonLocksAnswer()) : null;
    if (runtime) return runtime;
    const all = await this.probes.run(ALL_STACKS);
    const waits = (all.reading ?? [])
      .map((trace) => lockWait(trace.thread, trace.frames.map((frame) => ({ ...frame, module: frame.from }))))
      .filter((wait): wait is LockWait => wait !== null);
    // Without glibc's debug info the lock frames show no mutex; the analysis read it from the futex argument.
    for (const edge of this.crash.deadlock?.cycle ?? []) {
      const wait = waits.find((w) => w.thread === edge.thread);
      if (wait && wait.lock === null && edge.lock !== null) wait.lock = edge.lock;
    }
    const locks = only !== null ? [only] : unique(waits.flatMap((wait) => (wait.lock === null ? [] : [wait.lock])));
    if (locks.length === 0) {
      const blind = waits.map((wait) => wait.thread);
      const text = blind.length > 0
        ? `Thread${blind.length === 1 ? "" : "s"} ${blind.join(", ")} wait${blind.length === 1 ? "s" : ""} for a mutex whose address the frames do not show (no debug info for the C library) [${all.id}].`
        : `No thread is blocked acquiring a mutex [${all.id}].`;
      return { text, evidenceIds: [all.id] };
    }

    const { list: threads, id: threadsId } = await this.threads();
    const lines: string[] = [];
    const ids = [all.id];
    const cycle = this.crash.deadlock?.cycle ?? [];
    if (cycle.length > 1 && only === null) {
      const members = cycle.map((edge) => `thread ${edge.thread} waits for ${lockText(edge)} held by thread ${edge.heldByThread ?? "?"}`);
      lines.push(`Deadlock: ${members.join("; ")}. None of them can go on.`);
    }
    for (const lock of locks.slice(0, MAX_LOCKS)) {
      const owner = await this.probes.run(probes.evaluate(mutexOwnerExpression(lock)));
      ids.push(owner.id);
      const lwpValue = owner.reading ?? null;
      const holder = lwpValue !== null && /^\d+$/.test(lwpValue) ? threads.find((t) => t.lwp === Number(lwpValue)) : undefined;
      const waiters = waits.filter((wait) => wait.lock === lock);
      const held = !owner.ok
        ? `cannot be read (${owner.error})`
        : lwpValue === "0"
          ? "is not held (its owner field is 0)"
          : holder
            ? `is held by thread ${holder.id} (LWP ${lwpValue})`
            : `has owner field ${lwpValue ?? "?"}, which is no thread's LWP: it may not be a locked mutex`;
      const waiting = waiters.length === 0
        ? "no thread waits for it"
        : waiters.map((w) => `thread ${w.thread} waits for it${w.waiter?.function ? ` in \`${normalizeFunctionName(w.waiter.function)}\`${w.waiter.file ? ` at ${w.waiter.file}:${w.waiter.line ?? "?"}` : ""}` : ""}`).join("; ");
      const named = cycle.find((edge) => edge.lock === lock && edge.lockName);
      lines.push(`Lock ${named ? lockText(named) : lock} ${held} [${owner.id}]; ${waiting} [${all.id}].`);
    }
    if (locks.length > MAX_LOCKS) lines.push(`... ${locks.length - MAX_LOCKS} more locks have waiters [${all.id}].`);
    ids.push(threadsId);
    lines.push(`(Owners are the LWPs in each mutex's owner field, matched to ${this.deps.vocabulary.debugger}'s thread numbers [${threadsId}].)`);
    return { text: lines.join("\n"), evidenceIds: unique(ids) };
  }

  /** Which pointer was null; for another kind of crash, what the fault address was instead. */
  private async nullPointerAnswer(): Promise<Finding> {
    const { crash } = this;
    if (crash.kind === "null-dereference") return this.nullPointer();
    const fault = await this.faultAddressAnswer();
    return { ...fault, text: `No null pointer was dereferenced: this is ${kindPhrase(crash.kind)}.\n${fault.text}` };
  }

  /**
   * Which pointer was null, as the null-dereference playbook judges it: its suspects (the pointers
   * the culprit's line reads through or passes on; without a line, the argument register of the
   * library function that faulted, or the faulting instruction's base register), each tested by
   * its own rule, in the playbook's order, until one is confirmed.
   */
  private async nullPointer(): Promise<Finding> {
    const { facts } = this;
    const pointers = suspects(facts);
    const suspectOf = (planned: PlannedHypothesis) => pointers.find((s) => planned.rule === `null:${s.pointer}`);
    const tried: { planned: PlannedHypothesis; verdict: Verdict }[] = [];
    for (const planned of nullDereferencePlaybook(facts).hypotheses.filter((h) => NULL_RULE.test(h.rule)).slice(0, MAX_POINTERS)) {
      const verdict = await this.probes.judged(planned);
      tried.push({ planned, verdict });
      if (verdict.status === "confirmed") break;
    }
    const hit = tried.find((t) => t.verdict.status === "confirmed");
    const others = tried.filter((t) => t !== hit);
    const ids = tried.flatMap((t) => t.verdict.evidenceIds);
    const suspect = hit ? suspectOf(hit.planned) : undefined;
    const line = await this.culpritLine();
    if (line.id) ids.unshift(line.id);
    if (hit && suspect) {
      const passed = suspect.passedTo ? `passed to \`${suspect.passedTo}\` by` : "dereferenced by";
      const before = others.map((t) => this.printedPointer(suspectOf(t.planned))).filter((text): text is string => text !== null);
      return {
        text: [
          `The null pointer is \`${suspect.pointer}\`, ${passed} ${line.text}.`,
          bracketed(hit.verdict.finding),
          before.length > 0 ? `Before it, ${before.join(", ")}.` : "",
        ].filter(Boolean).join(" "),
        evidenceIds: unique(ids),
      };
    }
    if (hit) return { text: `${capitalized(hit.planned.statement)}: ${bracketed(hit.verdict.finding)}`, evidenceIds: unique(ids) };
    const findings = others.map((t) => bracketed(t.verdict.finding));
    return { text: [`The dump does not show which pointer ${line.text} read through was null.`, ...findings].join(" "), evidenceIds: unique(ids) };
  }

  /** The culprit's source line for a sentence (`\`int fd = session->client->fd;\` (null-deref.c:27) [E9]`), and the listing that shows it. */
  private async culpritLine(): Promise<{ text: string; id: string | null }> {
    const { culprit } = this.crash;
    const code = quoteLine(this.facts.line);
    if (code === null) return { text: `the culprit${culprit.function ? ` \`${culprit.function}\`` : ""}`, id: null };
    const probe = this.facts.culpritListing;
    const listing = probe ? (await this.probes.runAtHome([probe]))[0] : undefined;
    const shown = listing?.ok && listing.reading?.some((line) => line.line === culprit.line) ? listing.id : null;
    const at = culprit.file !== null && culprit.line !== null ? ` (${culprit.file}:${culprit.line})` : "";
    return { text: `${code}${at}${shown ? ` [${shown}]` : ""}`, id: shown };
  }

  /** `\`session\` = 0x5566…` [E7]: a suspect of the playbook's that its rule found not null, as printed. */
  private printedPointer(suspect: Suspect | undefined): string | null {
    const found = suspect ? this.probes.evidence().find(this.facts.inCulprit(probes.evaluate(suspect.pointer))) : null;
    const value = printed(found);
    return suspect && found && value !== null ? `\`${suspect.pointer}\` = ${stripType(value)} [${found.id}]` : null;
  }

  /** The answer that follows (a question about a null pointer) says which pointer was null. */
  private async checkNullClaim(expression: string): Promise<Finding | null> {
    if (this.crash.thread.id === null) return null;
    // The probe the playbook's rule for this pointer asks, so the analysis's evidence serves it.
    const [measured] = await this.probes.runAtHome([this.facts.inCulprit(probes.evaluate(expression))]);
    if (!measured) return null;
    return nullClaimFinding(expression, { value: measured.ok ? (measured.reading ?? null) : null, evidenceId: measured.id });
  }

  private async valueAnswer(expression: string, threadRef: ThreadRef, frameRef: FrameRef): Promise<Finding> {
    const thread = await this.resolveThread(threadRef);
    const level = await this.resolveFrame(thread, frameRef);
    const printed = await this.printInFrame(expression, thread, level);
    if (printed.value === null) return failed(`${this.deps.vocabulary.debugger} could not evaluate \`${expression}\` in frame ${level} of thread ${thread}`, printed.result);
    return { text: `\`${expression}\` = ${clip(printed.value)} in frame ${level} of thread ${thread} [${printed.id}].`, evidenceIds: [printed.id] };
  }

  /** From triage's reading of Go's runtime: the goroutine the crash is read from, and those that waited. */
  private goroutineAnswer(): Finding {
    const go = this.facts.triage.go;
    const ids = [this.firstEvidence(BACKTRACE)].filter((id): id is string => id !== null);
    const cited = ids.length > 0 ? ` [${ids.join(", ")}]` : "";
    if (!go) return { text: `This is not a Go program: it has threads, not goroutines${cited}; ask for the threads or a thread's stack.`, evidenceIds: ids };
    const g = go.goroutine;
    if (!g) return { text: `Triage could not find the goroutine in Go ${go.version}'s runtime structures${cited}; \`dlv core\` lists the goroutines with \`goroutines\`.`, evidenceIds: ids };
    const at = g.function ? ` in \`${g.function}\`${g.file ? ` at ${g.file}:${g.line ?? "?"}` : ""}` : "";
    const who = g.id === null ? "The goroutine the crashing thread ran" : `Goroutine ${g.id}`;
    const stopped = this.crash.kind === "deadlock" || this.crash.kind === "hang";
    // A stopped program's message only counts the waits the lines below list one by one.
    const others = go.waiting.filter((w) => w.id !== g.id);
    const lines = stopped
      ? [`${who} is the one blamed: it waits on ${g.waitsOn ?? "something"}${at}${cited}.${others.length > 0 ? " The others of the program's own:" : " No other goroutine of the program's own was left."}`]
      : [`${who} ${this.crash.message?.startsWith("fatal error:") ? "threw" : "panicked"}${at}${this.crash.message ? `: ${this.crash.message}` : ""}${cited}.`];
    for (const other of others) lines.push(`  goroutine ${other.id ?? "?"} waits on ${other.waitsOn ?? "something"} in \`${other.function ?? "??"}\``);
    lines.push(g.id === null ? "Its id is not in the dump's reading: it was found by its frames from the thread that threw." : `Its frames were walked from the runtime's saved registers (g.sched) of Go ${go.version}.`);
    return { text: lines.join("\n"), evidenceIds: ids };
  }

  /** A map's contents, as far as the crash tells: a nil map held nothing. */
  private mapAnswer(): Finding {
    const ids = [this.firstEvidence(BACKTRACE)].filter((id): id is string => id !== null);
    const cited = ids.length > 0 ? ` [${ids.join(", ")}]` : "";
    const map = this.facts.line ? /([A-Za-z_][\w.]*)\s*\[/.exec(this.facts.line)?.[1] : undefined;
    const named = map ? `\`${map}\`` : "the map";
    if (this.crash.message === "assignment to entry in nil map") {
      return { text: `Nothing: ${named} was a nil map — it was never made with make — so it had no entries and the first write panicked ("${this.crash.message}")${cited}.`, evidenceIds: ids };
    }
    if (/concurrent map/.test(this.crash.message ?? "")) {
      return { text: `The dump cannot give ${named}'s contents reliably: two goroutines were writing it when the runtime threw "${this.crash.message}", so its buckets may be half-updated${cited}. \`dlv core\` can print it, read with that in mind.`, evidenceIds: ids };
    }
    return { text: `The runtime's verdict names no map${cited}; ask for the value of an expression in backticks to print one.`, evidenceIds: ids };
  }

  private async crashAnswer(): Promise<Finding> {
    const { crash } = this;
    const ids = [
      this.firstEvidence(SIGNAL_INFO, EXIT_SIGNAL),
      this.firstEvidence(THREADS),
      this.firstEvidence(BACKTRACE, ...(crash.kind === "deadlock" ? [ALL_STACKS] : [])),
    ].filter((id): id is string => id !== null);
    const cited = ids.length > 0 ? ` [${ids.join(", ")}]` : "";
    const lines: string[] = [];
    if (crash.kind === "deadlock") {
      const members = unique((crash.deadlock?.cycle ?? []).map((edge) => String(edge.thread)));
      // A Go program's cycle runs through its goroutines.
      const unit = this.facts.triage.go ? "goroutine" : "thread";
      lines.push(`The process hung: ${unit}s ${members.join(" and ")} are deadlocked, each waiting for a lock another one holds${cited}.`);
      for (const edge of crash.deadlock?.cycle ?? []) {
        const at = edge.file ? ` at ${edge.file}:${edge.line ?? "?"}` : "";
        lines.push(`  ${unit} ${edge.thread} in \`${edge.function ?? "??"}\`${at} waits for lock ${lockText(edge)}, held by ${unit} ${edge.heldByThread ?? "?"}`);
      }
    } else {
      const c = crash.culprit;
      const where = c.function ? ` in \`${c.function}\`${c.file ? ` at ${c.file}:${c.line ?? "?"}` : ""}${c.frame !== null ? ` (frame ${c.frame})` : ""}` : "";
      const signal = [crash.signal, crash.signalCode].filter(Boolean).join(", ");
      const fault = crash.faultAddress !== null ? `, ${crash.access === null ? "at" : { read: "reading", write: "writing", execute: "executing" }[crash.access]} address ${crash.faultAddress}` : "";
      const thread = crash.thread.id !== null ? ` on thread ${crash.thread.id}${lwp(crash.thread.lwp)}` : "";
      lines.push(`It is ${kindPhrase(crash.kind)}${where}${thread}${signal ? `: ${signal}${fault}` : ""}${cited}.`);
      if (crash.message) lines.push(`Message: ${crash.message}`);
      if (crash.origin && crash.origin.type !== "fault") lines.push(`Origin: ${crash.origin.type}: ${crash.origin.evidence}`);
    }
    const judged = await this.judgement();
    if (judged.origin === "now") lines.push("The session has no report of the analysis; the playbook for this kind of crash, run now offline, finds:");
    const { conclusion } = judged;
    if (conclusion.summary) lines.push(`Summary: ${conclusion.summary}`);
    if (conclusion.rootCause) lines.push(`Root cause (${Math.round(conclusion.confidence * 100)}% confidence): ${conclusion.rootCause}`);
    for (const hypothesis of judged.hypotheses.filter((h) => h.status === "confirmed")) {
      lines.push(`Confirmed: ${hypothesis.statement}${hypothesis.evidenceIds.length ? ` [${hypothesis.evidenceIds.join(", ")}]` : ""}`);
      ids.push(...hypothesis.evidenceIds);
    }
    if (judged.origin === "now") ids.push(...conclusion.evidenceIds);
    return { text: lines.join("\n"), evidenceIds: unique(ids) };
  }

  /**
   * What the analysis concluded, from its report; without one, the playbook's hypotheses judged now
   * as the analysis would (the first few, then one at a time until one is confirmed), the confirmed
   * one investigated, and the playbook's conclusion, its citations as the chat writes them.
   */
  private async judgement(): Promise<{ origin: "report" | "now"; conclusion: Draft; hypotheses: Pick<Hypothesis, "statement" | "status" | "evidenceIds">[] }> {
    const report = this.deps.briefing.document?.report;
    if (report) return { origin: "report", conclusion: { ...report.conclusion, evidenceIds: [] }, hypotheses: report.hypotheses };
    const playbook = playbookFor(this.facts);
    const hypotheses: Hypothesis[] = [];
    for (const planned of playbook.hypotheses.slice(0, DEFAULT_LIMITS.maxHypotheses)) {
      if (hypotheses.length >= INITIAL_HYPOTHESES && hypotheses.some((h) => h.status === "confirmed")) break;
      const verdict = await this.probes.judged(planned);
      hypotheses.push({ id: `H${hypotheses.length + 1}`, statement: planned.statement, origin: "playbook", rule: planned.rule, plan: planned.plan, rounds: planned.plan.length, status: verdict.status, finding: verdict.finding, evidenceIds: verdict.evidenceIds });
    }
    const hit = hypotheses.find((h) => h.status === "confirmed");
    if (hit?.rule) {
      // Each round sees what the previous printed, as the investigator's offline path does.
      for (let asked = 0; asked < COMMANDS_PER_STEP; ) {
        const next = playbook.investigate(hit.rule, this.probes.evidence()).slice(0, COMMANDS_PER_STEP - asked);
        if (next.length === 0) break;
        await this.probes.runAtHome(next);
        asked += next.length;
      }
    }
    const draft = playbook.conclude(hypotheses, this.probes.evidence());
    return {
      origin: "now",
      conclusion: { ...draft, summary: bracketed(draft.summary), rootCause: bracketed(draft.rootCause), recommendations: draft.recommendations.map(bracketed) },
      hypotheses,
    };
  }

  /** How to fix it: the recommendations of the analysis (or of the playbook run now), after the root cause they answer, with its evidence. */
  private async fixAnswer(): Promise<Finding> {
    const { origin, conclusion, hypotheses } = await this.judgement();
    if (conclusion.recommendations.length === 0) {
      return { text: "The analysis has made no recommendation for this dump; ask why it crashed, and the chat shows what the dump says.", evidenceIds: [] };
    }
    const ids = unique([...hypotheses.filter((h) => h.status === "confirmed").flatMap((h) => h.evidenceIds), ...conclusion.evidenceIds]);
    const who = origin === "report" ? "the analysis recommends" : "the playbook for this kind of crash recommends (the session has no report; run now, offline)";
    const lines = [
      `What ${who}${conclusion.confidence < 0.5 ? " (its confidence is low: check the root cause first)" : ""}:`,
      ...conclusion.recommendations.map((item, i) => `  ${i + 1}. ${item}`),
    ];
    if (conclusion.rootCause) lines.push(`Because: ${conclusion.rootCause}${origin === "report" && ids.length ? ` [${ids.join(", ")}]` : ""}`);
    return { text: lines.join("\n"), evidenceIds: ids };
  }

  private cannotAnswer(question: string): Finding {
    const hits = relevantEvidence(this.deps.store, question, 3);
    const lines = [
      `I cannot answer that without a model. Offline, the chat answers questions about ${OFFLINE_TOPICS}. ` +
        "For other questions, start the chat with a model (--provider openai, anthropic or ollama).",
    ];
    if (hits.length > 0) {
      lines.push("Evidence that mentions it:");
      for (const hit of hits) lines.push(`  [${hit.evidenceId}] ${hit.command}: ${hit.snippet}`);
    }
    return { text: lines.join("\n"), evidenceIds: hits.map((hit) => hit.evidenceId) };
  }

  private async printInFrame(expression: string, thread: number, level: number): Promise<{ value: string | null; id: string; result: Measured }> {
    const result = await this.probes.run(placed(probes.evaluate(expression), { thread, frame: level }));
    return { value: result.ok ? (result.reading ?? null) : null, id: result.id, result };
  }

  private async resolveThread(ref: ThreadRef): Promise<number> {
    if (typeof ref === "number") {
      const { list, id } = await this.threads();
      if (list.length > 0 && !list.some((t) => t.id === ref)) {
        throw new Unanswerable({ text: `There is no thread ${ref}: ${this.deps.vocabulary.debugger} lists threads ${list.map((t) => t.id).join(", ")} [${id}].`, evidenceIds: [id] });
      }
      return ref;
    }
    if (ref === "main") {
      const main = await this.mainThread();
      if (main === null) throw new Unanswerable({ text: "The dump does not say which thread is the main one (its notes record no process id).", evidenceIds: [] });
      return main;
    }
    if (this.crash.thread.id !== null) return this.crash.thread.id;
    const { list } = await this.threads();
    return list.find((t) => t.current)?.id ?? list[0]?.id ?? 1;
  }

  private async resolveFrame(thread: number, ref: FrameRef): Promise<number> {
    if (typeof ref === "number") return ref;
    if (ref === "culprit") {
      if (thread === this.crash.thread.id && this.crash.culprit.frame !== null) return this.crash.culprit.frame;
      return ownFrame((await this.stack(thread)).frames)?.level ?? 0;
    }
    const stack = await this.stack(thread);
    const name = normalizeFunctionName(ref.function);
    const frame = stack.frames.find((f) => f.function !== null && (f.function === ref.function || normalizeFunctionName(f.function) === name));
    if (!frame) throw new Unanswerable({ text: `\`${ref.function}\` is not among the innermost ${STACK_FRAMES} frames of thread ${thread} [${stack.id}].`, evidenceIds: [stack.id] });
    return frame.level;
  }

  private async threads(): Promise<{ list: ThreadSummary[]; id: string }> {
    const result = await this.probes.run(THREADS);
    return { list: result.reading ?? [], id: result.id };
  }

  /**
   * The thread whose LWP is the process id. The process id comes from the dump's own notes, not
   * from the debugger: the thread list is the only evidence of it.
   */
  private async mainThread(): Promise<number | null> {
    const pid = this.deps.briefing.processId;
    if (pid === null) return null;
    const { list } = await this.threads();
    return list.find((t) => t.lwp === pid)?.id ?? null;
  }

  private async stack(thread: number): Promise<Measured & { frames: Frame[]; truncated: boolean }> {
    const result = await this.probes.run(placed(probes.backtrace(STACK_FRAMES), { thread }));
    return { ...result, frames: result.reading?.frames ?? [], truncated: result.reading?.truncated ?? false };
  }

  /**
   * A frame of a thread's stack, and the evidence that shows it; `missing` when the stack listed
   * every frame and that level is not among them.
   */
  private async frameOf(thread: number, level: number): Promise<{ frame: Frame | null; id: string; missing: boolean }> {
    const stack = await this.stack(thread);
    const frame = stack.frames.find((f) => f.level === level) ?? null;
    return { frame, id: stack.id, missing: frame === null && stack.ok && stack.frames.length > 0 && !stack.truncated };
  }

  /** The first evidence of any of the probes in the store (see firstEvidence). */
  private firstEvidence(...wanted: Probe[]): string | null {
    return firstEvidence(this.deps.store, this.deps.vocabulary, ...wanted);
  }

  /** " (LWP 21901), the thread that received the SIGSEGV" and the like. */
  private async threadRole(thread: number): Promise<string> {
    const { list } = await this.threads();
    const main = await this.mainThread();
    const roles: string[] = [];
    if (thread === this.crash.thread.id && this.crash.kind !== "deadlock") roles.push(`the thread that received the ${this.crash.signal ?? "signal"}`);
    if (thread === main) roles.push("the main thread");
    if (this.crash.deadlock?.cycle.some((edge) => edge.thread === thread)) roles.push("deadlocked");
    return `${lwp(list.find((t) => t.id === thread)?.lwp ?? null)}${roles.length ? `, ${roles.join(", ")}` : ""}`;
  }

  private mark(thread: number): string {
    if (this.crash.kind === "deadlock") return this.crash.deadlock?.cycle.some((edge) => edge.thread === thread) ? "   <- deadlocked" : "";
    return thread === this.crash.thread.id ? `   <- received the ${this.crash.signal ?? "signal"}` : "";
  }
}

function failed(what: string, result: Measured): Finding {
  const why = result.error === null ? "" : ` (${result.refused ? "refused: " : ""}${result.error})`;
  return { text: `${what}${why} [${result.id}].`, evidenceIds: [result.id] };
}

/** The first frame of the program's own code, by the triage's rules (modules as the debugger named them). */
function ownFrame(frames: Frame[]): Frame | null {
  const index = culpritIndex(frames.map((frame) => ({ ...frame, module: frame.from })));
  return index === null ? null : (frames[index] ?? null);
}

function frameText(frame: Frame, withArgs = true): string {
  const name = frame.function ?? "??";
  const args = withArgs ? ` (${clip(frame.args, 160)})` : "";
  const where = frame.file !== null ? ` at ${frame.file}:${frame.line ?? "?"}` : frame.from !== null ? ` from ${frame.from}` : "";
  return `${withArgs ? `#${frame.level} ` : ""}${name}${args}${where}`;
}

/** What is at an address, as a sentence ends: `leaf + 12 in section .text of /lib/libc.so.6`. */
function symbolText(at: SymbolAt): string {
  return `${at.symbol}${at.offset ? ` + ${at.offset}` : ""}${at.section ? ` in section ${at.section}` : ""}${at.module ? ` of ${at.module}` : ""}`;
}

function lwp(value: number | null): string {
  return value === null ? "" : ` (LWP ${value})`;
}

/** A playbook's citations, ` (E4, E5)`, as the chat writes them: ` [E4, E5]`. */
function bracketed(text: string): string {
  return text.replace(/ \((E\d+(?:, E\d+)*)\)/g, " [$1]");
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function stripType(value: string): string {
  return value.replace(/^\([^)]*\)\s*/, "");
}

function clip(text: string, max = MAX_VALUE_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

/** `parseUser (/srv/server.js:1)`. */
function nodeFrameText(frame: { function: string | null; file: string | null; line: number | null }): string {
  return `${frame.function ?? "(anonymous)"}${frame.file ? ` (${frame.file}${frame.line !== null ? `:${frame.line}` : ""})` : ""}`;
}

/** `parse_record (app.py:6)`. */
function pythonFrameText(frame: { function: string | null; file: string | null; line: number | null }): string {
  return `${frame.function ?? "??"}${frame.file ? ` (${frame.file}${frame.line !== null ? `:${frame.line}` : ""})` : frame.line !== null ? ` (line ${frame.line})` : ""}`;
}
