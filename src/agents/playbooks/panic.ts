/** Rust (and other runtime) panics: which API panicked, on what value, called from where. */
import { normalizeFunctionName } from "../../analyzers/index.js";
import { probes } from "../../debuggers/probe.js";
import type { Evidence } from "../evidence.js";
import type { Facts } from "./facts.js";
import { BACKTRACE, backtraceOf, Citations, deeperProbes, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { concludeOn } from "./conclusions.js";
import { listedCode } from "./origins.js";
import { callPath, where } from "./prose.js";
import { variablesOf, variablesText } from "./values.js";

/** What the runtime frame right above the culprit says the panic was. */
const PANIC_APIS: [RegExp, string][] = [
  [/Option::(expect|unwrap)$/, "called `Option::$1` on `None`"],
  [/Result::(expect|unwrap)$/, "called `Result::$1` on an `Err`"],
  // In optimized builds `expect`/`unwrap` are inlined and only their cold failure path is a frame.
  [/option::expect_failed$/, "called `Option::expect` on `None`"],
  [/option::unwrap_failed$/, "called `Option::unwrap` on `None`"],
  [/result::unwrap_failed$/, "called `Result::unwrap` or `Result::expect` on an `Err`"],
  [/panic_bounds_check$/, "indexed out of bounds"],
  [/panic_const_(add|sub|mul|div|rem|neg|shl|shr)_overflow$/, "overflowed in arithmetic ($1)"],
  [/panic_const_(div|rem)_by_zero$/, "divided by zero"],
  [/unwrap_failed$/, "unwrapped a failure"],
  [/(begin_panic|panic_fmt|panic_display|panic)$/, "called `panic!`"],
];

export function panicPlaybook(facts: Facts): Playbook {
  // The panicking API nearest the culprit: indexing goes through `Vec::index` and `slice::index`
  // before `panic_bounds_check`, which names what failed.
  const entry = (evidence: Evidence) => {
    const { found, frames, above } = backtraceOf(evidence, facts);
    const culprit = facts.culpritLevel;
    const between = frames.filter((f) => f.level < culprit).sort((a, b) => b.level - a.level);
    for (const frame of between) {
      const name = frame.function ? normalizeFunctionName(frame.function) : null;
      for (const [pattern, text] of PANIC_APIS) {
        const match = name ? pattern.exec(name) : null;
        if (match) return { found, name, what: text.replace("$1", match[1] ?? "") };
      }
    }
    return { found, name: above?.function ? normalizeFunctionName(above.function) : null, what: null };
  };
  const locals = facts.inCulprit(probes.locals());
  const args = facts.inCulprit(probes.arguments());
  const ownCall: PlannedHypothesis = {
    rule: "own-call-panicked",
    statement: `${where(facts.culprit)} itself panicked through a checked API (expect/unwrap, indexing, arithmetic) on a value it did not expect`,
    plan: [[BACKTRACE, locals, args]],
    judge(evidence) {
      const { found, name, what } = entry(evidence);
      const c = new Citations();
      const shown = evidence.find(locals);
      const none = variablesOf(shown).find((v) => /::None$/.test(v.value)) ?? null;
      if (what) {
        const value = none ? ` Its local \`${none.name}\` is None${c.cite(shown)}.` : "";
        return verdict("confirmed", `The panic went through \`${name}\`${c.cite(found)}: it ${what}.${value}`, found, none ? shown : null);
      }
      return verdict("inconclusive", `The frame above the culprit (${name ?? "none"})${c.cite(found)} is not a known panicking API.`, found);
    },
  };
  const library: PlannedHypothesis = {
    rule: "library-panicked",
    statement: "a library the culprit called panicked on an internal error",
    plan: [[BACKTRACE]],
    judge(evidence) {
      const { found, what, name } = entry(evidence);
      if (what) return verdict("rejected", `The panic came from \`${name}\`${new Citations().cite(found)}, the standard library's check of the culprit's own call, not a library's internal error.`, found);
      return verdict("inconclusive", "Library frames stand between the culprit and the panic.", found);
    },
  };
  return {
    hypotheses: [ownCall, library],
    investigate: deeperProbes([facts.culpritListing, facts.inCaller(probes.locals()), facts.callerListing]),
    conclude: concludeOn(facts, ["own-call-panicked"], "what panicked", ({ evidence, hit }, c) => {
      const { what } = entry(evidence);
      const code = evidence.find(facts.culpritListing);
      const argsFound = evidence.find(args);
      // Without debug info the debugger lists no arguments at all.
      const argText = variablesText(argsFound);
      const summary = `${where(facts.culprit)} ${what ?? "panicked"}${facts.crash.message ? ` with the message "${facts.crash.message}"` : ""}${code?.ok ? ` at \`${listedCode(code)}\`${c.cite(code)}` : ""}${argText ? `, with ${argText}${c.cite(argsFound)}` : ""}; with panic=abort the panic aborted the process.`;
      return {
        summary,
        cause: [hit.finding ?? "", `It was called on the path ${callPath(facts)}.`],
        withCaller: true,
        confidence: 0.9,
        recommendations: [
          `Handle the missing case in \`${facts.fn}\` instead of panicking: return an error (or a default) that the caller can report, naming the input${argText ? ` (${argText})` : ""}.`,
          "If the value can never legitimately be missing, validate it where it enters the program so the panic cannot be reached.",
        ],
      };
    }),
    openQuestions: [{ text: "Why the input lacked the expected value is outside the dump.", question: "Where does this input come from, and is a missing entry a data error to report or a case the code must support?" }],
  };
}
