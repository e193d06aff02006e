/**
 * Crash triage: reads a dump the way an engineer does, through a command runner (a session, or the
 * analysis's evidence-storing executor) with a fixed, cheap set of read-only questions, and returns
 * the `crash` object of the JSON report plus what a report shows next to it. No model, no store.
 *
 * Each step is a module with one job, taking what the steps before it read:
 *   target   the threads, libraries, sections and registers the debugger shows
 *   stop     what stopped the process, and where that came from (record.ts: decided on the
 *            evidence when a crash handler's copy of the record cannot say)
 *   stack    the crashing thread's unwind, a recursion measured, a stack scanned or repaired
 *   fault    the faulting instruction, its access and address, a re-raised signal's first fault
 *   messages what the program or its runtime said (read before the kind, composed after it)
 *   hang     lock cycles and what blocked threads wait for
 *   go       a Go program's runtime: the goroutine that panicked, threw or waits, its value and frames
 *   classify the kind, the crash's thread and its culprit, pure
 *   jvm      a JVM's Java frames (the JDK's jhsdb) in place of the code the VM generated, the culprit read again
 *   python   a CPython process's Python frames (from the core's memory, or CPython's gdb extension) in place of its evaluation loops
 */
import { Inspector, type Answer, type Ask } from "../../debuggers/inspector.js";
import { probeKey, type Probe } from "../../debuggers/probe.js";
import type { DebuggerSession, RunOptions } from "../../debuggers/session.js";
import { listed } from "../../report/numbers.js";
import { hangMessage } from "../hang.js";
import { readManaged, withManaged } from "../managed.js";
import { CLR_EXCEPTION } from "../windows.js";
import { classify, type Readings, type Verdict } from "./classify.js";
import { crashOf, resultOf } from "./crash.js";
import { caughtNote, readFault } from "./fault.js";
import { goNotes, readGo } from "./go.js";
import { readHang } from "./hang.js";
import { jvmFacts, readJava, runtimeOf, startJava, withJava, withJavaWaits } from "./jvm.js";
import { pythonFacts, pythonHangMessage, pythonThreadsCommand, pythonThreadsText, withPythonWaits } from "./python-waits.js";
import { pythonRuntime, pythonSource, raisedMessage, reachesEvaluationLoop, readPython, withPython, type PythonSide } from "./python.js";
import { nodeFacts, nodeRuntime, readNodeSide, nodeMessage, withNode } from "./node.js";
import type { JvmStart } from "../../runtimes/jvm/index.js";
import type { PythonReading } from "../../runtimes/cpython/index.js";
import { startNode, type NodeStart } from "../../runtimes/node/index.js";
import { messageOf, readMessages, readThrownType } from "./messages.js";
import type { TriageOptions } from "./options.js";
import type { PythonFacts, TriageResult } from "./result.js";
import { decideStop } from "./record.js";
import { readStack } from "./stack.js";
import { readStop } from "./stop.js";
import { debugPackages } from "./symbols.js";
import { zeroDivisionNote } from "./division.js";
import { readTarget } from "./target.js";

export { ALL_STACKS } from "./hang.js";
export { triageOptionsOf, type TriageOptions } from "./options.js";
export type { GoReading, GoroutineSummary, JvmFacts, NodeFacts, PythonFacts, ThreadGroup, TriageResult } from "./result.js";

/** Frames of the crashing thread's first backtrace. */
const FRAME_LIMIT = 40;

/**
 * What triage asks of every dump first, in the order it asks (`asked`): the target (readTarget), the
 * stop (readStop) and the crashing thread's backtrace (readStack); and what it may ask among them
 * (`among`): the signal's record, read only where there is a signal. None of these changes what
 * another answers (gdb numbers only printed values, and the backtrace prints none). A test holds
 * triage to this.
 */
export function openingProbes(options: TriageOptions = {}): { asked: Probe[]; among: Probe[] } {
  return {
    asked: [
      { kind: "threads" },
      { kind: "shared-libraries" },
      { kind: "sections" },
      { kind: "registers" },
      { kind: "exit-signal" },
      { kind: "backtrace", limit: options.frameLimit ?? FRAME_LIMIT },
    ],
    among: [{ kind: "signal-info" }],
  };
}

/**
 * Has the session's debugger start on what triage asks first (`DebuggerSession.readAhead`), so
 * that it works through it (the first backtrace can take it tens of milliseconds, expanding the
 * debug information of each frame's code) while the caller sets up; triage then takes the answers
 * in its turn. For a session that has not run anything since it opened the dump; resolves once the
 * debugger has them (a caller that sets up synchronously next awaits it, else they wait for it).
 */
