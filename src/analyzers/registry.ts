/**
 * The analyzer registry: for each kind of probe, what its reading means in one line and the key
 * findings. The backend reads a command's output into the model; everything here speaks the model.
 * To add one, add an entry to SUMMARIES.
 */
import type { Disassembly, Frame, Variable } from "../debuggers/model.js";
import type { Probe, ProbeKind, Readings, Vocabulary } from "../debuggers/probe.js";
import { counted } from "../report/numbers.js";
import { exceptionText, methodName, waitsForMonitor } from "./managed.js";
import { keyRegisters } from "./registers.js";
import { signalCodeName, signalName } from "./signals.js";
import { memoryAccess } from "./x86-64.js";

export interface Analysis {
  analyzer: string;
  data: unknown;
  summary: string;
  findings: string[];
}

type Summary = Omit<Analysis, "analyzer" | "data">;
type Summaries = { [K in ProbeKind]?: (reading: Readings[K], output: string) => Summary };

/** A one-line summary and key findings per kind of probe, over what the backend read from the output. */
const SUMMARIES: Summaries = {
  "thread-backtraces": (threads) => {
    const groups = new Map<string, number[]>();
    for (const thread of threads) {
      const top = describeFunction(thread.frames[0]);
      groups.set(top, [...(groups.get(top) ?? []), thread.thread]);
    }
    const findings = [...groups.entries()]
      .sort((a, b) => b[1].length - a[1].length)
      .map(([fn, ids]) => `${ids.length} thread${ids.length === 1 ? "" : "s"} in ${fn} (${abbreviate(ids)})`);
    return { summary: `${threads.length} thread backtraces`, findings };
  },
  backtrace: (trace) => {
    const first = trace.frames[0];
    const findings = trace.frames.slice(0, 8).map((frame) => `#${frame.level} ${describeFrame(frame)}`);
    if (trace.truncated) findings.push("more frames follow (the listing was limited)");
    return { summary: first ? `${counted(trace.frames.length, "frame")}; innermost: ${describeFrame(first)}` : "no stack", findings };
  },
  registers: (registers) => {
    const { pc, sp } = keyRegisters(registers);
    const pcText = registers.find((r) => r.value === pc && /pc|ip/.test(r.name))?.natural ?? pc;
    const findings: string[] = [];
    if (pc !== null && BigInt(pc) < 0x10000n) findings.push(`the pc (${pc}) is in the null page: a call through a null pointer`);
    return { summary: `${registers.length} registers; pc ${pcText ?? "?"}, sp ${sp ?? "?"}`, findings };
  },
  "signal-info": (info) => {
    if (!info) return { summary: "no signal information", findings: [] };
    const name = signalName(info.signo);
    const code = signalCodeName(info.signo, info.code);
    const at = info.address !== null && [4, 7, 8, 11].includes(info.signo) ? ` at ${info.address}` : "";
    return { summary: `${name} (${code})${at}`, findings: [`signal ${name}, code ${code}${at}`] };
  },
  "exit-signal": (signo) => ({
    summary: signo === null ? "no terminating signal (a dump of a live process)" : `terminated by ${signalName(signo)}`,
    findings: [],
  }),
  threads: (threads) => {
    const current = threads.find((thread) => thread.current);
    const findings = current ? [`selected thread ${current.id} (LWP ${current.lwp ?? "?"}) in ${describeFunction(current.frame)}`] : [];
    return { summary: counted(threads.length, "thread"), findings };
  },
  mappings: (mappings) => {
    const files = new Set(mappings.map((m) => m.objfile).filter((f): f is string => f !== null));
    return { summary: `${mappings.length} mappings of ${files.size} files`, findings: [] };
  },
  sections: (files) => {
    const segments = files.sections.filter((s) => s.source === "core").length;
    return { summary: `executable ${files.executable ?? "unknown"}; ${segments} core segments`, findings: [] };
  },
  "shared-libraries": (libraries) => {
    const missing = libraries.filter((lib) => !lib.symbolsRead).map((lib) => lib.path);
    return { summary: `${libraries.length} shared libraries`, findings: missing.length > 0 ? [`no symbols for ${missing.join(", ")}`] : [] };
  },
  disassemble: (code) => summariseCode(code),
  instructions: (code) => summariseCode(code),
  locals: (variables, output) => summariseVariables(variables, output),
  arguments: (variables, output) => summariseVariables(variables, output),
  "abort-message": (message) => ({
    summary: message === null ? "no abort message (abort() was called directly)" : `abort message: ${message}`,
    findings: message === null ? [] : [message],
  }),
  "managed-threads": (threads) => {
    if (threads === null) return { summary: "no .NET runtime read: the process ran none, or its debugger extension (SOS) is not loaded", findings: [] };
    const findings = [
      ...threads.filter((t) => t.exception).map((t) => `thread ${t.thread ?? "(gone)"} holds a ${t.exception}`),
      ...threads.filter((t) => t.lockCount > 0).map((t) => `thread ${t.thread ?? "(gone)"} holds ${counted(t.lockCount, "monitor")}`),
    ];
    return { summary: counted(threads.length, "managed thread"), findings };
  },
  "managed-exception": (exception) => ({
    summary: exception === null ? "no managed exception on this thread" : `managed exception: ${exceptionText(exception)}`,
    findings: exception === null ? [] : [exceptionText(exception) ?? exception.type],
  }),
  "managed-stack": (stack) => ({
    summary: stack === null ? "no managed frames" : counted(stack.frames.length, "managed frame"),
    findings: (stack?.frames ?? []).slice(0, 8).map((frame, level) => `#${level} ${methodName(frame.function ?? "??")}${frame.file ? ` at ${frame.file}:${frame.line}` : ""}`),
  }),
  "managed-stacks": (stacks) => ({
    summary: counted(stacks.length, "managed stack"),
    findings: stacks.filter(waitsForMonitor).map((s) => `thread ${s.thread ?? "?"} waits to enter a monitor`),
  }),
  "managed-locks": (locks) => ({
    summary: `${counted(locks.length, "monitor")} held`,
    findings: locks.map((lock) => `${lock.object} (${lock.type}) held by thread ${lock.ownerThread ?? "(gone)"}${lock.waiters > 0 ? `, ${counted(lock.waiters, "thread")} waiting` : ""}`),
  }),
  "managed-heap": (types) => {
    const objects = types.reduce((sum, t) => sum + t.count, 0);
    const bytes = types.reduce((sum, t) => sum + t.bytes, 0);
    const largest = [...types].sort((a, b) => b.bytes - a.bytes).slice(0, 5);
    return { summary: `${counted(objects, "object")}, ${counted(bytes, "byte")} on the managed heap`, findings: largest.map((t) => `${t.type}: ${counted(t.count, "object")}, ${counted(t.bytes, "byte")}`) };
  },
};

