/** The human verdict of `dumpdbg triage`: a few lines saying what, where and why. */
import { annotationsText } from "../report/annotations.js";
import type { CrashKind, OriginType } from "../report/schema.js";
import { normalizeFunctionName, type PlacedFrame } from "./culprit.js";
import { lockText } from "./deadlock.js";
import type { TriageResult } from "./triage/index.js";

const KIND_TEXT: Record<CrashKind, string> = {
  "null-dereference": "null pointer dereference",
  "bad-jump": "jump or call to an invalid address",
  "invalid-memory-access": "invalid memory access",
  "stack-overflow": "stack overflow",
  "stack-buffer-overflow": "stack buffer overflow",
  "double-free": "double free",
  "heap-corruption": "heap corruption",
  "assertion-failure": "assertion failure",
  abort: "abort",
  "uncaught-exception": "uncaught exception",
  "out-of-memory": "out of memory",
  "pure-virtual-call": "pure virtual call",
  "division-by-zero": "division by zero",
  "illegal-instruction": "illegal instruction",
  "bus-error": "bus error",
  panic: "panic",
  deadlock: "deadlock",
  hang: "hang (every thread blocked waiting, no lock cycle)",
  breakpoint: "breakpoint trap",
  "fortify-failure": "buffer overflow caught by _FORTIFY_SOURCE",
  unknown: "unknown",
};

const ORIGIN_TEXT: Record<OriginType, string> = {
  fault: "the CPU faulted",
  sent: "sent by another process",
  raised: "raised by the program itself",
  requested: "dump taken on request, not at a crash",
  exception: "an unhandled software exception",
  unreadable: "not known: the debugger could not read the stopped thread",
};

/** Frames of the crashing thread listed under the verdict. */
const LISTED_FRAMES = 8;

export function formatTriage(result: TriageResult): string {
  const { crash } = result;
  const out: string[] = [];
  const signal = crash.signal ? ` (${[crash.signal, crash.signalCode].filter(Boolean).join(", ")})` : "";
  out.push(`Crash:     ${KIND_TEXT[crash.kind]}${signal}`);
  const c = crash.culprit;
  const where = c.function ?? (c.frame !== null ? `frame ${c.frame}` : "unknown");
  const location = c.file !== null ? ` at ${c.file}:${c.line ?? "?"}${c.line !== null && c.column != null ? `:${c.column}` : ""}` : c.module !== null ? ` in ${c.module}` : "";
  const thread = crash.thread.id !== null ? `, thread ${crash.thread.id}${crash.thread.lwp !== null ? ` (LWP ${crash.thread.lwp})` : ""}${crash.thread.name ? ` "${crash.thread.name}"` : ""}` : "";
  out.push(`Where:     ${where}${location}${thread}`);
  const why = whyLine(result);
  if (why) out.push(`Why:       ${why}`);
  // A fault says so by its kind; any other origin is worth a line (a kill from outside, a dump on request).
  if (crash.origin && crash.origin.type !== "fault") out.push(`Origin:    ${ORIGIN_TEXT[crash.origin.type]}: ${crash.origin.evidence}`);
  out.push(`Signature: ${crash.signature}`);
  if (crash.exploitability) out.push(`Security:  ${crash.exploitability.rating}: ${crash.exploitability.reasons.join("; ")}`);
  if (crash.annotations) out.push(`Annotated: ${annotationsText(crash.annotations)}`);
  if (result.recursion) {
    const { cycle, repeats, depth } = result.recursion;
    out.push(`Recursion: ${cycle.join(" -> ")} repeats about ${repeats} times (${depth} frames)`);
  }
  // A Go program's cycle runs through its goroutines.
  const unit = result.go ? "goroutine" : "thread";
  for (const edge of crash.deadlock?.cycle ?? []) {
    const at = edge.file !== null ? ` at ${edge.file}:${edge.line ?? "?"}` : "";
    out.push(`  ${unit} ${edge.thread} in ${edge.function ?? "??"}${at} waits for lock ${lockText(edge)} held by ${unit} ${edge.heldByThread ?? "?"}`);
  }
  // A stack overflow's listing starts at the recursive call: above it, where the stack ran out.
  const above = crash.kind === "stack-overflow" && result.recursion ? "" : "runtime ";
  const hidden = result.hiddenFrames > 0 ? `, ${result.hiddenFrames} ${above}frame${result.hiddenFrames === 1 ? "" : "s"} above hidden` : "";
  out.push(`Stack (${result.stackDepth} frame${result.stackDepth === 1 ? "" : "s"}${hidden}):`);
  for (const frame of result.frames.slice(0, LISTED_FRAMES)) out.push(`  ${describeFrame(frame)}`);
  if (result.frames.length > LISTED_FRAMES) out.push(`  ... ${result.stackDepth - LISTED_FRAMES - result.hiddenFrames} more`);
  if (result.threads.count > 1) {
    const groups = result.threads.groups.slice(0, 3).map((g) => `${g.threads.length} in ${g.function}`);
    out.push(`Threads:   ${result.threads.count} (${groups.join(", ")}${result.threads.groups.length > 3 ? ", ..." : ""})`);
  }
  for (const note of result.notes) out.push(`Note:      ${note}`);
  return `${out.join("\n")}\n`;
}

function whyLine(result: TriageResult): string | null {
  const { crash } = result;
  if (crash.message) return crash.message;
  const inside = result.faultIn
    ? `inside ${result.faultIn.function}${result.faultIn.module ? ` (${result.faultIn.module.split(/[\\/]/).at(-1)})` : ""}${crash.culprit.function ? `, called by ${crash.culprit.function}` : crash.culprit.module ? `, called from ${crash.culprit.module.split(/[\\/]/).at(-1)}` : ""}: `
    : "";
  const argument = result.faultIn?.argument ?? null;
  const passed =
    argument === null ? "" : result.fault?.base?.register === argument.register ? `; ${argument.register} is its first argument` : `; its first argument, ${argument.register}, is ${argument.value}`;
  if (result.fault) return `${inside}${result.fault.text}${result.instruction ? ` (${result.instruction})` : ""}${passed}`;
  if (crash.faultAddress !== null) {
    const verb = crash.access === null ? "a fault at" : { read: "reading", write: "writing", execute: "executing" }[crash.access];
    return `${inside}${verb} address ${crash.faultAddress}${result.instruction ? ` (${result.instruction})` : ""}${passed}`;
  }
  if (result.instruction !== null) return `faulting instruction: ${result.instruction}`;
  return null;
}

function describeFrame(frame: PlacedFrame): string {
  // A runtime's frame the runtime names no line of (a Java native method) is at its file alone.
  const line = frame.line !== null ? `:${frame.line}${frame.column != null ? `:${frame.column}` : ""}` : frame.found === "runtime" ? "" : ":?";
  const where = frame.file !== null ? ` at ${frame.file}${line}` : frame.module !== null ? ` in ${frame.module}` : "";
  // Full C++/Rust names (parameter and template lists) make the list unreadable; the source line says the rest.
  return `#${frame.level} ${frame.function ? normalizeFunctionName(frame.function) : "??"}${where}`;
}