export function readAheadTriage(session: DebuggerSession, options: TriageOptions = {}, run: RunOptions = {}): Promise<void> {
  const { asked, among } = openingProbes(options);
  const render = (probe: Probe) => session.vocabulary.render(probe);
  return session.readAhead(asked.map(render), { ...run, among: among.map(render) });
}

export async function triage(ask: Ask, options: TriageOptions = {}): Promise<TriageResult> {
  const limit = options.frameLimit ?? FRAME_LIMIT;
  const commands: string[] = [];
  // The dump does not change and triage's probes name their place without moving the selection:
  // a question the readers ask twice (the same symbol, code bytes, a thread's stack) runs once.
  const answers = new Map<string, Answer<Probe>>();
  const q = new Inspector((async (probe: Probe) => {
    const key = probeKey(probe);
    const known = answers.get(key);
    if (known) return known;
    const answer = await ask(probe);
    answers.set(key, answer);
    commands.push(answer.command);
    return answer;
  }) as Ask);
  q.problems.push(...(options.missing ?? []));
  // A JVM's Java side is read by the JDK's jhsdb, a Node.js process's by llnode: each starts now and works beside the debugger.
  const jvm = startJava(options.jvm, options.record);
  const nodeStart = options.node ? startNode(options.node) : null;
  try {
    return await triageWith(q, options, limit, commands, jvm, nodeStart);
  } finally {
    jvm?.close();
    nodeStart?.close();
  }
}

