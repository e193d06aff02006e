/** Execution jumped to an address that is not code: a call through a NULL or stale function pointer, or a smashed return. */
import { probeKey, probes, type Probe } from "../../debuggers/probe.js";
import type { Evidence } from "../evidence.js";
import { concludeOn } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { Citations, notYetRun, verdict, type Playbook, type PlannedHypothesis } from "./kit.js";
import { listing, originsOf } from "./origins.js";
import { NULL_PAGE } from "./pointers.js";
import { where } from "./prose.js";
import { dereferences } from "./source.js";
import { hex, pointerOf, printed } from "./values.js";

/** x86-64 user addresses: bits 47..63 all equal (and user space keeps them 0). */
function canonical(address: bigint): boolean {
  const high = address >> 47n;
  return high === 0n || high === 0x1ffffn;
}

export function badJumpPlaybook(facts: Facts): Playbook {
  const callSite = facts.culprit;
  const pc = facts.triage.registers.pc;
  const calls = dereferences(facts.line ?? "")
    .map((d) => ({ ...d, callee: new RegExp(`${d.pointer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*->\\s*${d.member}\\s*\\(`).test(facts.line ?? "") }))
    .filter((d) => d.callee);
  const target = calls[0] ? `${calls[0].pointer}->${calls[0].member}` : null;
  const disassemble = facts.inCulprit(probes.disassemble());
  // A NULL handler jumps to 0; anything else in the pointer is garbage: freed and reused memory,
  // an uninitialised field, or a corrupted object.
  // A general-protection fault leaves the pc on the call itself: the target was not even a
  // canonical address, and only the pointer's own value shows it.
  const generalProtection = facts.crash.signalCode === "SI_KERNEL";
  const jumpedToNull = !generalProtection && (pc === null || BigInt(pc) < NULL_PAGE);
  const held = jumpedToNull ? "which was NULL" : generalProtection ? "which held garbage, not even a valid address" : `which held ${pc}, not the address of any code`;

  const callThrough = (evidence: Evidence) => {
    const found = evidence.find(disassemble);
    if (!found?.reading || !callSite?.address) return null;
    const code = found.reading.instructions;
    const back = code.findIndex((insn) => insn.address === callSite.address);
    const previous = back > 0 ? code[back - 1] : undefined;
    return previous && /^call/.test(previous.mnemonic) ? { found, instruction: `${previous.mnemonic} ${previous.operands.join(",")}` } : null;
  };

  const nullFunction: PlannedHypothesis = {
    rule: "null-function-pointer",
    statement: target
      ? `${where(callSite)} called through the function pointer \`${target}\`, ${held}`
      : `${where(callSite)} called through a function pointer that was NULL or invalid`,
    plan: [[...(target ? [facts.inCulprit(probes.evaluate(target)), facts.inCulprit(probes.evaluate(`*${calls[0]?.pointer}`))] : []), disassemble]],
    judge(evidence) {
      const value = target ? evidence.find(facts.inCulprit(probes.evaluate(target))) : null;
      const call = callThrough(evidence);
      const c = new Citations();
      const callText = call ? ` The instruction before the return address in ${where(callSite)} is \`${call.instruction}\`${c.cite(call.found)}: an indirect call.` : "";
      const pointer = pointerOf(printed(value));
      if (pointer !== null && pc !== null && pointer === BigInt(pc)) {
        return verdict("confirmed", `\`${target}\` was ${printed(value)}${c.cite(value)}, the pc the process jumped to.${callText}`, value, call?.found);
      }
      if (generalProtection && pointer !== null && !canonical(pointer)) {
        return verdict("confirmed", `\`${target}\` was ${printed(value)}${c.cite(value)}: not a canonical address, so the call itself faulted (SI_KERNEL) at \`${facts.triage.instruction ?? "the call"}\`.`, value);
      }
      if (pointer !== null) return verdict("rejected", `\`${target}\` is ${hex(pointer)}${c.cite(value)}, not the pc ${pc}.`, value);
      if (call) return verdict("confirmed", `The jump came from a call: ${callText.trim()}`, call.found);
      return verdict("inconclusive", "Neither the function pointer nor the call instruction could be read.", value);
    },
  };
  const smashedReturn: PlannedHypothesis = {
    rule: "smashed-return",
    statement: `a corrupted return address on the stack sent \`ret\` to ${generalProtection ? "a bad address" : (pc ?? "the bad address")}`,
    plan: [[disassemble]],
    judge(evidence) {
      if (generalProtection && /^call/.test(facts.triage.instruction ?? "")) {
        return verdict("rejected", `The process stopped on the call itself (\`${facts.triage.instruction}\` in ${where(callSite)})${new Citations().cite(evidence.find(facts.fault.instruction))}: no \`ret\` was involved.`, evidence.find(facts.fault.instruction));
      }
      const call = callThrough(evidence);
      if (call) return verdict("rejected", `The frame that led to the bad pc ends in \`${call.instruction}\`${new Citations().cite(call.found)}: the process arrived there by a call, not by returning through a smashed stack.`, call.found);
      return verdict("inconclusive", "The caller's code around its return address could not be read.", evidence.find(disassemble));
    },
  };

  return {
    hypotheses: [nullFunction, smashedReturn],
    investigate(rule, evidence) {
      if (rule !== "null-function-pointer") return [];
      const member = calls[0]?.member;
      const stores = member
        ? distinct([...originsOf(facts, `${calls[0]?.pointer}->${member}`, true).map(listing), ...initializerLines(facts).map((line) => facts.list(line))])
        : [];
      return notYetRun(evidence, [facts.list(callSite?.line ?? 0), facts.inCulprit(probes.locals()), ...stores]);
    },
    conclude: concludeOn(facts, ["null-function-pointer"], "how the program jumped to the bad address", ({ evidence, hit }, c) => {
      const owner = calls[0] ? evidence.find(facts.inCulprit(probes.evaluate(`*${calls[0].pointer}`))) : null;
      const ownerValue = printed(owner);
      const entries = initializerLines(facts).flatMap((line) => {
        const probe = facts.list(line);
        const found = probe ? evidence.find(probe) : null;
        return found?.ok ? [found] : [];
      });
      const table = entries.length ? ` The table entry is defined without a handler: ${entries.map((e) => `\`${(e.reading ?? []).map((l) => l.text).join("\n").trim()}\`${c.cite(e)}`).join(", ")}.` : "";
      const targetValue = target ? evidence.find(facts.inCulprit(probes.evaluate(target))) : null;
      const shown = printed(targetValue);
      const heldValue = generalProtection && shown ? `which held ${pointerOf(shown) !== null ? hex(pointerOf(shown) ?? 0n) : shown}, not even a valid address` : held;
      const summary = jumpedToNull
        ? `${where(callSite)} called \`${target ?? "a function pointer"}\`, which was NULL${c.cite(targetValue)}, so execution jumped to address 0 and faulted${c.cite(evidence.find(facts.fault.record))}.`
        : `${where(callSite)} called \`${target ?? "a function pointer"}\`, ${heldValue}${c.cite(targetValue)}, so ${generalProtection ? "the call" : "execution jumped there and"} faulted${c.cite(evidence.find(facts.fault.record))}: the object ${calls[0] ? `behind \`${calls[0].pointer}\` ` : ""}was not a live, initialised one (freed and reused, never set up, or overwritten).`;
      return {
        summary,
        cause: [hit.finding ?? "", ownerValue ? `The object it came from is ${ownerValue}${c.cite(owner)}.` : "", table],
        confidence: 0.9,
        recommendations: jumpedToNull
          ? [
              `Check \`${target ?? "the function pointer"}\` for NULL before calling it in \`${facts.fn}\`, and answer the request with an error instead.`,
              "Fill in every table entry (or reject incomplete ones at start-up), so a missing handler is found before a request reaches it.",
            ]
          : [
              `Find where ${calls[0] ? `\`${calls[0].pointer}\`` : "the object"} stops being valid before \`${facts.fn}\` uses it: a free that leaves the pointer in place, or a missing initialisation.`,
              "Run the failing input under AddressSanitizer, which reports a use after free with the stacks of the free and of the use.",
            ],
      };
    }),
    openQuestions: [
      jumpedToNull
        ? { text: "The dump shows the NULL handler, not whether it is a missing feature or a registration that failed at run time.", question: `Is the entry behind \`${target ?? "this function pointer"}\` meant to have a handler, or should the request be rejected?` }
        : { text: "The dump shows the garbage pointer, not when the object behind it was freed or overwritten.", question: `Who frees or reuses the object behind \`${calls[0]?.pointer ?? "this pointer"}\`, and can it happen while \`${facts.fn}\` still holds it?` },
      { text: "Which input reached this entry is not in the dump.", question: "Which input or caller reached this entry, and since when?" },
    ],
  };

  /** Brace initializers with a NULL member in the culprit's file: tables of handlers. */
  function initializerLines(f: Facts): number[] {
    if (!f.source) return [];
    const hits: number[] = [];
    f.source.lines.forEach((text, i) => {
      if (/\{[^{}]*\b(NULL|nullptr)\s*\}/.test(text)) hits.push(i + 1);
    });
    return hits.slice(0, 3);
  }
}

/** The probes without repeats, each where it first appears. */
function distinct<P extends Probe>(list: (P | null)[]): (P | null)[] {
  const seen = new Set<string>();
  return list.filter((probe) => {
    const key = probe === null ? "null" : probeKey(probe);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
