/**
 * The program stopped itself: a failed assert, a direct abort(), the stack protector, a fortified
 * string function. The check is known; the question is which values broke it and where they came from.
 */
import { stringEndBytes, textBytes } from "../../analyzers/fault.js";
import { coreSegmentAt, normalizeFunctionName } from "../../analyzers/index.js";
import { probes, type ProbeOf } from "../../debuggers/probe.js";
import type { Evidence, Found } from "../evidence.js";
import { parseArgs, type Facts } from "./facts.js";
import { ABORT_MESSAGE, BACKTRACE, backtraceOf, Citations, deeperProbes, notYetRun, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { concludeOn, concurrencyQuestion } from "./conclusions.js";
import { thousands } from "../../report/numbers.js";
import { checkInCulprit, invalidParameter, literalOf } from "./checked-parameter.js";
import { listedCode } from "./origins.js";
import { basename, callPath, location, where } from "./prose.js";
import { codeOf, dereferences, enclosingFunction, escape, functionSpan, grep, identifiers } from "./source.js";
import { integerOf, looksPoisoned, printed, sourceTextOf, stringOf, variablesOf, variablesText } from "./values.js";


/** `a + b <= c` → left, operator, right; null without a top-level comparison. */
export function comparison(expression: string): { left: string; op: string; right: string } | null {
  let depth = 0;
  for (let i = 0; i < expression.length; i++) {
    const ch = expression[i];
    if (ch === "(" || ch === "[") depth++;
    else if (ch === ")" || ch === "]") depth--;
    else if (depth === 0) {
      const op = /^(<=|>=|==|!=|<(?!<)|>(?!>))/.exec(expression.slice(i))?.[1];
      if (op && expression[i - 1] !== "-" && expression[i - 1] !== "<" && expression[i - 1] !== ">") {
        return { left: expression.slice(0, i).trim(), op, right: expression.slice(i + op.length).trim() };
      }
    }
  }
  return null;
}

function holds(left: bigint, op: string, right: bigint): boolean {
  switch (op) {
    case "<=": return left <= right;
    case ">=": return left >= right;
    case "<": return left < right;
    case ">": return left > right;
    case "==": return left === right;
    default: return left !== right;
  }
}

/** The chains an expression reads (`ring->write_index`, `length`), for printing one by one. */
function operands(expression: string): string[] {
  const chains = dereferences(expression).map((d) => (d.member ? `${d.pointer}->${d.member}` : d.pointer));
  const names = identifiers(expression).filter((name) => !chains.some((chain) => chain.split(/->|\./).includes(name)));
  return [...new Set([...chains.filter((c) => !chains.some((o) => o !== c && o.startsWith(`${c}->`))), ...names])];
}

/** The `if (...)` guarding line `line` inside the same function: the nearest one above it. */
function guardAbove(facts: { source: Facts["source"] }, fn: string | null, line: number | null): { line: number; condition: string } | null {
  if (!facts.source || line === null) return null;
  const span = fn ? functionSpan(facts.source, fn, line) : enclosingFunction(facts.source, line)?.span ?? null;
  const from = span?.start ?? Math.max(1, line - 6);
  for (let n = line; n >= from; n--) {
    const code = codeOf(facts.source.lines[n - 1] ?? "");
    const at = code.search(/\bif\s*\(/);
    if (at < 0) continue;
    const open = code.indexOf("(", at);
    let depth = 0;
    for (let i = open; i < code.length; i++) {
      if (code[i] === "(") depth++;
      if (code[i] === ")" && --depth === 0) return { line: n, condition: code.slice(open + 1, i).trim() };
    }
  }
  return null;
}

export function assertionPlaybook(facts: Facts): Playbook {
  const message = facts.crash.message ?? "";
  // A check another function recorded (an invalid parameter) is on its parameters: in the culprit,
  // the arguments the culprit passed for them.
  const recorded = invalidParameter(message);
  const passed = recorded ? checkInCulprit(facts, recorded) : null;
  const expression = /Assertion [`'](.*)' failed/s.exec(message)?.[1] ?? passed?.expression ?? null;
  const split = expression ? comparison(expression) : null;
  const sides = (split ? [split.left, split.right] : expression ? operands(expression) : []).filter((side) => literalOf(side) === null);
  const parts = expression ? operands(expression).filter((o) => !sides.includes(o)).slice(0, 3) : [];
  const print = (e: string) => facts.inCulprit(probes.evaluate(e));
  const valueOf = (evidence: Evidence, side: string) => literalOf(side) ?? integerOf(values(evidence, [side])[0]?.value ?? null);
  const values = (evidence: Evidence, exprs: string[]) =>
    exprs.map((e) => ({ expression: e, found: evidence.find(print(e)), value: printed(evidence.find(print(e))) }));

  const badValues: PlannedHypothesis = {
    rule: "assertion-values",
    statement: passed
      ? `${recorded?.checker}'s check \`${recorded?.check}\` failed on what ${where(facts.culprit)} passed it: ${passed.said}`
      : expression
        ? `\`${expression}\` was false in ${where(facts.culprit)}; the values of its operands show which side is wrong`
        : `an assertion in ${where(facts.culprit)} failed`,
    plan: [[...sides.slice(0, 2).map(print), facts.inCulprit(probes.arguments()), ...(passed ? [BACKTRACE] : [])], parts.map(print)],
    judge(evidence) {
      const c = new Citations();
      // The checker's own frame shows the value it was passed, where the culprit's expression cannot be read.
      const checked = passed && recorded ? checkerValues(evidence, facts, recorded) : null;
      if (checked && !holds(checked.left, checked.op, checked.right)) {
        const bound = shownValues(evidence, sides, print, c);
        // The culprit's own arguments its expression reads (`state` = 2), where the expression itself could not be read.
        const argsFound = evidence.find(facts.inCulprit(probes.arguments()));
        const named = new Set(sides.flatMap((side) => identifiers(side)));
        const read = variablesOf(argsFound).filter((v) => named.has(v.name));
        if (bound.found.length === 0 && read.length > 0 && argsFound) {
          bound.text = `${read.map((v) => `\`${v.name}\` = ${v.value}`).join(", ")}${c.cite(argsFound)}`;
          bound.found.push(argsFound);
        }
        return verdict(
          "confirmed",
          `${recorded?.checker} was called with ${checked.text}${c.cite(checked.found)}, which ${where(facts.culprit)} passed as ${passed?.said}${bound.text ? ` (${bound.text})` : ""}: ${checked.left} ${checked.op} ${checked.right} is false.`,
          checked.found,
          ...bound.found,
        );
      }
      const shown = values(evidence, [...sides, ...parts]).filter((v) => v.value !== null);
      const text = shown.map((v) => `\`${v.expression}\` = ${v.value}${c.cite(v.found)}`).join(", ");
      const found = shown.map((v) => v.found);
      if (split) {
        const left = valueOf(evidence, split.left);
        const right = valueOf(evidence, split.right);
        if (left !== null && right !== null) {
          const how = passed ? `${where(facts.culprit)} passed ${passed.said} to ${recorded?.checker}: ` : "";
          if (!holds(left, split.op, right)) return verdict("confirmed", `${how}${text}: ${left} ${split.op} ${right} is false.`, ...found);
          return verdict("inconclusive", `${text}: with these values ${left} ${split.op} ${right} holds, so they changed after the check (another thread?).`, ...found);
        }
      }
      if (shown.length > 0 && !split) return verdict("confirmed", `The operands had these values: ${text}.`, ...found);
      return verdict("inconclusive", `The operands could not all be evaluated in the culprit frame${text ? `: ${text}` : ""}.`, ...found);
    },
  };
  const owners = [...new Set(sides.flatMap((s) => dereferences(s).map((d) => d.pointer)).filter((p) => /^[A-Za-z_]\w*$/.test(p)))].slice(0, 2);
  const corrupted: PlannedHypothesis = {
    rule: "corrupted-state",
    statement: `memory corruption rather than the program's own logic put those values there`,
    plan: [owners.length ? owners.map((o) => print(`*${o}`)) : [facts.inCulprit(probes.locals())]],
    judge(evidence) {
      const asked: (Found | null)[] = owners.length ? owners.map((o) => evidence.find(print(`*${o}`))) : [evidence.find(facts.inCulprit(probes.locals()))];
      const shown = asked.filter((f): f is Found => Boolean(f?.ok));
      if (shown.length === 0) return verdict("inconclusive", "The objects behind the assertion could not be printed.");
      const c = new Citations();
      const text = shown.map((f) => `${printed(f) ?? variablesText(f) ?? ""}${c.cite(f)}`).join("; ");
      const numbers = [...text.matchAll(/\b(0x[0-9a-f]+|\d{6,})\b/g)].map((m) => BigInt(m[1] ?? "0"));
      if (numbers.some(looksPoisoned)) return verdict("confirmed", `The state holds fill-pattern values: ${text}.`, ...shown);
      return verdict("rejected", `The state is self-consistent, with no fill patterns or wild values: ${text}. These are values the program's own arithmetic produces.`, ...shown);
    },
  };
  const guard = guardAbove({ source: facts.callerSource }, facts.caller?.function ? normalizeFunctionName(facts.caller.function).split("::").at(-1) ?? null : null, facts.caller?.line ?? null);
  const guardListing = guard ? facts.list(guard.line, guard.line, facts.caller?.file) : null;
  return {
    hypotheses: [badValues, corrupted],
    investigate: deeperProbes([facts.inCaller(probes.locals()), facts.inCaller(probes.arguments()), facts.callerListing, guardListing]),
    conclude: concludeOn(facts, ["assertion-values"], "which operand of the assertion was wrong", ({ evidence, hit }, c) => {
      const messageFound = evidence.find(ABORT_MESSAGE);
      const summary = passed
        ? `${where(facts.culprit)} passed ${recorded?.checker} an argument its check \`${recorded?.check}\` rejects${c.cite(messageFound)}: ${hit.finding ?? ""}`
        : `The assertion \`${expression ?? "?"}\` in ${where(facts.culprit)} failed${c.cite(messageFound)}: ${hit.finding ?? ""}`;
      const guardFound = evidence.find(guardListing);
      const guardText = guard && guardFound?.ok
        ? `The caller ${where(facts.caller)} guarded the call with \`if (${guard.condition})\` at ${basename(facts.caller?.file ?? "")}:${guard.line}${c.cite(guardFound)}, and that check let these values through: the caller's guard and the assertion disagree about what is allowed${guardCallee(guard.condition)}.`
        : "";
      return {
        summary,
        cause: [`${where(facts.culprit)} was reached on the path ${callPath(facts)} with values that break its precondition.`, guardText],
        withCaller: true,
        confidence: guardText ? 0.85 : 0.75,
        recommendations: [
          guard
            ? `Make the guard at ${basename(facts.caller?.file ?? "")}:${guard.line} check what the assertion requires (\`${expression}\`)${guardCallee(guard.condition) ? ", starting with the helper it calls" : ""}, so the call is refused before it breaks the invariant.`
            : `Find where the operands of \`${expression}\` get these values on the path ${callPath(facts)} and stop the call there.`,
          "Add a test with these exact values; keep the assertion, it caught a real bug.",
        ],
      };
    }),
    openQuestions: [
      { text: "The dump holds the values at the assertion, not the sequence of calls that produced them.", question: "Which sequence of operations leads here (e.g. after a wrap-around or a particular input size), and does it reproduce?" },
      ...concurrencyQuestion(facts),
    ],
  };

  function guardCallee(condition: string): string {
    const callee = /([A-Za-z_]\w*)\s*\(/.exec(condition)?.[1];
    return callee ? ` (it relies on \`${callee}\`)` : "";
  }
}

export function abortPlaybook(facts: Facts): Playbook {
  const line = facts.culprit?.line ?? null;
  const guard = guardAbove(facts, facts.fn, line);
  const conditionOperands = guard ? operands(guard.condition).slice(0, 2) : [];
  const print = (e: string) => facts.inCulprit(probes.evaluate(e));
  const listBlock = guard && line !== null ? facts.list(guard.line, line) : null;

  const deliberate: PlannedHypothesis = {
    rule: "deliberate-abort",
    statement: `${where(facts.culprit)} called abort() itself: one of the program's own checks decided to stop${guard ? ` (\`if (${guard.condition})\`)` : ""}`,
    plan: [[listBlock ?? facts.culpritListing, ...conditionOperands.map(print)].filter((c) => c !== null)],
    judge(evidence) {
      const code = evidence.find(listBlock ?? facts.culpritListing);
      const c = new Citations();
      const shown = conditionOperands.map((o) => ({ o, found: evidence.find(print(o)) })).filter((v) => printed(v.found) !== null);
      const values = shown.map((v) => `\`${v.o}\` = ${printed(v.found)}${c.cite(v.found)}`).join(", ");
      if (/\babort\s*\(/.test(sourceTextOf(code) ?? "")) {
        return verdict("confirmed", `The source calls abort() at ${location(facts.culprit)}${c.cite(code)}${guard ? ` when \`${guard.condition}\`` : ""}${values ? `, and ${values}` : ""}.`, code, ...shown.map((v) => v.found));
      }
      const { found: bt, above } = backtraceOf(evidence, facts);
      if (above?.function && /abort$/.test(normalizeFunctionName(above.function))) {
        return verdict("confirmed", `The frame above ${where(facts.culprit)} is abort()${c.cite(bt)}.`, bt);
      }
      return verdict("inconclusive", "The source of the culprit is not available to show the abort() call.", code);
    },
  };
  const library: PlannedHypothesis = {
    rule: "library-abort",
    statement: "a library aborted on an internal error, not the program's own code",
    plan: [[BACKTRACE]],
    judge(evidence) {
      const { found: bt, above } = backtraceOf(evidence, facts);
      if (above?.function && /abort$/.test(normalizeFunctionName(above.function))) {
        return verdict("rejected", `abort() was called directly by ${where(facts.culprit)}${new Citations().cite(bt)}, with no library frame in between.`, bt);
      }
      return verdict("inconclusive", `Between ${where(facts.culprit)} and abort() there are library frames${new Citations().cite(bt)}.`, bt);
    },
  };
  const owner = conditionOperands.flatMap((o) => dereferences(o).map((d) => d.pointer)).find((p) => /^[A-Za-z_]\w*$/.test(p)) ?? null;
  return {
    hypotheses: [deliberate, library],
    investigate: deeperProbes([owner ? print(`*${owner}`) : null, facts.inCaller(probes.locals()), facts.callerListing]),
    conclude: concludeOn(facts, ["deliberate-abort"], "why abort() was called", ({ evidence, hit }, c) => {
      const ownerFound = owner ? evidence.find(print(`*${owner}`)) : null;
      const block = evidence.find(listBlock);
      const said = block?.ok ? /"([^"]{6,})"/.exec(sourceTextOf(block) ?? "")?.[1]?.replace(/(\\n|%\w)+$/g, "").replace(/[,:]?\s*(got|was)?\s*$/, "").trim() : undefined;
      const summary = `${where(facts.culprit)} aborted on purpose: ${hit.finding ?? ""}`;
      return {
        summary,
        cause: [
          guard ? `The check \`${guard.condition}\` held${ownerFound?.ok ? `; the object it checks is ${printed(ownerFound)}${c.cite(ownerFound)}` : ""}.` : "",
          said ? `Just before aborting it prints a message starting "${said}"${c.cite(block)}: look for it on the process's stderr.` : "",
          callPath(facts) ? `The value reached the check on the path ${callPath(facts)}.` : "",
        ],
        withCaller: true,
        confidence: 0.85,
        recommendations: [
          guard ? `Find where \`${conditionOperands[0] ?? guard.condition}\` gets its value and reject the bad value there with an error message, rather than aborting deep inside ${facts.fn ? `\`${facts.fn}\`` : "the program"}.` : "Replace the abort with an error the caller can report.",
          "Keep the check, but make the failure say what was wrong and where the value came from.",
        ],
      };
    }),
    openQuestions: [
      { text: "The dump shows the rejected value, not the input it came from.", question: `Where does the rejected value come from in this deployment (configuration file, environment, request), and what was it supposed to be?` },
      { text: "Text the program printed before aborting is on its stderr, not in the core.", question: "Can you share the stderr or log of the crashed process?" },
    ],
  };
}

export function stackProtectorPlaybook(facts: Facts): Playbook {
  // Without a stack protector the overflow shows as a `ret` that faulted on the word it popped.
  if (facts.crash.signal === "SIGSEGV") return smashedReturnPlaybook(facts);
  return canaryPlaybook(facts);
}

/** A `ret` that faulted, or returned to no address, or a write that ran off the stack: the stack was overwritten from a buffer on it. */
function smashedReturnPlaybook(facts: Facts): Playbook {
  const smashed = facts.triage.smashed;
  const hypothesis =
    smashed === "ran-off-top" ? ranOffStack(facts, "top") : smashed === "ran-off-bottom" ? ranOffStack(facts, "bottom") : smashed === "returned" ? poppedReturn(facts, false) : smashed === "returned-into-code" ? poppedReturn(facts, true) : faultingReturn(facts);
  return {
    hypotheses: [hypothesis],
    investigate: deeperProbes([facts.inCulprit(probes.arguments())]),
    conclude: concludeOn(facts, [hypothesis.rule], "what overwrote the stack", ({ evidence, hit }, c) => {
      const args = evidence.find(facts.inCulprit(probes.arguments()));
      const ranOff = hypothesis.rule === "write-ran-off-stack" || hypothesis.rule === "write-ran-below-stack";
      const summaries: Record<string, string> = {
        "write-ran-off-stack": `${where(facts.culprit)} wrote past the end of a buffer on its stack and kept going up to the top of the stack. ${hit.finding ?? ""} Every frame above it, return addresses included, was overwritten; no bound stopped the copy.`,
        "write-ran-below-stack": `${where(facts.culprit)} wrote downwards past the start of a buffer on its stack and kept going below the end of the stack. ${hit.finding ?? ""} It is not a stack overflow: nothing recursed and the stack pointer was far above the fault.`,
      };
      return {
        summary:
          summaries[hypothesis.rule] ??
          `${where(facts.culprit)} returned through an overwritten return address. ${hit.finding ?? ""} A buffer in its frame was written past its end, over the saved return address; no stack protector caught it in this build.`,
        cause: [`${facts.crash.message ?? "The stack was overwritten"}.`, variablesText(args) ? `Its arguments were: ${variablesText(args)}${c.cite(args)}.` : ""],
        confidence: 0.85,
        recommendations: [
          ranOff
            ? `Find the loop or copy in ${where(facts.culprit)} that writes ${hypothesis.rule === "write-ran-below-stack" ? "backwards from a buffer (an index that goes negative, a count taken from the input)" : "into a local buffer until the input ends (a delimiter that never came, a length taken from the input)"} and bound it by the buffer's size.`
            : `Find the copy into a local buffer of ${where(facts.culprit)} that is not bounded by the buffer's size (strcpy, sprintf, memcpy with an input length) and bound it, or reject longer input.`,
          "Build with -fstack-protector-strong and -D_FORTIFY_SOURCE=2: the next overflow aborts with its name instead of jumping to input bytes.",
          "Add a test with an over-long input; AddressSanitizer reports the write at the line that does it.",
        ],
      };
    }),
    openQuestions: [{ text: "Where the over-long input came from is not in the dump.", question: "What input reached this function (a file, a request, a command line), and how long was it?" }],
  };
}

