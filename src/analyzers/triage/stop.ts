/**
 * What stopped the process, from the dump file and the debugger, and where it came from: the CPU
 * faulted, another process sent a signal, the program raised it itself, someone asked for the dump,
 * or a software exception went unhandled. The file's record is the truth; the debugger's reading is
 * checked against it, and a disagreement is a note.
 */
import type { Inspector } from "../../debuggers/inspector.js";
import type { ExceptionStop, SignalStop } from "../../debuggers/model.js";
import type { SignalRecord } from "../../debuggers/probe.js";
import type { Origin } from "../../report/schema.js";
import { FAULT_SIGNALS, SI_KERNEL, SI_QUEUE, SI_TKILL, SI_USER, SIGABRT, SIGSTOP, SIGTRAP, sentByProcess, signalCodeName, signalName } from "../signals.js";
import { architectureName } from "../../debuggers/architectures.js";
import { machExceptionOrigin } from "../mach.js";
import { exceptionOrigin } from "../windows.js";
import type { TriageOptions } from "./options.js";
import type { Target } from "./target.js";

export interface Stop {
  /** The signal that ended the process; null for a Windows exception or a dump of a live process. */
  signal: number | null;
  /** A Windows minidump's exception record (none in a hang dump). */
  exception: ExceptionStop | null;
  /** The signal record: the dump file's, else the debugger's. */
  siginfo: SignalRecord | null;
  /** A process sent the signal (kill, sigqueue, tgkill): nothing faulted, and the record's "address" holds the sender. */
  sent: boolean;
  /** No fault stopped it: a live process dumped (gcore, a hang dump), or one killed from outside with kill(). */
  externallyStopped: boolean;
  /**
   * The record cannot say where the signal came from (a crash handler's copy with si_code 0, or a
   * core that records the signal alone, with `siginfo` null): the dump's evidence decides (record.ts).
   */
  undecided: boolean;
  /** The si_code in `siginfo` was read from the evidence, not from the record, which had none. */
  codeInferred: boolean;
  origin: Origin;
  /** Who the process is: its pid when the dump records it, and its threads' LWPs (the main thread's is the pid). */
  self: Self;
}

export interface Self {
  pid: number | null;
  lwps: number[];
}

export async function readStop(q: Inspector, target: Target, options: TriageOptions): Promise<Stop> {
  const notes = q.problems;
  const recorded = options.stopReason?.type === "signal" ? options.stopReason : null;
  const exception = options.stopReason?.type === "exception" ? options.stopReason : null;
  // SIGSTOP cannot end a process: a dump whose threads show it was taken of a stopped or attached
  // process (gcore), as a debugger that reads the threads' current signal (lldb) reports.
  const exitSignal = await q.exitSignal();
  const reported = exitSignal === SIGSTOP ? null : exitSignal;
  const signal = recorded?.signo ?? reported;
  if (recorded && reported !== null && reported !== recorded.signo) {
    notes.push(`the debugger reports ${signalName(reported)} but the dump's notes record ${signalName(recorded.signo)}; the notes are used`);
  }
  const lwp = target.selected?.lwp ?? null;
  if (recorded?.thread != null && lwp !== null && lwp !== recorded.thread) {
    notes.push(`the debugger selected LWP ${lwp}, but the dump's notes say LWP ${recorded.thread} received the signal`);
  }
  const read = signal !== null && exception === null ? await q.signalInfo() : null;
  // A core that records the signal alone (no NT_SIGINFO) gives no record to believe: the debugger's, if it read one.
  const statusOnly = recorded?.recordedBy === "thread-status";
  const siginfo = recorded && !statusOnly ? signalRecordOf(recorded) : read;
  if (recorded && !statusOnly && read && (read.code !== recorded.code || (recorded.address !== null && read.address !== recorded.address))) {
    notes.push(`the debugger's signal record (code ${read.code}, address ${read.address ?? "none"}) differs from the dump's notes (code ${recorded.code}, address ${recorded.address ?? "none"}); the notes are used`);
  }
  const self = { pid: options.pid ?? null, lwps: target.threads.flatMap((thread) => (thread.lwp === null ? [] : [thread.lwp])) };
  // A debugger that reads no registers (one built for another processor) shows no signal either: that is no evidence of none.
  const unreadable = target.registers.length === 0;
  if (unreadable) notes.push(unreadableNote(options));
  if (unreadable && signal === null && exception === null) {
    return { signal, exception, siginfo: null, sent: false, undecided: false, codeInferred: false, externallyStopped: false, origin: { type: "unreadable", sender: null, evidence: "the debugger read no registers of the stopped thread and the dump's file records no signal: whether a fault, a signal or a request stopped the process is not known" }, self };
  }
  // Crash handlers that copy the signal into a minidump often leave si_code 0: "kill" is then no evidence.
  const undecided = (recorded?.recordedBy === "crash-handler" && recorded.code === SI_USER) || (statusOnly && siginfo === null);
  return {
    signal,
    exception,
    siginfo,
    sent: signal !== null && exception === null && sentByProcess(siginfo) && !undecided,
    undecided,
    codeInferred: false,
    externallyStopped: (signal === null && exception === null) || (siginfo !== null && siginfo.code === SI_USER),
    origin: exception && target.os === "macos" ? { ...machExceptionOrigin(exception), sender: null } : originOf({ signal, exception, siginfo, stopped: exitSignal === SIGSTOP }, self),
    self,
  };
}

