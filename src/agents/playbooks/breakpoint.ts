/**
 * A breakpoint trap (`int3`, `brk`, EXCEPTION_BREAKPOINT): the program ran an instruction that stops
 * it on purpose — `__debugbreak()`/`DebugBreak()`, a debug build's assertion, `raise(SIGTRAP)`, or
 * a trap the compiler put where control must not reach.
 */
import { normalizeFunctionName } from "../../analyzers/index.js";
import { hex } from "../../debuggers/dumpfile/file.js";
import { toBigInt } from "../../debuggers/model.js";
import { probes, type ProbeOf } from "../../debuggers/probe.js";
import { concludeOn } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { backtraceOf, BACKTRACE, Citations, deeperProbes, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { listedCode } from "./origins.js";
import { callPath, where } from "./prose.js";

/** What a program writes to stop itself at a breakpoint. */
const BREAK_CALL = /\b(__debugbreak|DebugBreak|__builtin_debugtrap|__builtin_trap|raise\s*\(\s*SIGTRAP|kill\s*\([^)]*SIGTRAP|DbgBreakPoint|BREAKPOINT|DEBUG_BREAK)\b/;
/** The breakpoint instructions: x86's `int3`, arm64's `brk`. */
const TRAP = /^(int3|brk)$/;
/** Frames of a debug build's assertion machinery, which breaks into a debugger. */
const DEBUG_ASSERT_FRAME = /^(_CrtDbgBreak|_CrtDbgReport\w*|_wassert|_assert|__assert_fail|DbgBreakPoint|DbgUiRemoteBreakin|RtlAssert)$/;

export function breakpointPlaybook(facts: Facts): Playbook {
  // x86 reports the pc after `int3`; arm64's `brk` and Windows' EXCEPTION_BREAKPOINT leave it on the trap.
  const pc = toBigInt(facts.triage.registers.pc);
  const traps: ProbeOf<"instructions">[] = pc === null ? [] : [{ kind: "instructions", count: 1, address: hex(pc - 1n) }, { kind: "instructions", count: 1, address: hex(pc) }];
  const deliberate: PlannedHypothesis = {
    rule: "deliberate-break",
    statement: `${where(facts.culprit)} stopped itself on purpose with a breakpoint instruction (\`__debugbreak()\`, a trapping assert macro, or a trap the compiler emitted)`,
    plan: [[...traps, facts.culpritListing].filter((p) => p !== null)],
    judge(evidence) {
      const code = facts.culpritListing ? evidence.find(facts.culpritListing) : null;
      const c = new Citations();
      const line = listedCode(code);
      const trap = traps.map((probe) => evidence.find(probe)).find((found) => found?.reading?.instructions.some((i) => TRAP.test(i.mnemonic)));
      const mnemonic = trap?.reading?.instructions[0]?.mnemonic ?? null;
      if (trap && mnemonic) {
        const source = line ? `, compiled from \`${line}\`${c.cite(code)}` : "";
        return verdict("confirmed", `The instruction that trapped is \`${mnemonic}\`${c.cite(trap)}, a breakpoint the program's own code executes${source}.`, trap, code);
      }
      const { found } = backtraceOf(evidence, facts);
      if (line && BREAK_CALL.test(line)) return verdict("confirmed", `The culprit's line is \`${line}\`${c.cite(code)}: it asks for the break.`, code, found);
      if (line) return verdict("inconclusive", `The culprit's line \`${line}\`${c.cite(code)} calls no break itself; a function it calls, or an assertion, did.`, code, found);
      return verdict("inconclusive", `The culprit's source line could not be read${c.cite(found)}.`, found);
    },
  };
  const assertion: PlannedHypothesis = {
    rule: "debug-assert",
    statement: "a debug build's assertion failed and broke into the debugger instead of aborting",
    plan: [[BACKTRACE]],
    judge(evidence) {
      const { found, frames } = backtraceOf(evidence, facts);
      const c = new Citations();
      const machinery = frames.find((frame) => DEBUG_ASSERT_FRAME.test(normalizeFunctionName(frame.function ?? "")));
      if (machinery?.function) return verdict("confirmed", `The stack goes through \`${normalizeFunctionName(machinery.function)}\`${c.cite(found)}, the assertion machinery that breaks into a debugger.`, found);
      return verdict("rejected", `No assertion machinery is on the stack${c.cite(found)}.`, found);
    },
  };
  return {
    hypotheses: [deliberate, assertion],
    investigate: deeperProbes([facts.inCulprit(probes.locals()), facts.inCulprit(probes.arguments()), facts.callerListing]),
    conclude: concludeOn(facts, ["debug-assert", "deliberate-break"], "why the program stopped at a breakpoint", ({ hit }) => ({
      summary: `${where(facts.culprit)} stopped at a breakpoint trap: ${hit.rule === "debug-assert" ? "a debug build's assertion failed and broke into the debugger" : "its own code executed a breakpoint instruction, as a trapping assert or `__debugbreak()` does when its check fails"}. Without a debugger attached the trap ends the process.`,
      cause: [hit.finding ?? "", `It was reached on the path ${callPath(facts)}.`],
      withCaller: true,
      confidence: 0.8,
      recommendations: [
        "Find the condition that made the program break here: a breakpoint left in code meant for a debugger session, or an assertion of a debug build whose condition failed.",
        "Ship builds without debug breaks (NDEBUG, no __debugbreak in release paths), and turn an unexpected state into an error the caller handles.",
      ],
    })),
    openQuestions: [{ text: "Whether the break was meant to be reachable in this build is not in the dump.", question: "Was this a debug build, and is a breakpoint on this path expected?" }],
  };
}
