/** A read or write through a NULL pointer: which pointer, where it became NULL, and who passed it. */
import { memoryOperand, normalizeFunctionName } from "../../analyzers/index.js";
import { probes } from "../../debuggers/probe.js";
import type { Evidence } from "../evidence.js";
import { concurrencyQuestion, conclusion, undetermined } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { Citations, confirmed, notYetRun, verdict, type Playbook, type PlannedHypothesis } from "./kit.js";
import { listing, originsOf, originStory, quotedOrigins } from "./origins.js";
import { faultingBase, isRust, memberAddress, NULL_PAGE, suspects, type Suspect } from "./pointers.js";
import { argumentOrdinal, basename, callPath, location, quoteLine, where } from "./prose.js";
import type { Hypothesis } from "../../state.js";
import { hex, looksPoisoned, pointerOf, printed } from "./values.js";

export function nullDereferencePlaybook(facts: Facts): Playbook {
  const fault = facts.crash.faultAddress === null ? null : BigInt(facts.crash.faultAddress);
  const verb = facts.crash.access === "write" ? "wrote" : "read";
  const at = location(facts.culprit);
  const list = suspects(facts);
  const siginfo = (evidence: Evidence) => evidence.find(facts.fault.record);

  const nullPointer = (suspect: Suspect): PlannedHypothesis => ({
    rule: `null:${suspect.pointer}`,
    statement: suspect.passedTo
      ? `\`${suspect.pointer}\` was NULL when ${where(facts.culprit)} passed it to \`${suspect.passedTo}\``
      : `\`${suspect.pointer}\` was NULL when ${where(facts.culprit)} ${verb} ` + (suspect.member ? `its \`${suspect.member}\` field` : "through it"),
    plan: [
      [facts.inCulprit(probes.evaluate(suspect.pointer)), memberAddress(facts, suspect), facts.inCulprit(probes.disassemble())].filter((p) => p !== null),
      [facts.inCulprit(probes.registers())],
    ],
    judge(evidence) {
      const value = evidence.find(facts.inCulprit(probes.evaluate(suspect.pointer)));
      const pointer = pointerOf(printed(value));
      const address = memberAddress(facts, suspect);
      const offset = address ? evidence.find(address) : null;
      const base = faultingBase(facts, evidence);
      const offsetMatches = fault !== null && pointerOf(printed(offset)) === fault;
      const registerText = base && base.value === 0n
        ? ` The faulting instruction reads through ${base.register}${base.displacement ? ` at offset ${hex(base.displacement)}` : ""}${new Citations().cite(base.instruction)}, and ${base.register} is 0${new Citations().cite(base.registers)}.`
        : "";
      if (pointer === 0n) {
        const offsetText = offsetMatches && suspect.member
          ? ` \`&${suspect.pointer}->${suspect.member}\` is ${hex(fault ?? 0n)}, exactly the fault address${new Citations().cite(offset, siginfo(evidence))}: the access to \`${suspect.member}\` through NULL is what faulted.`
          : "";
        return verdict("confirmed", `\`${suspect.pointer}\` was ${printed(value)}${new Citations().cite(value)}.${offsetText}${registerText}`, value, offsetMatches ? offset : null, offsetMatches ? siginfo(evidence) : null, registerText ? base?.instruction : null, registerText ? base?.registers : null);
      }
      if (pointer !== null) {
        return verdict("rejected", `\`${suspect.pointer}\` was ${printed(value)}${new Citations().cite(value)}, not NULL: the fault came through another pointer.`, value);
      }
      if (list.length === 1 && base?.value === 0n) {
        return verdict("confirmed", `The debugger could not evaluate \`${suspect.pointer}\` here, but it is the only pointer the line reads through, and${registerText.replace(/^ The/, " the")}`, base.instruction, base.registers);
      }
      return verdict("inconclusive", `The debugger could not evaluate \`${suspect.pointer}\` in this frame${new Citations().cite(value)}, and the registers do not single it out.`, value);
    },
  });

  const stale: PlannedHypothesis = {
    rule: "stale-pointer",
    statement: `the pointer was not NULL but stale or garbage (freed memory or an uninitialised value)`,
    plan: [[facts.fault.record, facts.fault.registers]],
    judge(evidence) {
      const info = siginfo(evidence);
      if (fault === null || !info) return verdict("inconclusive", "The dump records no fault address to tell a NULL access from a wild one.", info);
      const base = faultingBase(facts, evidence);
      if (fault < NULL_PAGE) {
        const register = base?.value === 0n ? ` and the base register ${base.register} is 0${new Citations().cite(base.registers)}` : "";
        return verdict(
          "rejected",
          `The fault address ${hex(fault)}${new Citations().cite(info)} is in the first page, which is never mapped${register}: that is NULL plus a field offset, not a freed or garbage address, which would point into the heap or anywhere else.`,
          info,
          register ? base?.registers : null,
        );
      }
      return verdict("confirmed", `The fault address ${hex(fault)}${new Citations().cite(info)} is outside the NULL page.`, info);
    },
  };

  const top = list[0] ?? null;
  const storesNull = top ? originsOf(facts, top.pointer, true).filter((o) => o.kind === "null-store" || o.kind === "callee-return") : [];
  const corrupted: PlannedHypothesis | null = top?.owner
    ? {
        rule: "corrupted-owner",
        statement: `a stray write corrupted \`*${top.owner}\` and zeroed \`${top.pointer.slice(top.owner.length + 2)}\``,
        plan: [[facts.inCulprit(probes.evaluate(`*${top.owner}`)), ...storesNull.map(listing)]],
        judge(evidence) {
          const owner = evidence.find(facts.inCulprit(probes.evaluate(`*${top.owner}`)));
          const value = printed(owner);
          if (value === null) return verdict("inconclusive", `The debugger could not print \`*${top.owner}\`${new Citations().cite(owner)}.`, owner);
          const garbage = [...value.matchAll(/0x[0-9a-f]{6,}/g)].map((m) => BigInt(m[0])).some(looksPoisoned);
          const stores = quotedOrigins(storesNull, evidence);
          if (!garbage && stores.length > 0) {
            const c = new Citations();
            return verdict(
              "rejected",
              `The rest of \`*${top.owner}\` is intact: ${value}${c.cite(owner)}; and the program itself stores NULL there: \`${stores[0]?.code}\` at ${basename(stores[0]?.file ?? "")}:${stores[0]?.line}${c.cite(stores[0]?.evidence)}. No corruption is needed to explain the NULL.`,
              owner,
              stores[0]?.evidence,
            );
          }
          if (garbage) return verdict("confirmed", `\`*${top.owner}\` holds fill-pattern values: ${value}${new Citations().cite(owner)}.`, owner);
          return verdict("inconclusive", `\`*${top.owner}\` looks intact (${value})${new Citations().cite(owner)}, but no line of the source stores NULL into it, so a stray write cannot be ruled out.`, owner);
        },
      }
    : null;

  const nullSource = storesNull[0] ?? null;
  const hypotheses = [...list.slice(0, 1).map(nullPointer), stale, ...(corrupted ? [corrupted] : []), ...list.slice(1).map(nullPointer)];
  if (list.length === 0) hypotheses.unshift(facts.triage.faultIn?.argument ? nullArgument(facts) : registerOnly(facts));

  return {
    hypotheses,
    investigate(rule, evidence) {
      const suspect = list.find((s) => rule === `null:${s.pointer}`);
      if (!suspect) return [];
      const origins = originsOf(facts, suspect.pointer, true);
      return notYetRun(evidence, [
        facts.culpritListing,
        ...origins.map(listing),
        facts.inCaller(probes.locals()),
        facts.inCaller(probes.arguments()),
        suspect.owner ? facts.inCulprit(probes.evaluate(`*${suspect.owner}`)) : null,
      ]);
    },
    conclude(hypotheses, evidence) {
      const c = new Citations();
      const passed = confirmed(hypotheses, "null-argument");
      if (passed) return nullArgumentConclusion(facts, hypotheses, evidence, passed);
      const hit = hypotheses.find((h) => h.rule?.startsWith("null:") && h.status === "confirmed") ?? confirmed(hypotheses, "null-register");
      const suspect = list.find((s) => hit?.rule === `null:${s.pointer}`) ?? null;
      const info = siginfo(evidence);
      if (!hit) return undetermined(facts, hypotheses, evidence, "which pointer was NULL");
      const base = faultingBase(facts, evidence);
      const name = suspect ? `\`${suspect.pointer}\`` : `the pointer in ${base?.register ?? "a register"}`;
      const value = suspect ? evidence.find(facts.inCulprit(probes.evaluate(suspect.pointer))) : null;
      const line = quoteLine(facts.line);
      const field = suspect?.member ? (isRust(facts) ? `(*${suspect.pointer}).${suspect.member}` : `${suspect.pointer}->${suspect.member}`) : null;
      const faulted = `the ${facts.crash.access ?? "access"} at ${facts.crash.faultAddress ?? "a low address"} faulted${c.cite(info)}.`;
      // Without debug info the variable cannot be named: the instruction and the register say what happened.
      const summary = suspect?.passedTo
        ? `${where(facts.culprit)} passed ${name} to \`${suspect.passedTo}\`, and ${name} was NULL${c.cite(value)}; \`${suspect.passedTo}\` ${verb} through it and ${faulted}`
        : suspect
        ? `${where(facts.culprit)} ${verb} ${field ? `\`${field}\`` : "memory"} through ${name}, which was NULL${c.cite(value)}; ${faulted}`
        : `${where(facts.culprit)} ${facts.crash.access === "write" ? "wrote to" : "read"} ${base?.operand ?? "?"} with ${base?.register ?? "the base register"} = 0${c.cite(base?.instruction, base?.registers)}: a NULL pointer plus the offset of a field; ${faulted}`;
      const origins = suspect ? quotedOrigins(originsOf(facts, suspect.pointer, true), evidence) : [];
      const story = originStory(origins, c);
      // A method called on a null object: testing `this` inside it is undefined behaviour in C++,
      // so the check belongs where the caller got the object.
      const onNullObject = suspect?.pointer === "this";
      const callerName = facts.caller?.function ? `\`${normalizeFunctionName(facts.caller.function)}\`` : "the caller";
      const callerAt = facts.caller?.file && facts.caller.line ? ` (${basename(facts.caller.file)}:${facts.caller.line})` : "";
      const cause = [
        onNullObject
          ? `${where(facts.culprit)} was called on a null object: \`this\` is NULL, so ${line ? `${line} at ${at}` : "its first member access"} faults. ${callerName}${callerAt} made the call without checking the object pointer, on the path ${callPath(facts)}.`
          : suspect?.passedTo
          ? `${line ? `At ${at}, ${line} passes ${name}` : `${where(facts.culprit)} passes ${name}`} to \`${suspect.passedTo}\` without checking it for NULL, on the path ${callPath(facts)}; \`${suspect.passedTo}\` does not accept NULL.`
          : suspect
          ? `${line ? `At ${at}, ${line} dereferences ${name}` : `${where(facts.culprit)} dereferences ${name}`} without checking it for NULL, on the path ${callPath(facts)}.`
          : `The program has no debug info, so the variable cannot be named: the faulting instruction \`${facts.triage.instruction ?? "?"}\`${c.cite(base?.instruction)} is in ${where(facts.culprit)}, on the path ${callPath(facts)}.`,
        story,
      ];
      const storeSite = origins.find((o) => o.kind === "null-store" || o.kind === "callee-return");
      const recommendations = [
        suspect?.passedTo
          ? `Check ${name} before passing it to \`${suspect.passedTo}\` in \`${facts.fn}\`${at ? ` (${at})` : ""}, or make sure it is never NULL there (and assert it).`
          : onNullObject
          ? `Check the object pointer in ${callerName}${callerAt} before calling \`${facts.fn}\` on it (testing \`this\` inside the method is undefined behaviour and compilers may remove it).`
          : suspect
          ? `Check ${name} before ${facts.crash.access === "write" ? "writing" : "reading"} \`${suspect.member ?? "through it"}\` in \`${facts.fn}\`${at ? ` (${at})` : ""}, or establish that it cannot be NULL there and assert it.`
          : `Find which pointer the instruction at the pc reads through and check it for NULL.`,
        ...(storeSite
          ? [`Make the code that produces the NULL at ${basename(storeSite.file)}:${storeSite.line} (\`${storeSite.code}\`) and its users agree: either callers handle the NULL, or it is never left where \`${facts.fn}\` can reach it.`]
          : []),
        `Add a test that drives ${callPath(facts)} into this state${facts.triage.crash.culprit.file ? "" : " and rebuild with -g so the next dump names the line"}.`,
      ];
      const confidence = value && pointerOf(printed(value)) === 0n ? 0.9 : 0.7;
      return conclusion({ facts, evidence, hypotheses, hit }, c, { summary, cause, withCaller: true, withOtherThreads: true, confidence, recommendations });
    },
    openQuestions: [
      {
        text: `The dump shows ${top ? `\`${top.pointer}\`` : "the pointer"} NULL at the crash, not which earlier event made it NULL or when.`,
        question: nullSource
          ? `\`${nullSource.function ?? "The code"}\` sets it to NULL at ${basename(nullSource.file)}:${nullSource.line}: after that, should ${facts.caller?.function ? `\`${normalizeFunctionName(facts.caller.function)}\`` : "the caller"} still be able to reach it, or should it be removed from there first?`
          : `Which event leaves ${top ? `\`${top.pointer}\`` : "this pointer"} NULL while ${callPath(facts) || "this code"} can still run — is it a normal state (e.g. a disconnect or a lookup miss) that the code must handle?`,
      },
      {
        text: "A post-mortem cannot tell whether this is the first time the NULL occurred or whether earlier calls met it and were silently affected.",
        question: "Did this start with a specific release or configuration change, and does it reproduce on demand?",
      },
      ...concurrencyQuestion(facts),
    ],
  };
}

/**
 * Without source for the caller: the fault is inside a library function (strlen in libc) whose first
 * argument register holds the NULL, so the caller passed it. The function's contract, not its code, is the story.
 */
function nullArgument(facts: Facts): PlannedHypothesis {
  const inside = facts.triage.faultIn;
  const argument = inside?.argument;
  const library = inside?.module ? ` (${basename(inside.module)})` : "";
  return {
    rule: "null-argument",
    statement: `${where(facts.culprit)} passed NULL to \`${inside?.function ?? "a library function"}\`${library} as its ${argumentOrdinal(argument?.position)} argument, and it read through it`,
    plan: [[facts.fault.registers, facts.fault.record]],
    judge(evidence) {
      const registers = evidence.find(facts.fault.registers);
      const info = evidence.find(facts.fault.record);
      const name = argument?.register.replace(/^%/, "") ?? "";
      const value = registers?.reading?.find((r) => r.name === name)?.value ?? null;
      const c = new Citations();
      if (value === null) return verdict("inconclusive", `The registers at the fault could not be read${c.cite(registers)}.`, registers);
      if (BigInt(value) >= NULL_PAGE) return verdict("rejected", `${argument?.register} is ${value}${c.cite(registers)}, not NULL.`, registers);
      return verdict("confirmed", `${argument?.register}, the ${argumentOrdinal(argument?.position)} argument of \`${inside?.function}\`, is ${hex(BigInt(value))} at the fault${c.cite(registers)}, and the fault address is ${facts.crash.faultAddress ?? "in the NULL page"}${c.cite(info)}.`, registers, info);
    },
  };
}