/** A `ret` that faulted on a word that is no canonical address. */
function faultingReturn(facts: Facts): PlannedHypothesis {
  const popped = facts.inCulprit(probes.memory("$sp", 1));
  return {
    rule: "return-address-overwritten",
    statement: `${where(facts.culprit)}'s return address on the stack was overwritten, so its \`ret\` jumped to a word that is no address`,
    plan: [[popped]],
    judge(evidence) {
      const found = evidence.find(popped);
      const word = found?.reading?.words[0] ?? null;
      const c = new Citations();
      if (word === null) return verdict("inconclusive", `The word at the stack pointer could not be read${c.cite(found)}.`, found);
      // x86-64 addresses are canonical: bits 63..47 all equal. A word that is not cannot have been pushed by a call.
      const high = word >> 47n;
      const canonical = high === 0n || high === 0x1ffffn;
      if (canonical) return verdict("inconclusive", `The word \`ret\` popped, 0x${word.toString(16)}${c.cite(found)}, is a canonical address; it may still not be the caller's.`, found);
      return verdict("confirmed", `The word \`ret\` popped is 0x${word.toString(16).padStart(16, "0")}${c.cite(found)}, not a canonical address: no call pushed it.${bytesSaid(word)}`, found);
    },
  };
}

/** The overwriting bytes of a popped word, as a sentence, when they are text; empty when they are not. */
function bytesSaid(word: bigint): string {
  const text = textBytes(word) ?? stringEndBytes(word);
  return text ? ` It is "${text}": text, not a pointer.` : "";
}

