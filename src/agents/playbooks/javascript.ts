/**
 * A JavaScript exception nothing caught, on which V8 aborted (`--abort-on-uncaught-exception`): the
 * error's class and message triage read from the heap, the throwing function llnode read into the
 * stack. No debugger can select a JavaScript frame, so the stack's native side is the evidence.
 */
import { normalizeFunctionName } from "../../analyzers/index.js";
import type { Facts } from "./facts.js";
import { BACKTRACE, backtraceOf, Citations, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { concludeOn } from "./conclusions.js";
import { callPath, where } from "./prose.js";

/** V8's frame that aborts where a thrown value finds no handler, under `--abort-on-uncaught-exception`. */
const ABORT_ON_UNCAUGHT = /^v8::internal::Isolate::CreateMessageOrAbort$/;

/** Whether the crash is a JavaScript exception: its culprit is a JavaScript frame. */
export function isJavaScriptException(facts: Facts): boolean {
  return facts.crash.kind === "uncaught-exception" && facts.culprit?.language === "javascript";
}

export function javaScriptExceptionPlaybook(facts: Facts): Playbook {
  const error = /^uncaught (\S+?)(?:: ([\s\S]*))?$/.exec(facts.crash.message ?? "");
  const thrown = error ? `\`${error[1]}\`${error[2] ? ` ("${error[2]}")` : ""}` : "a JavaScript exception";
  const noHandler: PlannedHypothesis = {
    rule: "no-handler",
    statement: `${where(facts.culprit)} threw ${thrown} and no JavaScript caller on the path ${callPath(facts)} catches it`,
    plan: [[BACKTRACE]],
    judge(evidence) {
      const { found, frames } = backtraceOf(evidence, facts);
      const c = new Citations();
      const aborts = frames.some((frame) => ABORT_ON_UNCAUGHT.test(normalizeFunctionName(frame.function ?? "")));
      if (aborts) return verdict("confirmed", `V8's Isolate::CreateMessageOrAbort is on the stack${c.cite(found)}: the thrown value found no handler and, with --abort-on-uncaught-exception, V8 aborted instead of printing it.`, found);
      return verdict("inconclusive", `The native frames${c.cite(found)} do not show V8 aborting on an uncaught exception.`, found);
    },
  };
  return {
    hypotheses: [noHandler],
    investigate: () => [],
    conclude: concludeOn(facts, ["no-handler"], "where the exception came from", ({ hit }) => ({
      summary: `${where(facts.culprit)} threw ${thrown}, and nothing on the path ${callPath(facts)} catches it, so V8 aborted the process (--abort-on-uncaught-exception).`,
      cause: [hit.finding ?? ""],
      confidence: error ? 0.9 : 0.7,
      recommendations: [
        `Guard the value ${where(facts.culprit)} reads (the message names the property and what it was read from), or validate the input before it reaches it.`,
        `Catch the error where the request can be rejected (on the path ${callPath(facts)}) and report which input caused it.`,
      ],
    })),
    openQuestions: error ? [] : [{ text: "The thrown value's class and message were not read from the heap.", question: "Does the program's stderr show the error Node printed before aborting?" }],
  };
}