function nullArgumentConclusion(facts: Facts, hypotheses: Hypothesis[], evidence: Evidence, hit: Hypothesis) {
  const c = new Citations();
  const inside = facts.triage.faultIn;
  const fn = `\`${inside?.function ?? "the library function"}\`${inside?.module ? ` (${basename(inside.module)})` : ""}`;
  const packages = facts.triage.packages ?? [];
  const symbols = packages.length ? ` The debug symbols for this code are those of ${packages.map((p) => `${p.name} ${p.version}`).join(" and ")}, the builds that ran.` : "";
  return conclusion({ facts, evidence, hypotheses, hit }, c, {
    summary: `${fn} was called with a NULL pointer by ${where(facts.culprit)}, and faulted reading through it. ${hit.finding ?? ""}`,
    cause: [
      `${fn} does not accept NULL; the caller, ${where(facts.culprit)} on the path ${callPath(facts) || "shown in the backtrace"}, passed it one.${symbols}`,
      facts.culprit?.function ? "" : "Without symbols for the caller, which of its values was NULL cannot be named from this dump.",
    ],
    withOtherThreads: true,
    confidence: facts.culprit?.function ? 0.8 : 0.7,
    recommendations: [
      packages.length
        ? `Install the debug symbols of ${packages.map((p) => `${p.name} ${p.version}`).join(" and ")} (Debian's debug archive, or debuginfod) and analyse again: the caller's function, line and variables become visible.`
        : `Find the call to ${fn} in ${where(facts.culprit)} and check its argument for NULL before the call.`,
      `Find what handed ${where(facts.culprit)} a NULL where a string or buffer was expected${facts.culprit?.function ? "" : " (for an interpreter, the script's own call: its stack is in the interpreter's frames)"}.`,
    ],
  });
}

/** Without source or debug info: the register the faulting instruction read through. */
function registerOnly(facts: Facts): PlannedHypothesis {
  const operand = memoryOperand(facts.triage.instruction);
  const register = operand?.shown ?? "a register";
  const through = facts.crash.access === "write" ? "wrote through" : "read through";
  return {
    rule: "null-register",
    statement: `the faulting instruction \`${facts.triage.instruction ?? "?"}\` in ${where(facts.culprit)} ${through} a NULL pointer held in ${register}`,
    plan: [[facts.fault.instruction, facts.fault.registers]],
    judge(evidence) {
      const base = faultingBase(facts, evidence);
      if (!base) return verdict("inconclusive", "The faulting instruction has no memory operand with a base register to check.", evidence.find(facts.fault.instruction));
      if (base.value === 0n) {
        return verdict("confirmed", `${base.register} is 0${new Citations().cite(base.registers)} and the instruction ${facts.crash.access === "write" ? "writes" : "reads"} ${base.operand}${new Citations().cite(base.instruction)}: NULL plus the offset of a field.`, base.instruction, base.registers);
      }
      return verdict("rejected", `${base.register} is ${hex(base.value)}${new Citations().cite(base.registers)}, not NULL.`, base.registers);
    },
  };
}