/**
 * A `ret` that completed, to a canonical address that maps nothing or (`intoCode`) into code where
 * no call returns: the word it popped is still just below the stack pointer.
 */
function poppedReturn(facts: Facts, intoCode: boolean): PlannedHypothesis {
  const landed = intoCode ? "code through the overwritten address" : "an address that maps nothing";
  const below = facts.at(0, probes.memory("$sp - 8", 1));
  const pc = facts.at(0, probes.register("pc"));
  return {
    rule: "return-address-overwritten",
    statement: `${where(facts.culprit)}'s return address on the stack was overwritten, so its \`ret\` jumped to ${landed}`,
    plan: [[below, pc]],
    judge(evidence) {
      const word = evidence.find(below);
      const counter = evidence.find(pc);
      const popped = word?.reading?.words[0] ?? null;
      const at = counter?.reading ? BigInt(counter.reading) : null;
      const c = new Citations();
      if (popped === null || at === null) return verdict("inconclusive", `The pc and the word below the stack pointer could not both be read${c.cite(word, counter)}.`, word, counter);
      if (popped !== at) return verdict("rejected", `The word below the stack pointer, 0x${popped.toString(16)}${c.cite(word)}, is not the pc 0x${at.toString(16)}${c.cite(counter)}: no \`ret\` popped it.`, word, counter);
      return verdict("confirmed", `The pc 0x${at.toString(16).padStart(16, "0")}${c.cite(counter)} is the word just below the stack pointer${c.cite(word)}: \`ret\` popped it, and ${intoCode ? "it is no return address a call left" : "it maps nothing"}.${bytesSaid(at)}`, word, counter);
    },
  };
}

