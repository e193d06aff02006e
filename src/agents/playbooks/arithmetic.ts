/** Traps raised by the CPU on an instruction: integer division by zero, an illegal (trap) instruction. */
import { fullRegister } from "../../analyzers/index.js";
import { probes } from "../../debuggers/probe.js";
import type { Evidence } from "../evidence.js";
import type { Facts } from "./facts.js";
import { Citations, confirmed, deeperProbes, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { concludeOn, conclusion, undetermined } from "./conclusions.js";
import { listedCode } from "./origins.js";
import { callPath, quoteLine, where } from "./prose.js";
import { codeOf, enclosingFunction, grep } from "./source.js";
import { integerOf, printed, registersOf } from "./values.js";

/** The divisor of the first `/` or `%` on a line: `stats->total_ms / stats->requests` → `stats->requests`. */
function divisor(line: string | null): string | null {
  const match = /[^/*]\s*[/%]\s*(\(?[A-Za-z_][\w]*(?:\s*(?:->|\.)\s*\w+|\[[^\]]*\])*\)?)/.exec(codeOf(line ?? ""));
  return match?.[1]?.replace(/\s+/g, "") ?? null;
}

/** The dividend of the first `/` or `%` on a line: `raw / divisor` → `raw`. */
function dividend(line: string | null): string | null {
  const match = /([A-Za-z_]\w*(?:\s*(?:->|\.)\s*\w+|\[[^\]]*\])*)\s*[/%]\s*[^/*=]/.exec(codeOf(line ?? ""));
  return match?.[1]?.replace(/\s+/g, "") ?? null;
}

export function divisionPlaybook(facts: Facts): Playbook {
  const expression = divisor(facts.line);
  const print = expression ? facts.inCulprit(probes.evaluate(expression)) : null;
  const numerator = dividend(facts.line);
  const printNumerator = numerator ? facts.inCulprit(probes.evaluate(numerator)) : null;
  const register = /^i?div\w*\s+%(\w+)/.exec(facts.triage.instruction ?? "")?.[1] ?? null;
  const divisorRegister = (evidence: Evidence) => {
    const found = evidence.find(facts.fault.registers);
    const value = register ? registersOf(found).get(fullRegister(register)) : undefined;
    return { found, value };
  };
  const zero: PlannedHypothesis = {
    rule: "zero-divisor",
    statement: `${expression ? `\`${expression}\`` : "the divisor"} was 0 when ${where(facts.culprit)} divided by it`,
    plan: [[print, facts.fault.instruction, facts.fault.registers].filter((p) => p !== null)],
    judge(evidence) {
      const found = print ? evidence.find(print) : null;
      const value = integerOf(printed(found));
      const reg = divisorRegister(evidence);
      const c = new Citations();
      const regText = reg.value !== undefined ? ` The instruction \`${facts.triage.instruction}\`${c.cite(evidence.find(facts.fault.instruction))} divides by %${register}, which is ${reg.value}${c.cite(reg.found)}.` : "";
      if (value === 0n || (value === null && reg.value === 0n)) {
        return verdict("confirmed", `${value === 0n ? `\`${expression}\` was 0${c.cite(found)}.` : ""}${regText}`.trim(), found, evidence.find(facts.fault.instruction), reg.found);
      }
      if (value !== null) return verdict("rejected", `\`${expression}\` is ${value}${c.cite(found)}, not 0.`, found);
      return verdict("inconclusive", "Neither the divisor nor its register could be read.", found);
    },
  };
  const overflow: PlannedHypothesis = {
    rule: "int-min-overflow",
    statement: "the division overflowed (INT_MIN / -1), which x86 reports the same way",
    plan: [[facts.fault.registers, print, printNumerator].filter((p) => p !== null)],
    judge(evidence) {
      const reg = divisorRegister(evidence);
      const c = new Citations();
      const found = print ? evidence.find(print) : null;
      const value = integerOf(printed(found));
      const top = printNumerator ? evidence.find(printNumerator) : null;
      const topValue = integerOf(printed(top));
      const dividendText = topValue !== null ? ` and \`${numerator}\` is ${topValue}${c.cite(top)}, the most negative value of its type` : "";
      if (value === -1n) return verdict("confirmed", `\`${expression}\` is -1${c.cite(found)}${dividendText}: the quotient does not fit, and x86 raises the divide error for it as for a zero divisor.`, found, top);
      if (value !== null) return verdict("rejected", `\`${expression}\` is ${value}${c.cite(found)}, not -1.`, found);
      if (reg.value === 0n) return verdict("rejected", `The divisor register %${register} is 0${c.cite(reg.found)}, not -1.`, reg.found);
      if (reg.value === 0xffffffffffffffffn || reg.value === 0xffffffffn) return verdict("confirmed", `The divisor register %${register} is -1${c.cite(reg.found)}.`, reg.found);
      return verdict("inconclusive", "The divisor register could not be read.", reg.found);
    },
  };
  const owner = expression?.includes("->") ? expression.slice(0, expression.lastIndexOf("->")) : null;
  return {
    hypotheses: [zero, overflow],
    investigate: deeperProbes([facts.culpritListing, owner ? facts.inCulprit(probes.evaluate(`*${owner}`)) : facts.inCulprit(probes.locals()), facts.inCaller(probes.locals()), facts.callerListing]),
    conclude(hypotheses, evidence) {
      const overflowed = confirmed(hypotheses, "int-min-overflow");
      if (overflowed) {
        const c = new Citations();
        return conclusion({ facts, evidence, hypotheses, hit: overflowed }, c, {
          summary: `${where(facts.culprit)} divided the most negative integer by -1: ${quoteLine(facts.line) ?? "the division"} overflowed, and the CPU reports that as SIGFPE "integer divide by zero"${c.cite(evidence.find(facts.fault.record))}; the divisor was not 0.`,
          cause: [overflowed.finding ?? "", `Nothing on the path ${callPath(facts)} rules out a divisor of -1 with that dividend.`],
          withCaller: true,
          confidence: 0.85,
          recommendations: [
            `Check for a divisor of -1 with the minimum dividend in \`${facts.fn}\` (or divide in a wider type), and reject or clamp the value where it enters the program.`,
            "Add a test with the minimum value and -1, and build the tests with -fsanitize=undefined, which names the overflow.",
          ],
        });
      }
      const hit = confirmed(hypotheses, "zero-divisor");
      if (!hit) return undetermined(facts, hypotheses, evidence, "what the divisor was");
      const c = new Citations();
      const record = owner ? evidence.find(facts.inCulprit(probes.evaluate(`*${owner}`))) : null;
      const summary = `${where(facts.culprit)} divided by ${expression ? `\`${expression}\`` : "a value"}, which was 0${c.cite(print ? evidence.find(print) : null)}: ${quoteLine(facts.line) ?? "the division"} raised SIGFPE (integer divide by zero)${c.cite(evidence.find(facts.fault.record))}.`;
      return conclusion({ facts, evidence, hypotheses, hit }, c, {
        summary,
        cause: [
          hit.finding ?? "",
          record?.ok ? `The record being processed is ${printed(record)}${c.cite(record)}.` : "",
          `Nothing on the path ${callPath(facts)} checks for a zero divisor.`,
        ],
        withCaller: true,
        confidence: 0.9,
        recommendations: [
          `Check ${expression ? `\`${expression}\`` : "the divisor"} for 0 in \`${facts.fn}\` and decide what the result means then (skip, report 0, or "n/a").`,
          "Add a test with an empty record (a count of zero).",
        ],
      });
    },
    openQuestions: [{ text: "Whether a zero count is valid input is a question about the data, not the dump.", question: "Can this count legitimately be zero (nothing counted yet), and what should be reported then?" }],
  };
}

export function illegalInstructionPlaybook(facts: Facts): Playbook {
  const line = facts.culprit?.line ?? null;
  const fn = line === null ? null : enclosingFunction(facts.source, line);
  const switchLine = fn && line !== null ? grep(facts.source, /\bswitch\s*\(/, fn.span.start, line).at(-1) ?? null : null;
  const switchExpr = switchLine === null ? null : /\bswitch\s*\((.*)\)\s*\{?\s*$/.exec(codeOf(facts.source?.lines[switchLine - 1] ?? ""))?.[1]?.trim() ?? null;
  const print = switchExpr ? facts.inCulprit(probes.evaluate(switchExpr)) : null;
  const trap: PlannedHypothesis = {
    rule: "trap-reached",
    statement: `${where(facts.culprit)} reached a trap the compiler emitted for code marked unreachable (\`__builtin_trap\`/\`ud2\`)${switchExpr ? `: \`switch (${switchExpr})\` got a value it has no case for` : ""}`,
    plan: [[facts.fault.instruction, facts.culpritListing, print].filter((p) => p !== null)],
    judge(evidence) {
      const insn = evidence.find(facts.fault.instruction);
      const code = evidence.find(facts.culpritListing);
      const value = print ? evidence.find(print) : null;
      const c = new Citations();
      if (insn?.reading?.instructions.some((i) => i.mnemonic === "ud2")) {
        const source = code?.ok ? ` The source line is \`${listedCode(code)}\`${c.cite(code)}.` : "";
        const chosen = printed(value) !== null ? ` \`${switchExpr}\` is ${printed(value)}${c.cite(value)}.` : "";
        return verdict("confirmed", `The instruction at the pc is \`ud2\`${c.cite(insn)}, the trap the compiler emits for __builtin_trap and unreachable code.${source}${chosen}`, insn, code, value);
      }
      return verdict("inconclusive", `The instruction at the pc is not a trap${c.cite(insn)}.`, insn);
    },
  };
  const corrupt: PlannedHypothesis = {
    rule: "bad-code",
    statement: "the pc landed in data or corrupted code",
    plan: [[facts.fault.instruction]],
    judge(evidence) {
      const insn = evidence.find(facts.fault.instruction);
      if (insn?.reading?.instructions.some((i) => i.location !== null && /\+\d+$/.test(i.location))) return verdict("rejected", `The pc is inside a function of the program${new Citations().cite(insn)}, at an instruction the compiler put there.`, insn);
      return verdict("inconclusive", "The pc is not inside a known function.", insn);
    },
  };
  return {
    hypotheses: [trap, corrupt],
    investigate: deeperProbes([switchLine === null ? null : facts.list(switchLine), facts.inCulprit(probes.arguments()), facts.inCaller(probes.locals()), facts.callerListing]),
    conclude: concludeOn(facts, ["trap-reached"], "why an illegal instruction ran", ({ evidence, hit }, c) => {
      const value = print ? printed(evidence.find(print)) : null;
      const summary = `${where(facts.culprit)} executed a deliberate trap (\`ud2\`)${value !== null ? `: \`${switchExpr}\` was ${value}${c.cite(print ? evidence.find(print) : null)}, a value its switch has no case for, and the default branch traps` : ""}.`;
      return {
        summary,
        cause: [hit.finding ?? "", `The input reached it on the path ${callPath(facts)}.`],
        withCaller: true,
        confidence: 0.9,
        recommendations: [
          `Handle unknown values in \`${facts.fn}\` (reject the message with an error) instead of trapping: input from outside the program is never "unreachable".`,
          "If newer peers may send new types, version the protocol or ignore unknown types explicitly.",
        ],
      };
    }),
    openQuestions: [{ text: "Where the value came from is not in the core.", question: "Which input or caller supplies this value, and should the program accept or reject it?" }],
  };
}
