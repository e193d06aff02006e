/**
 * Faults on a memory access: a NULL pointer, a wild or read-only address, a call through a bad
 * function pointer, a file mapping read past its end.
 */
import { fullRegister, isRuntimeFrame, memoryOperand, normalizeFunctionName } from "../../analyzers/index.js";
import type { Variable } from "../../debuggers/model.js";
import { probeKey, probes, type EvaluateProbe, type Probe } from "../../debuggers/probe.js";
import type { Hypothesis } from "../../state.js";
import type { Evidence, Found } from "../evidence.js";
import type { Facts } from "./facts.js";
import { alternativesText, BACKTRACE, Citations, confirmed, FAULTING_INSTRUCTION, firstOk, notYetRun, REGISTERS, SIGNAL_INFO, THREADS, verdict, type Draft, type OpenQuestion, type PlannedHypothesis, type Playbook, type Verdict } from "./index.js";
import { listing, originsOf, quotedOrigins, type OriginLine, type QuotedOrigin } from "./origins.js";
import { basename, callPath, location, quoteLine, where } from "./prose.js";
import { dereferences, identifiers, indexedAccesses, passedPointers } from "./source.js";
import { hex, integerOf, looksPoisoned, pointerOf, printed, registersOf } from "./values.js";

const NULL_PAGE = 0x10000n;

/** The program's and libraries' sections, and the dump's segments. */
const SECTIONS = { kind: "sections" } as const satisfies Probe;
/** The process's memory mappings. */
const MAPPINGS = { kind: "mappings" } as const satisfies Probe;

interface Suspect {
  /** The pointer expression, valid in the culprit frame (`session->client`, `this`, `node`). */
  pointer: string;
  /** The field read or written through it, when the line names it. */
  member: string | null;
  /** The struct holding the pointer (`session` for `session->client`). */
  owner: string | null;
  /** The function the culprit passed the pointer to, when the fault is inside that callee (`strlen`). */
  passedTo: string | null;
}

/** The pointers the culprit may have faulted on, most likely first. */
function suspects(facts: Facts): Suspect[] {
  const list: Suspect[] = [];
  const add = (suspect: Suspect) => {
    if (!list.some((s) => s.pointer === suspect.pointer)) list.push(suspect);
  };
  // An argument the backtrace already shows as NULL (`this=0x0`) is the strongest lead.
  for (const [name, value] of facts.args) {
    if (pointerOf(value) === 0n) add({ pointer: name, member: implicitMember(facts, name), owner: null, passedTo: null });
  }
  const ownerOf = (pointer: string) => (pointer.includes("->") ? pointer.slice(0, pointer.lastIndexOf("->")) : null);
  // The fault is in a function the culprit called (strlen, memcpy, a library): what the line
  // passed to it is the lead, more than what the line itself reads.
  if ((facts.culprit?.level ?? 0) > 0) {
    for (const { callee, pointer } of passedPointers(facts.line ?? "")) add({ pointer, member: null, owner: ownerOf(pointer), passedTo: callee });
  }
  for (const { pointer, member } of dereferences(facts.line ?? "")) {
    const shown = facts.args.get(pointer);
    if (shown !== undefined && (pointerOf(shown) ?? 0n) !== 0n) continue;
    add({ pointer, member, owner: ownerOf(pointer), passedTo: null });
  }
  return list;
}

/** A method reads a member without naming `this`: the identifier on the line that is not an argument. */
function implicitMember(facts: Facts, pointer: string): string | null {
  if (pointer !== "this" || facts.line === null) return null;
  const names = identifiers(facts.line).filter((name) => !facts.args.has(name));
  return names.find((name) => /_$|^m_/.test(name)) ?? names[0] ?? null;
}

const isRust = (facts: Facts) => /\.rs$/.test(facts.culprit?.file ?? "");

function memberAddress(facts: Facts, suspect: Suspect): EvaluateProbe | null {
  if (suspect.member === null) return null;
  return facts.inCulprit(probes.evaluate(isRust(facts) ? `&(*${suspect.pointer}).${suspect.member}` : `&${suspect.pointer}->${suspect.member}`));
}

/** The faulting instruction's base register and its value, from triage's faulting instruction and registers. */
function faultingBase(facts: Facts, evidence: Evidence) {
  const instruction = evidence.find(FAULTING_INSTRUCTION);
  const registers = evidence.find(REGISTERS);
  const operand = memoryOperand(facts.triage.instruction);
  if (!operand?.base || facts.culprit?.level !== 0) return null;
  const value = registersOf(registers).get(fullRegister(operand.base));
  return value === undefined ? null : { register: `%${operand.base}`, value, displacement: operand.displacement, instruction, registers };
}