/** What a debugger that read no registers cannot show, and why that may be. */
function unreadableNote(options: TriageOptions): string {
  const arch = options.platform?.arch;
  const of = arch && arch !== "other" ? ` (the dump is of ${architectureName(arch)})` : "";
  return `the debugger${options.debugger ? ` (${options.debugger})` : ""} read no registers of the stopped thread${of}: the instruction, the stack and the culprit are not known; a debugger built for the dump's processor (gdb-multiarch, LLDB) reads them`;
}

/** Where a stop came from, from its record; `stopped`: the threads show SIGSTOP (an attached or stopped process). Pure. */
export function originOf(stop: { signal: number | null; exception: ExceptionStop | null; siginfo: SignalRecord | null; stopped: boolean }, self: Self): Origin {
  const { signal, exception, siginfo } = stop;
  if (exception) return { ...exceptionOrigin(exception.code), sender: null };
  if (signal === null) {
    return {
      type: "requested",
      sender: null,
      evidence: stop.stopped
        ? "no fatal signal: the threads were stopped (SIGSTOP), as gcore or a debugger attaching to take a dump leaves them"
        : "no signal and no exception in the dump: it was taken of a running process (gcore, a watchdog, a hang dump)",
    };
  }
  const name = signalName(signal);
  if (siginfo === null) {
    if (FAULT_SIGNALS.has(signal)) return { type: "fault", sender: null, evidence: `${name} with no signal record to say who sent it: taken as the fault the CPU raises it for` };
    if (signal === SIGABRT) return { type: "raised", sender: null, evidence: `${name} with no signal record: taken as abort()` };
    return { type: "sent", sender: null, evidence: `${name} with no signal record: the CPU never raises it, so a process sent it` };
  }
  const code = signalCodeName(signal, siginfo.code);
  if (sentByProcess(siginfo)) {
    const sender = siginfo.pid === null ? null : { pid: siginfo.pid, uid: siginfo.uid ?? null };
    const from = siginfo.pid === null ? "with no sender recorded" : `from pid ${siginfo.pid}${siginfo.uid != null ? ` (uid ${siginfo.uid})` : ""}`;
    const how = siginfo.code === SI_TKILL ? "tgkill, as raise() and abort() do" : siginfo.code === SI_QUEUE ? "sigqueue" : "kill";
    if (raisedBySelf(siginfo, self)) {
      const own = siginfo.pid === null ? "" : self.pid !== null ? ", the process's own" : ", one of the dump's own threads";
      return { type: "raised", sender, evidence: `the signal record says ${code} (${how}) ${from}${own}` };
    }
    const other = siginfo.pid === null ? "" : self.pid !== null ? `, not the process's own (${self.pid})` : self.lwps.length > 0 ? ", none of the dump's threads" : "";
    return { type: "sent", sender, evidence: `the signal record says ${code} (${how}) ${from}${other}` };
  }
  const what =
    siginfo.code !== SI_KERNEL
      ? "the kernel's code for a fault of the instruction at the pc"
      : signal === SIGTRAP
        ? "the kernel's code for a breakpoint instruction (int3) the CPU trapped on"
        : "the kernel's code for a general-protection fault (a non-canonical address)";
  return { type: "fault", sender: null, evidence: `the signal record says ${name} ${code}, ${what}` };
}

/**
 * A crash handler caught a fault, then re-raised its signal or aborted: the record is the handler's,
 * the fault it was handling came first, in the frame under `<signal handler called>`.
 */
export function caughtOrigin(origin: Origin, caught: { handler: string | null; handlerModule: string | null; then: "re-raised" | "aborted"; record: SignalRecord | null; deliveredOnReturn?: boolean }): Origin {
  if (caught.deliveredOnReturn) {
    return {
      type: "fault",
      sender: null,
      evidence: `${origin.evidence}; but no code that sends a signal is on the stack: a signal handler re-raised it while it ran (Node.js's does), with the signal blocked, and the kernel delivered it when the handler returned, at the instruction that faulted: that fault is the crash`,
    };
  }
  const handler = caught.handler ? ` (${caught.handler}${caught.handlerModule ? ` in ${caught.handlerModule.split("/").at(-1)}` : ""})` : "";
  const record = caught.record
    ? `; the record the kernel handed the handler, on the signal frame, says ${signalName(caught.record.signo)} ${signalCodeName(caught.record.signo, caught.record.code)}${caught.record.code === SI_KERNEL ? "" : ` at ${caught.record.address}`}`
    : "";
  const next = caught.then === "re-raised" ? "which re-raises what it caught" : "which then aborted";
  return {
    type: "fault",
    sender: null,
    evidence: `${origin.evidence}; but it was raised from inside a signal handler${handler}, ${next}: the fault it caught is the crash, in the frame it interrupted${record}`,
  };
}

/** A dump with no exception and no signal, written from an abort handler while `thread` aborted. */
export function abortHandlerOrigin(thread: number): Origin {
  return {
    type: "raised",
    sender: null,
    evidence: `the dump has no exception record and no signal, but thread ${thread}'s stack goes through the abort machinery: it was written from an abort handler while the program aborted`,
  };
}

/**
 * Whether a sent signal came from the dumped process itself: its own pid, or where the dump does not
 * record the pid, one of its threads (the main thread's LWP is the pid); tgkill with no sender recorded.
 */
export function raisedBySelf(siginfo: SignalRecord, self: Self): boolean {
  const own = self.pid !== null ? [self.pid] : self.lwps;
  return siginfo.pid !== null && own.length > 0 ? own.includes(siginfo.pid) : siginfo.code === SI_TKILL && siginfo.pid === null;
}

/** The file's record of a signal in the shape the debugger's is read into. */
function signalRecordOf(stop: SignalStop): SignalRecord {
  return { signo: stop.signo, errno: stop.errno, code: stop.code, address: stop.address, pid: stop.senderPid, uid: stop.senderUid };
}
