/**
 * An access to an address no mapping allows: a wild pointer, a write into read-only data, an index
 * far past the end of its block, or a pointer one bit away from a valid one.
 */
import { fileSectionAt, holds, mappingAt, normalizeFunctionName } from "../../analyzers/index.js";
import { probes } from "../../debuggers/probe.js";
import type { Hypothesis } from "../../state.js";
import type { Evidence } from "../evidence.js";
import { concurrencyQuestion, conclusion, undetermined, type Grounds } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { BACKTRACE, Citations, MAPPINGS, notYetRun, SECTIONS, verdict, type Draft, type Playbook, type PlannedHypothesis, type Verdict } from "./kit.js";
import { listing, originsOf, originStory, outerCallers, quotedOrigins } from "./origins.js";
import { suspects } from "./pointers.js";
import { basename, callPath, location, where } from "./prose.js";
import { indexedAccesses } from "./source.js";
import { hex, integerOf, looksPoisoned, pointerOf, printed } from "./values.js";

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
    const section = fileSectionAt(files.reading, fault);
    return section ? { section, files } : null;
  };
  const mappingOf = (evidence: Evidence) => {
    const found = evidence.find(MAPPINGS);
    if (!found?.reading || fault === null) return { found, mapping: null };
    return { found, mapping: mappingAt(found.reading, fault) };
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
    plan: [[facts.fault.record, MAPPINGS]],
    judge(evidence) {
      const info = evidence.find(facts.fault.record);
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
          const inSections = sections?.reading?.sections.find((s) => holds(s, flip.candidate));
          const inMappings = mappings?.reading ? mappingAt(mappings.reading, flip.candidate) : null;
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
        facts.culpritListing,
        ...originsOf(facts, pointer.suspect.pointer, false).map(listing),
        ...outerCallers(facts).map(listing),
        facts.inCaller(probes.arguments()),
      ]);
    },
    conclude(hypotheses, evidence) {
      const flipped = hypotheses.find((h) => h.status === "confirmed" && h.rule === "bit-flip");
      if (flipped && flip) return bitFlipConclusion({ facts, evidence, hypotheses, hit: flipped }, flip, write, faultText, culpritPointer(evidence)?.suspect.pointer ?? null);
      const bounds = hypotheses.find((h) => h.status === "confirmed" && h.rule === "index-out-of-bounds");
      if (bounds && indexed) return outOfBoundsConclusion({ facts, evidence, hypotheses, hit: bounds }, indexed, write, faultText);
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
      const cause = [
        hit.finding ?? "",
        originStory(origins, c, false),
        poisonedArguments(facts, evidence, c),
        literal ? `The string comes from a literal: \`${literal.code}\` at ${basename(literal.file)}:${literal.line}${c.cite(literal.evidence)}, and literals live in read-only memory.` : "",
      ];
      const recommendations = readOnlyCase
        ? [
            `Do not modify the buffer in \`${facts.fn}\` in place when it may be a literal: take \`const char *\` and write into a copy, or have callers pass a writable array (\`char name[] = "..."\`).`,
            "Build with -Wwrite-strings (C) so passing a literal as `char *` is a warning.",
          ]
        : [
            `Validate ${name} where it is produced${origins[0] ? ` (${basename(origins[0].file)}:${origins[0].line})` : ""} instead of trusting its input; reject values that do not map to a live object.`,
            "Run the failing input under AddressSanitizer to see where the bad value is created.",
          ];
      return conclusion({ facts, evidence, hypotheses, hit }, c, { summary, cause, withOtherThreads: true, confidence: 0.85, recommendations });
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
  grounds: Grounds & { hit: Hypothesis },
  flip: { pointer: bigint; candidate: bigint; bit: number },
  write: boolean,
  faultText: string,
  pointer: string | null,
): Draft {
  const { facts, hit } = grounds;
  const name = pointer ? `\`${pointer}\`` : "a pointer";
  const summary = `${where(facts.culprit)} ${write ? "wrote to" : "read"} ${faultText} through ${name}, which held ${hex(flip.pointer)}: a valid address (${hex(flip.candidate)}) with one bit (bit ${flip.bit}) inverted${hit.evidenceIds.length ? ` (${hit.evidenceIds.join(", ")})` : ""}. That is the signature of a hardware memory error, not of a software bug, though a bug that flips bits (a stray \`^=\` or bit-field write) would look the same.`;
  return conclusion(grounds, new Citations(), {
    summary,
    cause: [hit.finding ?? ""],
    // One dump cannot tell failing memory from a bug that flips bits: hold back.
    confidence: 0.7,
    recommendations: [
      "Check the machine's memory: its ECC/EDAC error counters (`edac-util`, `/sys/devices/system/edac`, `mcelog`/`rasdaemon`), and run memtest86+ on it.",
      "Compare with other crashes of this build: the same signature on one host only points at that host's hardware; on many hosts, at code that writes into this pointer.",
      `Look for code that writes near ${name} (bit fields, flags packed into pointers, XOR tricks) before blaming the hardware.`,
    ],
  });
}

function outOfBoundsConclusion(grounds: Grounds & { hit: Hypothesis }, indexed: { base: string; index: string }, write: boolean, faultText: string): Draft {
  const { facts, evidence, hit } = grounds;
  const c = new Citations();
  const index = integerOf(printed(evidence.find(facts.inCulprit(probes.evaluate(indexed.index)))));
  const summary = `${where(facts.culprit)} ${write ? "wrote" : "read"} \`${indexed.base}[${indexed.index}]\` with \`${indexed.index}\` = ${index ?? "?"}${c.cite(evidence.find(facts.inCulprit(probes.evaluate(indexed.index))))}: an index far past the end of the block \`${indexed.base}\` points to, which landed on ${faultText}, unmapped memory${c.cite(evidence.find(MAPPINGS) ?? evidence.find(facts.fault.record))}.`;
  return conclusion(grounds, c, {
    summary,
    cause: [hit.finding ?? "", `Nothing on the path ${callPath(facts)} checks \`${indexed.index}\` against the size of \`${indexed.base}\`.`],
    withCaller: true,
    confidence: 0.85,
    recommendations: [
      `Check \`${indexed.index}\` against the number of elements of \`${indexed.base}\` in \`${facts.fn}\` (${location(facts.culprit)}) before indexing, or map keys to slots (e.g. \`${indexed.index} % size\`) if that is the intent.`,
      "Run the failing input under AddressSanitizer: it reports out-of-bounds accesses even when they land on mapped memory and do not crash.",
    ],
  });
}

/** Integer arguments whose hex form is a fill pattern (`handle=3735928559` is 0xdeadbeef): garbage passed in. */
function poisonedArguments(facts: Facts, evidence: Evidence, c: Citations): string {
  const poisoned = [...facts.args.entries()].filter(([, v]) => /^\d{6,}$/.test(v) && looksPoisoned(BigInt(v)));
  if (poisoned.length === 0) return "";
  const bt = evidence.find(BACKTRACE);
  return `${poisoned.map(([name, v]) => `\`${name}\` = ${v} = ${hex(BigInt(v))}`).join(", ")}${c.cite(bt)}: a fill pattern or sentinel was passed in, not a value the program issued.`;
}