/**
 * A write that ran off one end of the stack that holds the stack pointer: up past its top (a copy
 * with no bound), or down below its end while the stack pointer was far above (not an overflow).
 */
function ranOffStack(facts: Facts, side: "top" | "bottom"): PlannedHypothesis {
  const sections: ProbeOf<"sections"> = { kind: "sections" };
  const sp = facts.at(0, probes.register("sp"));
  return {
    rule: side === "top" ? "write-ran-off-stack" : "write-ran-below-stack",
    statement:
      side === "top"
        ? `a write from a buffer on ${where(facts.culprit)}'s stack ran upwards off the top of the stack`
        : `a write from a buffer on ${where(facts.culprit)}'s stack walked downwards off the end of the stack`,
    plan: [[sections, sp]],
    judge(evidence) {
      const files = evidence.find(sections);
      const pointer = evidence.find(sp);
      const fault = facts.crash.faultAddress === null ? null : BigInt(facts.crash.faultAddress);
      const at = pointer?.reading ? BigInt(pointer.reading) : null;
      const c = new Citations();
      const stack = at === null || !files?.reading ? null : coreSegmentAt(files.reading, at);
      if (fault === null || at === null || !stack) return verdict("inconclusive", `The stack's extent could not be read${c.cite(files, pointer)}.`, files, pointer);
      const inStack = `The stack pointer ${pointer?.reading}${c.cite(pointer)} lies in the stack segment ${stack.start}–${stack.end}${c.cite(files)}`;
      if (side === "top") {
        if (fault !== BigInt(stack.end)) return verdict("rejected", `The fault at 0x${fault.toString(16)} is not the top of the stack, which ends at ${stack.end}${c.cite(files)}.`, files, pointer);
        return verdict("confirmed", `${inStack}, and the write faulted at ${stack.end}, its top, ${thousands(Number(fault - at))} bytes above the stack pointer.`, files, pointer);
      }
      if (fault >= BigInt(stack.start)) return verdict("rejected", `The fault at 0x${fault.toString(16)} is not below the stack, which starts at ${stack.start}${c.cite(files)}.`, files, pointer);
      return verdict("confirmed", `${inStack}, ${thousands(Number(at - BigInt(stack.start)))} bytes above its end, and the write faulted at 0x${fault.toString(16)}, below that end.`, files, pointer);
    },
  };
}