export function nullDereferencePlaybook(facts: Facts): Playbook {
  const fault = facts.crash.faultAddress === null ? null : BigInt(facts.crash.faultAddress);
  const verb = facts.crash.access === "write" ? "wrote" : "read";
  const at = location(facts.culprit);
  const list = suspects(facts);
  const siginfo = (evidence: Evidence) => evidence.find(SIGNAL_INFO);

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
    plan: [[SIGNAL_INFO, REGISTERS]],
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
  if (list.length === 0) hypotheses.unshift(registerOnly(facts));

  return {
    hypotheses,
    investigate(rule, evidence) {
      const suspect = list.find((s) => rule === `null:${s.pointer}`);
      if (!suspect) return [];
      const origins = originsOf(facts, suspect.pointer, true);
      return notYetRun(evidence, [
        facts.culprit?.line != null ? facts.list(facts.culprit.line) : null,
        ...origins.map(listing),
        facts.inCaller(probes.locals()),
        facts.inCaller(probes.arguments()),
        suspect.owner ? facts.inCulprit(probes.evaluate(`*${suspect.owner}`)) : null,
      ]);
    },
    conclude(hypotheses, evidence) {
      const c = new Citations();
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
        : `${where(facts.culprit)} ${facts.crash.access === "write" ? "wrote to" : "read"} ${hex(base?.displacement ?? 0n)}(${base?.register ?? "?"}) with ${base?.register ?? "the base register"} = 0${c.cite(base?.instruction, base?.registers)}: a NULL pointer plus the offset of a field; ${faulted}`;
      const origins = suspect ? quotedOrigins(originsOf(facts, suspect.pointer, true), evidence) : [];
      const story = originStory(origins, c);
      const callerState = callerFacts(facts, evidence, c);
      // A method called on a null object: testing `this` inside it is undefined behaviour in C++,
      // so the check belongs where the caller got the object.
      const onNullObject = suspect?.pointer === "this";
      const callerName = facts.caller?.function ? `\`${normalizeFunctionName(facts.caller.function)}\`` : "the caller";
      const callerAt = facts.caller?.file && facts.caller.line ? ` (${basename(facts.caller.file)}:${facts.caller.line})` : "";
      const rootCause = [
        onNullObject
          ? `${where(facts.culprit)} was called on a null object: \`this\` is NULL, so ${line ? `${line} at ${at}` : "its first member access"} faults. ${callerName}${callerAt} made the call without checking the object pointer, on the path ${callPath(facts)}.`
          : suspect?.passedTo
          ? `${line ? `At ${at}, ${line} passes ${name}` : `${where(facts.culprit)} passes ${name}`} to \`${suspect.passedTo}\` without checking it for NULL, on the path ${callPath(facts)}; \`${suspect.passedTo}\` does not accept NULL.`
          : suspect
          ? `${line ? `At ${at}, ${line} dereferences ${name}` : `${where(facts.culprit)} dereferences ${name}`} without checking it for NULL, on the path ${callPath(facts)}.`
          : `The program has no debug info, so the variable cannot be named: the faulting instruction \`${facts.triage.instruction ?? "?"}\`${c.cite(base?.instruction)} is in ${where(facts.culprit)}, on the path ${callPath(facts)}.`,
        story,
        callerState,
        otherThreads(facts, evidence, c),
        alternativesText(hypotheses, hit.id),
      ].filter(Boolean).join(" ");
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
      return { summary, rootCause, confidence: value && pointerOf(printed(value)) === 0n ? 0.9 : 0.7, recommendations, evidenceIds: c.ids };
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

/** Without source or debug info: the register the faulting instruction read through. */
function registerOnly(facts: Facts): PlannedHypothesis {
  const operand = memoryOperand(facts.triage.instruction);
  const register = operand?.base ? `%${operand.base}` : "a register";
  const through = facts.crash.access === "write" ? "wrote through" : "read through";
  return {
    rule: "null-register",
    statement: `the faulting instruction \`${facts.triage.instruction ?? "?"}\` in ${where(facts.culprit)} ${through} a NULL pointer held in ${register}`,
    plan: [[FAULTING_INSTRUCTION, REGISTERS]],
    judge(evidence) {
      const base = faultingBase(facts, evidence);
      if (!base) return verdict("inconclusive", "The faulting instruction has no memory operand with a base register to check.", evidence.find(FAULTING_INSTRUCTION));
      if (base.value === 0n) {
        return verdict("confirmed", `${base.register} is 0${new Citations().cite(base.registers)} and the instruction ${facts.crash.access === "write" ? "writes" : "reads"} ${hex(base.displacement)}(${base.register})${new Citations().cite(base.instruction)}: NULL plus the offset of a field.`, base.instruction, base.registers);
      }
      return verdict("rejected", `${base.register} is ${hex(base.value)}${new Citations().cite(base.registers)}, not NULL.`, base.registers);
    },
  };
}

export function invalidAccessPlaybook(facts: Facts): Playbook {
  const fault = facts.crash.faultAddress === null ? null : BigInt(facts.crash.faultAddress);
  const readOnly = facts.crash.signalCode === "SEGV_ACCERR";
  const write = facts.crash.access === "write";
  const list = suspects(facts).slice(0, 3);
  const prints = list.map((s) => facts.inCulprit(probes.evaluate(s.pointer)));
  const faultText = fault === null ? "the fault address" : hex(fault);
  /** The suspect whose value is the fault address (or the start of the object holding it). */
  const culpritPointer = (evidence: Evidence) => {
    for (const [i, suspect] of list.entries()) {
      const print = prints[i];
      const found = print ? evidence.find(print) : null;
      const value = pointerOf(printed(found));
      if (value !== null && fault !== null && fault >= value && fault - value < 0x1000n) return { suspect, found, value };
    }
    return null;
  };
  const sectionOf = (evidence: Evidence) => {
    const files = evidence.find(SECTIONS);
    if (!files?.reading || fault === null) return null;
    const section = files.reading.sections.find((s) => s.source !== "core" && BigInt(s.start) <= fault && fault < BigInt(s.end));
    return section ? { section, files } : null;
  };
  const mappingOf = (evidence: Evidence) => {
    const found = evidence.find(MAPPINGS);
    if (!found?.reading || fault === null) return { found, mapping: null };
    return { found, mapping: found.reading.find((m) => BigInt(m.start) <= fault && fault < BigInt(m.end)) ?? null };
  };

  // An index far past the end of a valid block also lands on unmapped memory: tell it from a bad pointer.
  const indexed = readOnly ? undefined : indexedAccesses(facts.line ?? "")[0];
  function outOfBoundsJudgement(evidence: Evidence): Verdict {
    if (!indexed) return { status: "inconclusive", finding: "The line indexes nothing.", evidenceIds: [] };
    const baseFound = evidence.find(facts.inCulprit(probes.evaluate(indexed.base)));
    const indexFound = evidence.find(facts.inCulprit(probes.evaluate(indexed.index)));
    const elementFound = evidence.find(facts.inCulprit(probes.evaluate(`&${indexed.base}[${indexed.index}]`)));
    const base = pointerOf(printed(baseFound));
    const index = integerOf(printed(indexFound));
    const element = pointerOf(printed(elementFound));
    const c = new Citations();
    if (base === null || index === null || element === null || fault === null) {
      return verdict("inconclusive", `The debugger could not evaluate \`${indexed.base}[${indexed.index}]\` in this frame${c.cite(baseFound ?? elementFound)}.`, baseFound, elementFound);
    }
    const hitsFault = fault >= element && fault - element < 0x40n;
    if (base !== 0n && hitsFault && element - base >= 0x1000n) {
      return verdict(
        "confirmed",
        `\`${indexed.base}\` is ${hex(base)}${c.cite(baseFound)}, but \`${indexed.index}\` is ${index}${c.cite(indexFound)}, which puts \`${indexed.base}[${indexed.index}]\` at ${hex(element)}${c.cite(elementFound)}, ${hex(element - base)} bytes past the start of the block: exactly where it faulted.`,
        baseFound,
        indexFound,
        elementFound,
      );
    }
    return verdict("rejected", `\`&${indexed.base}[${indexed.index}]\` is ${hex(element)}${c.cite(elementFound)}, ${hitsFault ? "within a page of" : "not"} the fault address ${faultText}${hitsFault ? `, and \`${indexed.base}\` (${hex(base)}) is itself the bad pointer` : ""}.`, elementFound);
  }

  const readOnlyWrite: PlannedHypothesis = {
    rule: "read-only-write",
    statement: `${where(facts.culprit)} wrote through ${list[0] ? `\`${list[0].pointer}\`` : "a pointer"} into read-only memory (a string literal or constant data)`,
    plan: [[...prints, SECTIONS].slice(0, 3)],
    judge(evidence) {
      const hit = sectionOf(evidence);
      const pointer = culpritPointer(evidence);
      const c = new Citations();
      if (hit && /rodata|\.text|eh_frame|\.init|\.fini|\.plt/.test(hit.section.name)) {
        const via = pointer ? ` \`${pointer.suspect.pointer}\` is ${hex(pointer.value)}${c.cite(pointer.found)}.` : "";
        return verdict("confirmed", `${faultText} lies in ${hit.section.name} of ${basename(hit.section.source === "exec" ? (facts.triage.executable ?? "the program") : hit.section.source)}${c.cite(hit.files)}, which is mapped read-only.${via}`, hit.files, pointer?.found);
      }
      return verdict("inconclusive", `${faultText} is not in a read-only section of a loaded file${c.cite(evidence.find(SECTIONS))}.`, evidence.find(SECTIONS));
    },
  };
  const wild: PlannedHypothesis = {
    rule: "wild-pointer",
    statement: `${list[0] ? `\`${list[0].pointer}\`` : "the pointer"} held an address that was never valid (garbage, a bad cast or a corrupted handle)`,
    plan: [[...prints.slice(0, 2), MAPPINGS]],
    judge(evidence) {
      const { found, mapping } = mappingOf(evidence);
      const pointer = culpritPointer(evidence);
      const c = new Citations();
      if (!found?.ok) return verdict("inconclusive", "The mappings of the process could not be read.", found);
      if (mapping) return verdict("rejected", `${faultText} is inside a mapping (${mapping.objfile ?? "anonymous"} ${mapping.start}-${mapping.end})${c.cite(found)}: the address was valid memory.`, found);
      if (flip) return verdict("inconclusive", `No mapping covers ${faultText}${c.cite(found)}, but the pointer is one bit away from mapped memory, which garbage rarely is.`, found);
      const byIndex = indexed ? outOfBoundsJudgement(evidence) : null;
      if (byIndex?.status === "confirmed") {
        return { status: "rejected", finding: `\`${indexed?.base}\` itself points into a valid block; the bad address comes from the index \`${indexed?.index}\`, far past its end.`, evidenceIds: byIndex.evidenceIds };
      }
      const poison = fault !== null && looksPoisoned(fault) ? ` It contains a fill pattern (${faultText}), the mark of an uninitialised or sentinel value.` : "";
      const via = pointer ? ` \`${pointer.suspect.pointer}\` is ${hex(pointer.value)}${c.cite(pointer.found)}.` : "";
      return verdict("confirmed", `No mapping of the process covers ${faultText}${c.cite(found)}.${via}${poison}`, found, pointer?.found);
    },
  };
  const freed: PlannedHypothesis = {
    rule: "use-after-free",
    statement: `the pointer referred to memory that had been freed and given back to the system`,
    plan: [[SIGNAL_INFO, MAPPINGS]],
    judge(evidence) {
      const info = evidence.find(SIGNAL_INFO);
      const { found, mapping } = mappingOf(evidence);
      const c = new Citations();
      if (readOnly && mapping) return verdict("rejected", `The fault is SEGV_ACCERR${c.cite(info)}: the page at ${faultText} is mapped${c.cite(found)} but not writable; freed memory would be unmapped or still writable.`, info, found);
      if (fault !== null && looksPoisoned(fault)) return verdict("rejected", `${faultText} is a fill pattern, not an address the allocator ever handed out${c.cite(info)}.`, info);
      return verdict("inconclusive", `${faultText} is unmapped${c.cite(found)}; a large block freed with munmap would look the same, so this stays open.`, found);
    },
  };

  // The faulting pointer is one bit away from mapped memory: a hardware error is a real possibility.
  const flipped = facts.triage.fault?.bitFlip ?? null;
  const flip = flipped ? { pointer: BigInt(flipped.pointer), candidate: BigInt(flipped.candidate), bit: flipped.bit } : null;
  const bitFlip: PlannedHypothesis | null = flip
    ? {
        rule: "bit-flip",
        statement: `one bit of ${list[0] ? `\`${list[0].pointer}\`` : "the pointer"} flipped in memory (a hardware error): ${hex(flip.pointer)} is ${hex(flip.candidate)} with bit ${flip.bit} inverted`,
        plan: [[...prints.slice(0, 1), SECTIONS, probes.memory(hex(flip.candidate), 4)], [MAPPINGS]],
        judge(evidence) {
          // The dump's own segments hold anonymous memory (the heap) that a list of mappings may leave out.
          const sections = evidence.find(SECTIONS);
          const mappings = evidence.find(MAPPINGS);
          const pointer = culpritPointer(evidence);
          const c = new Citations();
          const inSections = sections?.reading?.sections.find((s) => BigInt(s.start) <= flip.candidate && flip.candidate < BigInt(s.end));
          const inMappings = mappings?.reading?.find((m) => BigInt(m.start) <= flip.candidate && flip.candidate < BigInt(m.end));
          const found = inSections ? sections : inMappings ? mappings : (sections ?? mappings);
          const home = inSections ? { name: inSections.source === "core" ? "a segment of the dump" : `${inSections.name} of ${basename(inSections.source)}`, start: inSections.start, end: inSections.end } : inMappings ? { name: inMappings.objfile ?? "anonymous memory", start: inMappings.start, end: inMappings.end } : null;
          if (!sections?.ok && !mappings?.ok) return verdict("inconclusive", "The memory map of the process could not be read.", sections, mappings);
          if (!home && !mappings) return verdict("inconclusive", `${hex(flip.candidate)} is in none of the loaded files' sections${c.cite(sections)}; the process's mappings will tell.`, sections);
          if (!home) return verdict("rejected", `${hex(flip.candidate)} is not mapped either${c.cite(sections, mappings)}: no single bit makes the pointer valid.`, sections, mappings);
          const target = evidence.find(probes.memory(hex(flip.candidate), 4));
          const readable = target?.ok ? ` The memory at ${hex(flip.candidate)} reads back${c.cite(target)}.` : "";
          const via = pointer ? `\`${pointer.suspect.pointer}\` is ${hex(pointer.value)}${c.cite(pointer.found)}, which` : `${hex(flip.pointer)}`;
          return verdict(
            "confirmed",
            `${via} differs in bit ${flip.bit} alone from ${hex(flip.candidate)}, inside ${home.name} ${home.start}-${home.end}${c.cite(found)}.${readable} Garbage is rarely one bit away from a live address; a flipped bit is.`,
            found,
            pointer?.found,
            target,
          );
        },
      }
    : null;

  const outOfBounds: PlannedHypothesis | null = indexed
    ? {
        rule: "index-out-of-bounds",
        statement: `the index \`${indexed.index}\` put \`${indexed.base}[${indexed.index}]\` far past the end of the memory \`${indexed.base}\` points to`,
        plan: [[facts.inCulprit(probes.evaluate(indexed.base)), facts.inCulprit(probes.evaluate(indexed.index)), facts.inCulprit(probes.evaluate(`&${indexed.base}[${indexed.index}]`))]],
        judge: outOfBoundsJudgement,
      }
    : null;

  const primary = readOnly && write ? readOnlyWrite : (bitFlip ?? outOfBounds ?? wild);
  return {
    hypotheses:
      primary === readOnlyWrite ? [readOnlyWrite, freed, wild] : primary === bitFlip ? [bitFlip, wild, freed] : primary === wild ? [wild, freed] : [outOfBounds ?? wild, wild, freed],
    investigate(rule, evidence) {
      const pointer = culpritPointer(evidence);
      if (rule !== primary.rule || !pointer) return notYetRun(evidence, [facts.inCaller(probes.arguments()), facts.inCaller(probes.locals())]);
      return notYetRun(evidence, [
        facts.list(facts.culprit?.line ?? 0),
        ...originsOf(facts, pointer.suspect.pointer, false).map(listing),
        ...outerCallers(facts).map(listing),
        facts.inCaller(probes.arguments()),
      ]);
    },
    conclude(hypotheses, evidence) {
      const flipped = hypotheses.find((h) => h.status === "confirmed" && h.rule === "bit-flip");
      if (flipped && flip) return bitFlipConclusion(facts, hypotheses, flipped, flip, write, faultText, culpritPointer(evidence)?.suspect.pointer ?? null);
      const bounds = hypotheses.find((h) => h.status === "confirmed" && h.rule === "index-out-of-bounds");
      if (bounds && indexed) return outOfBoundsConclusion(facts, hypotheses, evidence, bounds, indexed, write, faultText);
      const hit = hypotheses.find((h) => h.status === "confirmed" && (h.rule === primary.rule || h.rule === "wild-pointer" || h.rule === "read-only-write"));
      if (!hit) return undetermined(facts, hypotheses, evidence, "what the faulting address was");
      const c = new Citations();
      const pointer = culpritPointer(evidence);
      const name = pointer ? `\`${pointer.suspect.pointer}\`` : "a pointer";
      const origins = pointer ? quotedOrigins([...originsOf(facts, pointer.suspect.pointer, false), ...outerCallers(facts)], evidence) : [];
      const readOnlyCase = hit.rule === "read-only-write";
      // A literal passed straight into one of the functions on the crashing path.
      const onPath = facts.triage.frames.flatMap((f) => (f.function ? [normalizeFunctionName(f.function).split("::").at(-1) ?? ""] : []));
      const literal = readOnlyCase ? origins.find((o) => onPath.some((fn) => new RegExp(`\\b${fn}\\s*\\([^)]*"`).test(o.code))) : undefined;
      const summary = readOnlyCase
        ? `${where(facts.culprit)} wrote to ${faultText} through ${name}${c.cite(pointer?.found)}, and that address is in read-only data${c.cite(evidence.find(SECTIONS))}: the program modified a string literal or constant.`
        : `${where(facts.culprit)} ${write ? "wrote to" : "read"} ${faultText} through ${name}${c.cite(pointer?.found)}, an address no mapping covers${c.cite(evidence.find(MAPPINGS))}: the pointer was never valid.`;
      const rootCause = [
        hit.finding ?? "",
        originStory(origins, c, false),
        poisonedArguments(facts, evidence, c),
        literal ? `The string comes from a literal: \`${literal.code}\` at ${basename(literal.file)}:${literal.line}${c.cite(literal.evidence)}, and literals live in read-only memory.` : "",
        otherThreads(facts, evidence, c),
        alternativesText(hypotheses, hit.id),
      ].filter(Boolean).join(" ");
      for (const id of hit.evidenceIds) if (!c.ids.includes(id)) c.ids.push(id);
      const recommendations = readOnlyCase
        ? [
            `Do not modify the buffer in \`${facts.fn}\` in place when it may be a literal: take \`const char *\` and write into a copy, or have callers pass a writable array (\`char name[] = "..."\`).`,
            "Build with -Wwrite-strings (C) so passing a literal as `char *` is a warning.",
          ]
        : [
            `Validate ${name} where it is produced${origins[0] ? ` (${basename(origins[0].file)}:${origins[0].line})` : ""} instead of trusting its input; reject values that do not map to a live object.`,
            "Run the failing input under AddressSanitizer to see where the bad value is created.",
          ];
      return { summary, rootCause, confidence: 0.85, recommendations, evidenceIds: c.ids };
    },
    openQuestions: [
      {
        text: `The dump shows the bad address, not the input that produced it.`,
        question: `What input or caller supplied ${list[0] ? `\`${list[0].pointer}\`` : "the pointer"} — can you share the input that was being processed?`,
      },
      ...concurrencyQuestion(facts),
    ],
  };
}

function bitFlipConclusion(
  facts: Facts,
  hypotheses: Parameters<Playbook["conclude"]>[0],
  hit: Parameters<Playbook["conclude"]>[0][number],
  flip: { pointer: bigint; candidate: bigint; bit: number },
  write: boolean,
  faultText: string,
  pointer: string | null,
) {
  const c = new Citations();
  for (const id of hit.evidenceIds) c.ids.push(id);
  const name = pointer ? `\`${pointer}\`` : "a pointer";
  const summary = `${where(facts.culprit)} ${write ? "wrote to" : "read"} ${faultText} through ${name}, which held ${hex(flip.pointer)}: a valid address (${hex(flip.candidate)}) with one bit (bit ${flip.bit}) inverted${hit.evidenceIds.length ? ` (${hit.evidenceIds.join(", ")})` : ""}. That is the signature of a hardware memory error, not of a software bug, though a bug that flips bits (a stray \`^=\` or bit-field write) would look the same.`;
  const rootCause = [hit.finding ?? "", alternativesText(hypotheses, hit.id)].filter(Boolean).join(" ");
  return {
    summary,
    rootCause,
    // One dump cannot tell failing memory from a bug that flips bits: hold back.
    confidence: 0.7,
    recommendations: [
      "Check the machine's memory: its ECC/EDAC error counters (`edac-util`, `/sys/devices/system/edac`, `mcelog`/`rasdaemon`), and run memtest86+ on it.",
      "Compare with other crashes of this build: the same signature on one host only points at that host's hardware; on many hosts, at code that writes into this pointer.",
      `Look for code that writes near ${name} (bit fields, flags packed into pointers, XOR tricks) before blaming the hardware.`,
    ],
    evidenceIds: c.ids,
  };
}

function outOfBoundsConclusion(
  facts: Facts,
  hypotheses: Parameters<Playbook["conclude"]>[0],
  evidence: Evidence,
  hit: Parameters<Playbook["conclude"]>[0][number],
  indexed: { base: string; index: string },
  write: boolean,
  faultText: string,
) {
  const c = new Citations();
  for (const id of hit.evidenceIds) c.ids.push(id);
  const index = integerOf(printed(evidence.find(facts.inCulprit(probes.evaluate(indexed.index)))));
  const summary = `${where(facts.culprit)} ${write ? "wrote" : "read"} \`${indexed.base}[${indexed.index}]\` with \`${indexed.index}\` = ${index ?? "?"}${c.cite(evidence.find(facts.inCulprit(probes.evaluate(indexed.index))))}: an index far past the end of the block \`${indexed.base}\` points to, which landed on ${faultText}, unmapped memory${c.cite(evidence.find(MAPPINGS) ?? evidence.find(SIGNAL_INFO))}.`;
  const rootCause = [
    hit.finding ?? "",
    `Nothing on the path ${callPath(facts)} checks \`${indexed.index}\` against the size of \`${indexed.base}\`.`,
    callerFacts(facts, evidence, c),
    alternativesText(hypotheses, hit.id),
  ].filter(Boolean).join(" ");
  return {
    summary,
    rootCause,
    confidence: 0.85,
    recommendations: [
      `Check \`${indexed.index}\` against the number of elements of \`${indexed.base}\` in \`${facts.fn}\` (${location(facts.culprit)}) before indexing, or map keys to slots (e.g. \`${indexed.index} % size\`) if that is the intent.`,
      "Run the failing input under AddressSanitizer: it reports out-of-bounds accesses even when they land on mapped memory and do not crash.",
    ],
    evidenceIds: c.ids,
  };
}

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
        return verdict("rejected", `The process stopped on the call itself (\`${facts.triage.instruction}\` in ${where(callSite)})${new Citations().cite(evidence.find(FAULTING_INSTRUCTION))}: no \`ret\` was involved.`, evidence.find(FAULTING_INSTRUCTION));
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
    conclude(hypotheses, evidence) {
      const hit = confirmed(hypotheses, "null-function-pointer");
      if (!hit) return undetermined(facts, hypotheses, evidence, "how the program jumped to the bad address");
      const c = new Citations();
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
        ? `${where(callSite)} called \`${target ?? "a function pointer"}\`, which was NULL${c.cite(targetValue)}, so execution jumped to address 0 and faulted${c.cite(evidence.find(SIGNAL_INFO))}.`
        : `${where(callSite)} called \`${target ?? "a function pointer"}\`, ${heldValue}${c.cite(targetValue)}, so ${generalProtection ? "the call" : "execution jumped there and"} faulted${c.cite(evidence.find(SIGNAL_INFO))}: the object ${calls[0] ? `behind \`${calls[0].pointer}\` ` : ""}was not a live, initialised one (freed and reused, never set up, or overwritten).`;
      const rootCause = [
        hit.finding ?? "",
        ownerValue ? `The object it came from is ${ownerValue}${c.cite(owner)}.` : "",
        table,
        alternativesText(hypotheses, hit.id),
      ].filter(Boolean).join(" ");
      for (const id of hit.evidenceIds) if (!c.ids.includes(id)) c.ids.push(id);
      return {
        summary,
        rootCause,
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
        evidenceIds: c.ids,
      };
    },
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

export function busErrorPlaybook(facts: Facts): Playbook {
  const fault = facts.crash.faultAddress === null ? null : BigInt(facts.crash.faultAddress);
  const mapping = (evidence: Evidence) => {
    const found = evidence.find(MAPPINGS);
    if (!found?.reading || fault === null) return { found, hit: null };
    return { found, hit: found.reading.find((m) => BigInt(m.start) <= fault && fault < BigInt(m.end)) ?? null };
  };
  const truncated: PlannedHypothesis = {
    rule: "truncated-mapping",
    statement: `${where(facts.culprit)} read a file mapping past the end of its file: the file shrank (or was truncated) after it was mapped`,
    plan: [[MAPPINGS, facts.inCulprit(probes.arguments())]],
    judge(evidence) {
      const { found, hit } = mapping(evidence);
      const info = evidence.find(SIGNAL_INFO);
      const c = new Citations();
      if (hit?.objfile) {
        const deleted = /\(deleted\)$/.test(hit.objfile) ? " The file has since been deleted." : "";
        return verdict("confirmed", `${hex(fault ?? 0n)} is inside the mapping of ${hit.objfile} (${hit.start}-${hit.end}, file offset ${hit.offset})${c.cite(found)}, and the signal is ${facts.crash.signalCode}${c.cite(info)}: the page exists in the mapping but not in the file.${deleted}`, found, info);
      }
      if (hit) return verdict("rejected", `${hex(fault ?? 0n)} is in anonymous memory${c.cite(found)}, not a file mapping.`, found);
      return verdict("inconclusive", "The mapping of the fault address is not in the dump.", found);
    },
  };
  const misaligned: PlannedHypothesis = {
    rule: "misaligned-access",
    statement: "an unaligned access on a strict-alignment path raised SIGBUS",
    plan: [[SIGNAL_INFO]],
    judge(evidence) {
      const info = evidence.find(SIGNAL_INFO);
      if (facts.crash.signalCode === "BUS_ADRALN") return verdict("confirmed", `The signal code is BUS_ADRALN${new Citations().cite(info)}.`, info);
      return verdict("rejected", `The signal code is ${facts.crash.signalCode}${new Citations().cite(info)}, a nonexistent physical address, not BUS_ADRALN (misalignment).`, info);
    },
  };
  return {
    hypotheses: [truncated, misaligned],
    investigate: (rule, evidence) => (rule === "truncated-mapping" ? notYetRun(evidence, [facts.list(facts.culprit?.line ?? 0), ...outerCallers(facts).map(listing), facts.inCaller(probes.locals())]) : []),
    conclude(hypotheses, evidence) {
      const hit = confirmed(hypotheses, "truncated-mapping") ?? confirmed(hypotheses, "misaligned-access");
      if (!hit) return undetermined(facts, hypotheses, evidence, "why the access raised SIGBUS");
      const c = new Citations();
      const { hit: region, found } = mapping(evidence);
      const args = evidence.find(facts.inCulprit(probes.arguments()));
      const summary = hit.rule === "truncated-mapping"
        ? `${where(facts.culprit)} read ${hex(fault ?? 0n)} in the mapping of ${region?.objfile ?? "a file"}${c.cite(found)}; the file no longer had data there, so the kernel raised SIGBUS${c.cite(evidence.find(SIGNAL_INFO))}.`
        : `${where(facts.culprit)} made an unaligned access${c.cite(evidence.find(SIGNAL_INFO))}.`;
      const rootCause = [hit.finding ?? "", args?.reading?.length ? `Its arguments: ${args.reading.map((v) => `${v.name} = ${v.value}`).join(", ")}${c.cite(args)}.` : "", alternativesText(hypotheses, hit.id)].filter(Boolean).join(" ");
      for (const id of hit.evidenceIds) if (!c.ids.includes(id)) c.ids.push(id);
      return {
        summary,
        rootCause,
        confidence: 0.8,
        recommendations: [
          "Do not truncate or rotate a file in place while it is mapped; rotate by rename and keep the old file until readers unmap it.",
          `Or read with read()/pread() in \`${facts.fn}\`, or re-check the file size (fstat) before touching mapped pages, and handle SIGBUS where files can shrink underneath.`,
        ],
        evidenceIds: c.ids,
      };
    },
    openQuestions: [
      { text: "Who truncated the file is not in this process's dump.", question: "Which process or job truncates or rotates this file (log rotation, cleanup), and does it coordinate with readers?" },
      { text: "The dump cannot show the file's size at crash time.", question: "How large was the file when it was mapped, and how large after the rotation?" },
    ],
  };
}