function summariseCode(code: Disassembly): Summary {
  const current = code.instructions.find((insn) => insn.current) ?? code.instructions[0];
  if (code.unreadable && !current) return { summary: "the code is not readable: the pc is not in mapped memory", findings: ["the pc points to unmapped memory"] };
  const access = current ? memoryAccess(current) : null;
  const text = current ? `${current.mnemonic} ${current.operands.join(",")}` : "no instructions";
  return {
    summary: `${code.instructions.length} instructions${current ? `; at pc: ${text}` : ""}`,
    findings: access && current ? [`the instruction at the pc ${access === "write" ? "writes" : "reads"} memory: ${text}`] : [],
  };
}

function summariseVariables(variables: Variable[], output: string): Summary {
  // A null pointer prints as `0x0`, or `(struct client *) 0x0` when the debugger shows its type.
  const nulls = variables.filter((v) => /(^|\) )0x0$/.test(v.value)).map((v) => v.name);
  const findings = nulls.length > 0 ? [`null pointers: ${nulls.join(", ")}`] : [];
  // Nothing read: the debugger's own words say why (no locals, no debug info for the frame).
  const said = output.split("\n").find((line) => line.trim() !== "")?.trim().replace(/\.$/, "");
  return { summary: variables.length === 0 && said ? said : `${variables.length} variables`, findings };
}

/**
 * Structured reading of a probe's output: the backend reads it into the model, and the summary
 * says what matters in a line. Null for a command no probe describes.
 */
export function analyzeOutput(probe: Probe, vocabulary: Vocabulary, output: string): Analysis | null {
  const summarise = SUMMARIES[probe.kind] as ((reading: unknown, output: string) => Summary) | undefined;
  if (!summarise) return null;
  const data = vocabulary.read(probe, output);
  return { analyzer: probe.kind, data, ...summarise(data, output) };
}

function describeFunction(frame: Omit<Frame, "level"> | null | undefined): string {
  return frame?.function ?? "??";
}

function describeFrame(frame: Frame): string {
  const where = frame.file !== null ? ` at ${frame.file}:${frame.line ?? "?"}` : frame.from !== null ? ` from ${frame.from}` : "";
  return `${frame.function ?? "??"}${where}`;
}

function abbreviate(ids: number[]): string {
  return ids.length <= 6 ? ids.join(", ") : `${ids.slice(0, 5).join(", ")}, … ${ids.at(-1)}`;
}