function canaryPlaybook(facts: Facts): Playbook {
  const print = (e: string) => facts.inCulprit(probes.evaluate(e));
  const locals = facts.inCulprit(probes.locals());
  const arrays = (evidence: Evidence) => {
    return variablesOf(evidence.find(locals)).filter((v) => /^["{]/.test(v.value));
  };
  const declared = localArrays(facts);
  const overflow: PlannedHypothesis = {
    rule: "local-array-overflow",
    statement: `a local array of ${where(facts.culprit)} was written past its end, over the stack canary, which the check at the function's return caught`,
    plan: [[locals, ...declared.slice(0, 2).map((name) => print(`sizeof ${name}`))]],
    judge(evidence) {
      const found = evidence.find(locals);
      const c = new Citations();
      const candidates = arrays(evidence);
      if (!found?.ok || candidates.length === 0) return verdict("inconclusive", `No local array shows in the culprit's locals${c.cite(found)}.`, found);
      const sized = candidates.map((a) => ({ ...a, size: integerOf(printed(evidence.find(print(`sizeof ${a.name}`)))), sizeFound: evidence.find(print(`sizeof ${a.name}`)) }));
      if (sized.every((a) => a.size === null)) {
        return verdict("inconclusive", `The locals include the array${candidates.length > 1 ? "s" : ""} ${candidates.map((a) => `\`${a.name}\``).join(", ")}${c.cite(found)}; their sizes are needed to tell whether one was overrun.`, found);
      }
      const integers = variablesOf(found).filter((v) => /^\d+$/.test(v.value)).map((v) => ({ name: v.name, value: BigInt(v.value) }));
      for (const array of sized) {
        if (array.size === null) continue;
        const index = integers.find((i) => i.value >= (array.size ?? 0n));
        const text = stringOf(array.value);
        const full = text !== null && BigInt(Buffer.byteLength(text)) >= array.size && !array.value.includes("\\000");
        if (index || full) {
          const why = index ? `\`${index.name}\` = ${index.value}, past its end` : `its ${array.size} bytes are all text with no terminating NUL`;
          return verdict("confirmed", `\`${array.name}\` holds ${array.size} bytes${c.cite(array.sizeFound)} and ${why}${c.cite(found)}.`, found, array.sizeFound);
        }
      }
      return verdict("inconclusive", `No local array shows signs of an overrun${c.cite(found)}.`, found);
    },
  };
  const callee: PlannedHypothesis = {
    rule: "caller-buffer-overflow",
    statement: "a buffer passed down from a caller overflowed, not one of the culprit's own",
    plan: [[BACKTRACE]],
    judge(evidence) {
      const { found: bt, frames } = backtraceOf(evidence, facts);
      const checker = frames.find((f) => f.function && /stack_chk_fail/.test(f.function));
      const caller = checker ? frames[checker.level + 1] : undefined;
      if (caller && facts.culprit && caller.level === facts.culpritLevel) {
        return verdict("rejected", `__stack_chk_fail was called from ${where(facts.culprit)} itself${new Citations().cite(bt)}: it is that function's own canary, so the overrun buffer is in its own frame.`, bt);
      }
      return verdict("inconclusive", "The frame that called __stack_chk_fail is not the culprit.", bt);
    },
  };
  return {
    hypotheses: [overflow, callee],
    investigate(rule, evidence) {
      if (rule !== "local-array-overflow") return [];
      const writes = arrays(evidence).flatMap((a) => writesInto(facts, a.name)).slice(0, 3);
      return notYetRun(evidence, [...writes.map((n) => facts.list(n)), facts.inCulprit(probes.arguments()), facts.inCaller(probes.locals())]);
    },
    conclude: concludeOn(facts, ["local-array-overflow"], "which local buffer overflowed", ({ evidence, hit }, c) => {
      const writes = arrays(evidence).flatMap((a) => writesInto(facts, a.name).map((n) => ({ name: a.name, n }))).slice(0, 3);
      const quoted = writes.map((w) => ({ ...w, found: evidence.find(facts.list(w.n)) })).filter((w) => w.found?.ok);
      const args = evidence.find(facts.inCulprit(probes.arguments()));
      const summary = `${where(facts.culprit)} overran a local buffer; the stack protector found its canary overwritten when the function returned${c.cite(evidence.find(ABORT_MESSAGE))}: ${hit.finding ?? ""}`;
      return {
        summary,
        cause: [
          quoted.length ? `The writes into it: ${quoted.map((w) => `\`${listedCode(w.found)}\` at ${basename(facts.culprit?.file ?? "")}:${w.n}${c.cite(w.found)}`).join("; ")} — none is bounded by the array's size.` : "",
          variablesText(args) ? `The input was: ${variablesText(args)}${c.cite(args)}.` : "",
        ],
        confidence: 0.85,
        recommendations: [
          `Bound the copy into the array by its size (and reserve room for the NUL), or reject input longer than it; snprintf/strlcpy-style copies make the limit explicit.`,
          "Add a test with an over-long value; AddressSanitizer reports such a write at the line that does it.",
        ],
      };
    }),
    openQuestions: [
      { text: "The dump shows the overrun, not whether the over-long input is legitimate.", question: "What is the longest legitimate value for this field, and where should longer ones be rejected?" },
      { text: "Whether an attacker controls this input cannot be seen in a core.", question: "Can someone outside the program choose this input (a file, the network, a command line)? If so, treat this as a security issue." },
    ],
  };
}