/** The call lines of the callers further out (the caller's own caller), where an argument is often a literal. */
function outerCallers(facts: Facts): OriginLine[] {
  return facts.triage.frames.slice(1, 4).flatMap((frame) =>
    frame.file !== null && frame.line !== null && frame.function !== null && !isRuntimeFrame(frame)
      ? [{ kind: "caller" as const, file: frame.file, line: frame.line, function: normalizeFunctionName(frame.function) }]
      : [],
  );
}

/** Sentences that walk the origin lines: assignment, callee's return, stores of NULL, caller. */
function originStory(origins: QuotedOrigin[], c: Citations, nullish = true): string {
  const sentences: string[] = [];
  const seen = new Set<string>();
  for (const origin of origins) {
    if (seen.has(`${origin.file}:${origin.line}`)) continue;
    seen.add(`${origin.file}:${origin.line}`);
    const at = `${basename(origin.file)}:${origin.line}`;
    const fn = origin.function ? ` in \`${origin.function}\`` : "";
    const quoted = `\`${origin.code}\``;
    switch (origin.kind) {
      case "assignment":
        sentences.push(`It was assigned at ${at}: ${quoted}${c.cite(origin.evidence)}.`);
        break;
      case "callee-return":
        sentences.push(
          nullish
            ? `That function can return NULL: ${quoted} at ${at}${fn}${c.cite(origin.evidence)}.`
            : `That function returns \`${origin.code.replace(/^return\s+/, "").replace(/;$/, "")}\` (${at}${fn})${c.cite(origin.evidence)}.`,
        );
        break;
      case "null-store":
        sentences.push(`The program stores NULL into it at ${at}${fn}: ${quoted}${c.cite(origin.evidence)}.`);
        break;
      case "caller":
        sentences.push(`${origin.function ? `\`${origin.function}\`` : "The caller"} called it at ${at}: ${quoted}${c.cite(origin.evidence)}.`);
        break;
    }
  }
  return sentences.join(" ");
}

/** The caller frame's locals and arguments, as one sentence. */
export function callerFacts(facts: Facts, evidence: Evidence, c: Citations): string {
  const locals = firstOk(evidence, facts.inCaller(probes.locals()));
  const args = firstOk(evidence, facts.inCaller(probes.arguments()));
  const text = (found: Found<Probe & { kind: "locals" | "arguments" }> | null) => (found?.reading ? variables(found.reading) : null);
  const parts = [text(locals) && `${text(locals)}${c.cite(locals)}`, text(args) && `arguments ${text(args)}${c.cite(args)}`].filter(Boolean);
  return parts.length && facts.caller ? `In ${where(facts.caller)}: ${parts.join("; ")}.` : "";
}

/** Variables as one `name = value` phrase; long values (C++ containers, big structs) are elided. */
export function variables(list: Variable[]): string {
  return list
    .slice(0, 6)
    .map(({ name, value }) => {
      const line = `${name} = ${value}`;
      return line.length > 90 ? `${name} = {…}` : line;
    })
    .join(", ");
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

/** Integer arguments whose hex form is a fill pattern (`handle=3735928559` is 0xdeadbeef): garbage passed in. */
function poisonedArguments(facts: Facts, evidence: Evidence, c: Citations): string {
  const poisoned = [...facts.args.entries()].filter(([, v]) => /^\d{6,}$/.test(v) && looksPoisoned(BigInt(v)));
  if (poisoned.length === 0) return "";
  const bt = evidence.find(BACKTRACE);
  return `${poisoned.map(([name, v]) => `\`${name}\` = ${v} = ${hex(BigInt(v))}`).join(", ")}${c.cite(bt)}: a fill pattern or sentinel was passed in, not a value the program issued.`;
}

/** What the process's other threads were doing, from triage's grouping of the thread list. */
function otherThreads(facts: Facts, evidence: Evidence, c: Citations): string {
  const others = facts.triage.threads.count - 1;
  if (others < 1) return "";
  const groups = facts.triage.threads.groups
    .map((g) => ({ ...g, threads: g.threads.filter((t) => t !== facts.crash.thread.id) }))
    .filter((g) => g.threads.length > 0)
    .slice(0, 3)
    .map((g) => `${g.threads.length} in \`${g.function}\``);
  return `The other ${others} thread${others === 1 ? " was" : "s were"} elsewhere: ${groups.join(", ")}${c.cite(evidence.find(THREADS))}; none was running the crashing code.`;
}

/** In a process with other threads, whether one of them changed the data is a fair question. */
export function concurrencyQuestion(facts: Facts): OpenQuestion[] {
  if (facts.triage.threads.count <= 1) return [];
  return [
    {
      text: `The process had ${facts.triage.threads.count} threads; the dump cannot show whether another one changed the data shortly before the crash.`,
      question: "Is the data involved shared between threads, and which lock protects it?",
    },
  ];
}

/** The conclusion when no hypothesis was confirmed: what is known, stated as such. */
export function undetermined(facts: Facts, hypotheses: Hypothesis[], evidence: Evidence, open: string): Draft {
  const c = new Citations();
  const bt = evidence.find(BACKTRACE);
  const info = evidence.find(SIGNAL_INFO);
  const summary = `The process died with ${facts.crash.signal ?? "no signal"}${facts.crash.signalCode ? ` (${facts.crash.signalCode})` : ""}${c.cite(info)} in ${where(facts.culprit)}${c.cite(bt)}; the analysis could not establish ${open}.`;
  const tested = alternativesText(hypotheses, null);
  return {
    summary,
    rootCause: tested ? `Tested: ${tested}` : `No hypothesis could be tested against the dump.`,
    confidence: 0.3,
    recommendations: [
      `Reproduce with a build that has debug info (-g) and, for memory errors, AddressSanitizer, then analyse the new dump.`,
      `Start from ${where(facts.culprit)} on the path ${callPath(facts) || "shown in the backtrace"}.`,
    ],
    evidenceIds: c.ids,
  };
}