async function triageWith(q: Inspector, options: TriageOptions, limit: number, commands: string[], jvm: JvmStart | null, nodeStart: NodeStart | null): Promise<TriageResult> {
  const target = await readTarget(q, options);
  const recorded = await readStop(q, target, options);
  const stack = await readStack(q, target, recorded, limit);
  const stop = await decideStop(q, target, recorded, stack);
  const fault = await readFault(q, target, stop, stack);
  const said = await readMessages(q, target, stop, stack, options);
  // A .NET dump (null for any other): SOS's managed side, whose monitor cycles are a hang's too.
  const dotnet = stop.exception?.code === CLR_EXCEPTION || stop.externallyStopped ? await readManaged(q, stop.exception === null ? "hang" : "exception") : null;
  const hang = await readHang(q, target, stop, dotnet);
  const go = await readGo(q, target, stop, stack, options.signalledThreadRegisters ?? null, options.goLines ?? null);
  q.problems.push(...goNotes(go, options.debugger));
  const readings = { target, stop, stack, fault, said, hang, go, limit };

  const native = withoutGuessedCulprit(classify(readings), readings);
  if (native.caught) q.problems.push(caughtNote(native.caught));
  // arm64's division by zero raises nothing: where the faulting function divided by zero on its way to the fault, a note says so.
  const division = await zeroDivisionNote(q, target, native);
  if (division) q.problems.push(division);
  // A JVM's side, read once the native verdict is known (an out-of-memory death has its heap read):
  // its Java frames take the place of the code the VM generated, and a hung JVM's waits are read in Java.
  const java = await readJava(jvm, native);
  q.problems.push(...(java?.notes ?? []));
  commands.push(...(java?.commands ?? []));
  const onJava = withJavaWaits(withJava(native, java), java, readings.target.threads);
  // A CPython process's Python frames: read from the interpreter's structures in the core's memory,
  // or where that reads none for the crashing thread, by CPython's gdb extension in this session.
  const python = await readPython(q, options, onJava.thread?.lwp ?? null);
  q.problems.push(...(python?.notes ?? []));
  const onPython = withPython(onJava, python);
  // A Node.js process's JavaScript frames, read by llnode in an lldb of its own, in place of V8's generated code.
  const node = await readNodeSide(nodeStart, onPython, readings.target.threads, hang.framesOf);
  q.problems.push(...(node?.notes ?? []));
  for (const read of node?.command ? [{ command: node.command, output: node.output ?? "" }, ...node.threads] : []) {
    commands.push(read.command);
    options.record?.(read.command, read.output, 0);
  }
  const onNode = withNode(onPython, node, options.modules ?? []);
  const verdict = withPythonWaits(onNode, python, readings.target.threads, hang.framesOf);
  // A runtime is named where its reading decided something: frames read into the stack, or its threads' waits.
  // The Python frames were read into the stack only where the debugger's unwind reached the loops that ran them.
  if (python?.reading && onPython !== onJava && !reachesEvaluationLoop(onJava.frames)) q.problems.push("the crashing thread's stack as the debugger unwound it does not reach the interpreter's evaluation loop (_PyEval_EvalFrameDefault) that ran the Python frames: they follow the native frames it found, where the Python code called into them at a point the dump does not show");
  // A runtime's reading of the waits decided the verdict: its kind, or what the threads wait for.
  // An uncaught JavaScript exception is a crash's kind, not a wait.
  const runtimeWaits = onJava.kind !== native.kind || onJava.blocked !== native.blocked || verdict.kind !== onNode.kind || verdict.blocked !== onNode.blocked;
  // The debugger's questions are asked over the native frames, where its frame numbers hold.
  const thrown = await readThrownType(q, readings, native);
  // Where the dump says nothing of its own, a Python exception the crashing thread was raising is the message.
  const message = runtimeWaits ? (verdict.blocked ? (verdict === onNode ? hangMessage : pythonHangMessage)(verdict.blocked) : null) : ((await messageOf(q, readings, native, dotnet, thrown)) ?? raisedMessage(python, verdict.thread?.lwp ?? null) ?? nodeMessage(verdict, node, options.node?.commandLine ?? null));
  if (verdict.kind === "unknown" && stop.signal === null && stop.exception === null) {
    q.problems.push(
      hang.unreadOwners.length > 0
        ? `the dump has no signal, and ${hang.unreadOwners.length === 1 ? "thread" : "threads"} ${listed(hang.unreadOwners)} wait${hang.unreadOwners.length === 1 ? "s" : ""} for locks whose holders it does not show (neither read from the locks nor inferred from the waiting code): whether the process deadlocked cannot be told; the program's sources on this machine, or a dump that holds the locks' memory, would show it`
        : hang.unreadStacks.length > 0
          ? `the dump has no signal, and ${hang.unreadStacks.length === 1 ? "thread" : "threads"} ${listed(hang.unreadStacks)} stopped where the debugger cannot unwind (a system module whose unwind information is not here) with no frame of the program's own found on ${hang.unreadStacks.length === 1 ? "its stack" : "their stacks"} and no held lock there: what ${hang.unreadStacks.length === 1 ? "it waits" : "they wait"} for, and so whether the process deadlocked, cannot be told; the program's executable, --modules-path with the dump's system modules, or a dump that holds the locks' memory would show it`
          : "the dump has no signal and no lock cycle was found: a live process dumped while it was running or waiting",
    );
  }
  // Which packages' debug symbols would name the code that crashed: none where the Java side decided a wait.
  const culprit = native.culprit === null ? null : (native.frames[native.culprit] ?? null);
  const packages = runtimeWaits ? [] : await debugPackages(q, culprit, native.frames, target.files.executable, options);
  const crash = crashOf(readings, verdict, message, options.annotations ?? null, (onJava === native ? null : runtimeOf(java)) ?? (onNode === onPython ? null : nodeRuntime(node)) ?? (verdict === onNode && onPython === onJava ? null : pythonRuntime(python)), options.cut ?? null);
  const result = await resultOf(q, readings, verdict, crash, { commands, packages, thrown });
  const withRuntime = java?.reading ? { ...result, jvm: jvmFacts(java.reading, target.threads) } : python?.reading ? { ...result, python: keptPython(python, python.reading, verdict !== onNode, options, readings, commands) } : node?.command ? { ...result, node: nodeFacts(node, target.threads, verdict.thread, options.node?.commandLine ?? null, verdict.kind === "out-of-memory") } : result;
  return withManaged(withRuntime, dotnet);
}

/** The Python side's facts, its reading of the threads kept as evidence (cited by the chat and the playbooks) where triage records what it read. */
function keptPython(python: PythonSide, reading: PythonReading, waitsDecided: boolean, options: TriageOptions, { target, hang }: Readings, commands: string[]): PythonFacts {
  const command = options.record && options.python ? pythonThreadsCommand(options.python) : null;
  const facts = pythonFacts(reading, target.threads, pythonSource(python), hang.framesOf, { threadsCommand: command, waitsDecided });
  if (command) {
    options.record!(command, pythonThreadsText(facts), 0);
    commands.push(command);
  }
  return facts;
}

/**
 * A dump taken with no signal whose lock waits could not all be read: whether the process
 * deadlocked, and so which thread is to blame, is not shown. The first thread's frames are then
 * no culprit: the kind stays, the culprit is unknown.
 */
function withoutGuessedCulprit(verdict: Verdict, { stop, hang }: Readings): Verdict {
  const undecided = stop.signal === null && stop.exception === null && verdict.abortedIn === null && hang.cycles.length === 0;
  return undecided && (hang.unreadOwners.length > 0 || hang.unreadStacks.length > 0) ? { ...verdict, culprit: null } : verdict;
}