/** Arrays the culprit's function declares (`char username[16];`), from its source. */
function localArrays(facts: Facts): string[] {
  if (!facts.fn || facts.culprit?.line == null) return [];
  const span = functionSpan(facts.source, facts.fn, facts.culprit.line);
  if (!span || !facts.source) return [];
  const names: string[] = [];
  for (const n of grep(facts.source, /^\s*(?:const\s+|unsigned\s+|signed\s+|struct\s+)*\w+\s+\**\s*\w+\s*\[[^\]]*\]\s*[;=]/, span.start, span.end)) {
    const name = /(\w+)\s*\[[^\]]*\]\s*[;=]/.exec(codeOf(facts.source.lines[n - 1] ?? ""))?.[1];
    if (name) names.push(name);
  }
  return names;
}

/** Lines of the culprit's function that write into array `name` (indexing, or as a copy's destination). */
function writesInto(facts: Facts, name: string): number[] {
  if (!facts.fn || facts.culprit?.line == null) return [];
  const span = functionSpan(facts.source, facts.fn, facts.culprit.line);
  if (!span) return [];
  const n = escape(name);
  return grep(facts.source, new RegExp(`\\b${n}\\s*\\[[^\\]]*\\]\\s*=(?!=)|\\b(strcpy|strcat|memcpy|sprintf|gets|strncpy|read)\\s*\\(\\s*${n}\\b`), span.start, span.end);
}

