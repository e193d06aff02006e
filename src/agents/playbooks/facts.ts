/**
 * What the playbooks reason from: triage's verdict, the culprit frame and its caller, their source
 * lines from the crash site, and how to address a probe to a frame of the crashing thread (the
 * backend does it without moving the debugger's selection, so the store's cache stays valid and a
 * resumed run finds its evidence).
 */
import { isRuntimeFrame, normalizeFunctionName, type PlacedFrame, type TriageResult } from "../../analyzers/index.js";
import { debuggerLevel } from "../../debuggers/model.js";
import { placed, probes, type Probe, type ProbeOf } from "../../debuggers/probe.js";
import type { Crash } from "../../report/schema.js";
import type { State } from "../../state.js";
import type { CrashSite } from "./crash-site.js";
import { lineOf, type SourceFile } from "./source.js";

export interface Facts {
  triage: TriageResult;
  crash: Crash;
  /** The first frame of the program's own code. */
  culprit: PlacedFrame | null;
  /** The debugger's number for the culprit frame, as its backtraces show it (a scanned stack numbers it otherwise). */
  culpritLevel: number;
  /** The next own-code frame outwards: who called the culprit. */
  caller: PlacedFrame | null;
  /** The culprit's function name without parameters, namespace or crate (`send_to_client`, `idle_seconds`). */
  fn: string | null;
  /** The culprit's source file, when it is on this machine. */
  source: SourceFile | null;
  /** The culprit's source line. */
  line: string | null;
  /** The caller's source file and line. */
  callerSource: SourceFile | null;
  callerLine: string | null;
  /** A probe asked in frame `level` of the crashing thread. */
  at<P extends Probe>(level: number, probe: P): P;
  /** `at` for the culprit frame. */
  inCulprit<P extends Probe>(probe: P): P;
  /** `at` for the caller's frame; null when there is no caller of the program's own. */
  inCaller<P extends Probe>(probe: P): P | null;
  /** The probe that shows lines `from`..`to` of `file` (the culprit's by default). */
  list(from: number, to?: number, file?: string | null): ProbeOf<"source"> | null;
  /** The probe that shows the culprit's line; null when the debugger gave the frame no file or no line. */
  culpritListing: ProbeOf<"source"> | null;
  /** The probe that shows the caller's line, the call into the culprit; null likewise, or without a caller. */
  callerListing: ProbeOf<"source"> | null;
  /** The culprit's arguments as the debugger printed them in the backtrace. */
  args: Map<string, string>;
  /** The crash site's source of a file of the crashing stack, by the name the debug info gives it. */
  sourceOf(file: string | null): SourceFile | null;
  /**
   * What shows the fault itself: the debugger's number of the frame it happened in, that frame's
   * registers, the faulting instruction and the kernel's record of the signal. For a fault a crash
   * handler caught, the frame the signal interrupted and the record on its signal frame, not the
   * handler's abort where the thread stopped.
   */
  fault: { frame: number; registers: ProbeOf<"registers">; instruction: ProbeOf<"instructions">; record: Probe };
}

/** The facts of the analysis' crash site; a node of a graph started without them cannot go on. */
export function crashFacts(state: State): Facts {
  if (!state.triage || !state.crashSite) throw new Error("the analysis graph was started without a triage result and its crash site");
  return factsOf(state.triage, state.crashSite);
}

export function factsOf(triage: TriageResult, site: CrashSite): Facts {
  const { crash } = triage;
  const culprit = crash.culprit.frame === null ? null : (triage.frames[0] ?? null);
  const caller = triage.frames.slice(1).find((frame) => !isRuntimeFrame(frame) && frame.function !== null) ?? null;
  const sourceOf = (file: string | null) => (file !== null && Object.hasOwn(site.sources, file) ? (site.sources[file] ?? null) : null);
  const source = sourceOf(culprit?.file ?? null);
  const callerSource = sourceOf(caller?.file ?? null);
  const thread = crash.thread.id;
  const elsewhere = thread !== null && site.homeThread !== null && thread !== site.homeThread;
  // A frame found by a stack scan has the debugger's number for the same pc, where its unwind reached it.
  const numbered = (level: number) => {
    const frame = triage.frames.find((f) => f.level === level);
    return frame ? (debuggerLevel(frame) ?? level) : level;
  };
  const at = <P extends Probe>(level: number, probe: P): P => placed(probe, { thread: elsewhere ? thread : null, frame: numbered(level) });
  return {
    triage,
    crash,
    culprit,
    culpritLevel: culprit ? numbered(culprit.level) : 0,
    caller,
    fn: culprit?.function ? shortName(culprit.function) : null,
    source,
    line: lineOf(source, culprit?.line ?? null),
    callerSource,
    callerLine: lineOf(callerSource, caller?.line ?? null),
    at,
    inCulprit: <P extends Probe>(probe: P) => at(culprit?.level ?? 0, probe),
    // A runtime's frame (a Java method) is no frame the debugger can select: no probe is placed in it.
    inCaller: <P extends Probe>(probe: P) => (caller && debuggerLevel(caller) !== null ? at(caller.level, probe) : null),
    list(from, to = from, file = culprit?.file ?? null) {
      return file === null ? null : { kind: "source", file, from, to };
    },
    culpritListing: lineListing(culprit),
    callerListing: lineListing(caller),
    args: parseArgs(culprit?.args ?? ""),
    sourceOf,
    fault: faultProbes(triage),
  };
}

/** The probes triage read the fault with, so that a playbook's finds its evidence. */
function faultProbes(triage: TriageResult): Facts["fault"] {
  const caught = triage.caught ?? null;
  // kit.ts's REGISTERS, FAULTING_INSTRUCTION and SIGNAL_INFO: the selected frame's, where the thread stopped.
  if (!caught) return { frame: 0, registers: probes.registers(), instruction: { kind: "instructions", count: 1 }, record: { kind: "signal-info" } };
  return {
    frame: caught.frame,
    registers: probes.registers({ frame: caught.frame }),
    instruction: { kind: "instructions", count: 1, address: caught.pc },
    record: caught.recordAt === null ? { kind: "signal-info" } : probes.memory(caught.recordAt, 3),
  };
}

function lineListing(frame: PlacedFrame | null): ProbeOf<"source"> | null {
  return frame?.file != null && frame.line !== null ? probes.source(frame.file, frame.line) : null;
}

/** `ns::Class::method(int)` → `method`; `crate::module::function` → `function`. */
export function shortName(fn: string): string {
  return normalizeFunctionName(fn).split("::").at(-1) ?? fn;
}

/** A frame's argument list as printed (`a=1, b=0x5 "text", c=c@entry=0x7`) as name → value. */
export function parseArgs(text: string): Map<string, string> {
  const args = new Map<string, string>();
  let depth = 0;
  let quote: string | null = null;
  let current = "";
  const flush = () => {
    const match = /^([A-Za-z_$][\w$]*)=(?:[A-Za-z_$][\w$]*@entry=)?([\s\S]*)$/.exec(current.trim());
    if (match) args.set(match[1] ?? "", (match[2] ?? "").trim());
    current = "";
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? "";
    if (quote) {
      if (ch === "\\") {
        current += ch + (text[i + 1] ?? "");
        i++;
        continue;
      }
      if (ch === quote) quote = null;
    } else if (ch === '"') quote = ch;
    else if ("{([<".includes(ch)) depth++;
    else if ("})]>".includes(ch)) depth--;
    else if (ch === "," && depth === 0) {
      flush();
      continue;
    }
    current += ch;
  }
  flush();
  return args;
}