export function fortifyPlaybook(facts: Facts): Playbook {
  const checked = (evidence: Evidence) => {
    const { found: bt, frames } = backtraceOf(evidence, facts);
    const frame = frames.find((f) => f.function && /^__\w+_chk$/.test(f.function) && !/^__(fortify_fail|chk_fail)$/.test(f.function));
    if (!frame) return null;
    const destlen = /destlen=(?:destlen@entry=)?(\d+)/.exec(frame.args)?.[1];
    const src = /src=(?:src@entry=)?0x[0-9a-f]+ ("(?:[^"\\]|\\.)*")/.exec(frame.args)?.[1];
    const length = /\blen=(?:len@entry=)?(\d+)/.exec(frame.args)?.[1];
    return { bt, name: frame.function ?? "", destlen: destlen ? Number(destlen) : null, src: src ? stringOf(src) : null, length: length ? Number(length) : null };
  };
  const call = /\b(str(?:n)?cpy|str(?:n)?cat|memcpy|memmove|memset|sprintf|snprintf|gets|read)\s*\(\s*([^,]+),/.exec(codeOf(facts.line ?? ""));
  const destination = call?.[2]?.trim() ?? null;
  const destBase = destination?.replace(/\s*\+\s*\d+$/, "") ?? null;
  const sizeCommand = destBase ? facts.inCulprit(probes.evaluate(`sizeof ${destBase}`)) : null;

  const overflow: PlannedHypothesis = {
    rule: "fortified-overflow",
    statement: `the fortified \`${call?.[1] ?? "string/memory call"}\` in ${where(facts.culprit)} would have written past ${destination ? `\`${destination}\`` : "its destination"}`,
    plan: [[BACKTRACE, sizeCommand].filter((c) => c !== null)],
    judge(evidence) {
      const chk = checked(evidence);
      const c = new Citations();
      if (!chk) return verdict("inconclusive", "No _chk frame with its arguments is in the backtrace.", evidence.find(BACKTRACE));
      const need = chk.src !== null ? Buffer.byteLength(chk.src) + 1 : chk.length;
      if (chk.destlen !== null && need !== null && need > chk.destlen) {
        const what = chk.src !== null ? `the source string "${chk.src}" needs ${need} bytes with its NUL` : `it was asked for ${need} bytes`;
        return verdict("confirmed", `\`${chk.name}\` got destlen = ${chk.destlen}${c.cite(chk.bt)}, and ${what}.`, chk.bt);
      }
      return verdict("inconclusive", `\`${chk.name}\` was called${c.cite(chk.bt)}, but its length arguments were optimized out.`, chk.bt);
    },
  };
  const falseAlarm: PlannedHypothesis = {
    rule: "wrong-object-size",
    statement: "the compiler's idea of the destination's size was wrong, so the check fired on a write that fits",
    plan: [[sizeCommand ?? BACKTRACE]],
    judge(evidence) {
      const chk = checked(evidence);
      const size = sizeCommand ? evidence.find(sizeCommand) : null;
      const total = integerOf(printed(size));
      const offset = Number(/\+\s*(\d+)$/.exec(destination ?? "")?.[1] ?? 0);
      const c = new Citations();
      if (chk?.destlen != null && total !== null && Number(total) - offset === chk.destlen) {
        return verdict("rejected", `\`${destBase}\` is ${total} bytes${c.cite(size)}; minus the ${offset} already used that leaves ${chk.destlen}, exactly the destlen the check used${c.cite(chk.bt)}.`, size, chk.bt);
      }
      return verdict("inconclusive", "The destination's size could not be compared with the check's.", size);
    },
  };
  return {
    hypotheses: [overflow, falseAlarm],
    investigate: deeperProbes([facts.culpritListing, facts.inCulprit(probes.arguments()), facts.callerListing]),
    conclude: concludeOn(facts, ["fortified-overflow"], "which write the fortify check stopped", ({ evidence, hit }, c) => {
      const line = evidence.find(facts.culpritListing);
      const summary = `_FORTIFY_SOURCE stopped a buffer overflow in ${where(facts.culprit)}${c.cite(evidence.find(ABORT_MESSAGE))}: ${hit.finding ?? ""}`;
      return {
        summary,
        cause: [line?.ok ? `The call is \`${listedCode(line)}\`${c.cite(line)}: it copies without a bound.` : "", `The long value arrives on the path ${callPath(facts)}.`],
        confidence: 0.85,
        recommendations: [
          `Size \`${destBase ?? "the destination"}\` for the longest legitimate value, and copy with an explicit bound (snprintf, or check the length first and reject).`,
          "Keep building with -D_FORTIFY_SOURCE: it turned a silent overflow into this crash.",
        ],
      };
    }),
    openQuestions: [{ text: "The core cannot say whether such long values are legitimate.", question: "What is the longest value this field must hold?" }],
  };
}

/** The values of `expressions` the evidence holds, cited: each asked as `probe(expression)`. */
function shownValues(evidence: Evidence, expressions: string[], probe: (e: string) => ProbeOf<"evaluate">, c: Citations): { text: string; found: Found[] } {
  const shown = expressions.flatMap((e) => {
    const found = evidence.find(probe(e));
    return found && printed(found) !== null ? [{ e, found }] : [];
  });
  return { text: shown.map((v) => `\`${v.e}\` = ${printed(v.found)}${c.cite(v.found)}`).join(", "), found: shown.map((v) => v.found) };
}

/** A recorded check's comparison on the arguments the backtrace shows its checker was called with. */
function checkerValues(evidence: Evidence, facts: Facts, recorded: { check: string; checker: string }): { left: bigint; op: string; right: bigint; text: string; found: Found | null } | null {
  const split = comparison(recorded.check);
  const { found, frames } = backtraceOf(evidence, facts);
  const frame = frames.find((f) => f.level < facts.culpritLevel && f.function !== null && normalizeFunctionName(f.function) === recorded.checker);
  if (!split || !frame) return null;
  const args = parseArgs(frame.args);
  const value = (side: string) => literalOf(side) ?? integerOf(args.get(side) ?? null);
  const left = value(split.left);
  const right = value(split.right);
  if (left === null || right === null) return null;
  const text = [split.left, split.right].filter((side) => args.has(side)).map((side) => `\`${side}\` = ${args.get(side)}`).join(", ");
  return { left, op: split.op, right, text, found };
}
