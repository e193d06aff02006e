/**
 * glibc's malloc stopped the program: a block freed twice, a pointer it never handed out, or its
 * own metadata overwritten. The culprit is where malloc noticed; the bug is often elsewhere.
 */
import { AMBIGUOUS_FREE_MESSAGE, chunkHeaderAddress, chunkSize, CHUNK_HEADER_WORDS, HEAP_START, inUseBitOverwritten, MAIN_ARENA_TOP, nextChunkHeaderAddress, plausibleChunkSize } from "../../analyzers/index.js";
import { probes, type Probe } from "../../debuggers/probe.js";
import type { Evidence, Found } from "../evidence.js";
import type { Hypothesis } from "../../state.js";
import type { Facts } from "./facts.js";
import { ABORT_MESSAGE, BACKTRACE, Citations, confirmed, notYetRun, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { concludeOn, conclusion, undetermined } from "./conclusions.js";
import { listedCode } from "./origins.js";
import { basename, callPath, where } from "./prose.js";
import { codeOf, enclosingFunction, escape, functionSpan, grep, type SourceFile } from "./source.js";
import { asciiOfWord, hex, pointerOf, printed } from "./values.js";

/** Chunks read when walking the heap to the top chunk; a bigger heap is left to the user. */
const MAX_CHUNKS = 24;
/** Words read before a block's size field: the end of the block before it, which an overflow ran through. */
const TAIL_WORDS = 5;
/** Calls that copy without a bound of their own, the usual writers past a heap block's end. */
const UNBOUNDED_COPY = /\b(strcpy|strcat|sprintf|vsprintf|gets|memcpy|memmove|wcscpy|stpcpy)\s*\(/;

/** What the culprit line frees: `free(conn->read_buffer)` → `conn->read_buffer`. */
function freedExpression(line: string | null): string | null {
  const match = /\b(?:free|g_free|delete\s*\[\s*\]|delete)\s*\(?\s*([^;()]+?)\s*\)?\s*;/.exec(codeOf(line ?? ""));
  return match?.[1]?.trim() ?? null;
}

/** A chunk's header, read as memory: prev_size and size with its flag bits. */
function chunkHeader(found: Found | null): { size: bigint; flags: bigint } | null {
  if (!found?.ok || found.probe.kind !== "memory") return null;
  return chunkSize((found.reading as { words: bigint[] }).words);
}

/**
 * What the next block's header shows of a write past the end of a block whose own header is intact,
 * read and why no free leaves it: a size malloc never writes, or its in-use bit for the block
 * cleared with the block's own bytes where a free leaves the block's size; null when it shows
 * neither (or was not read).
 */
function neighbourDamage(words: bigint[], nextWords: bigint[]): { reading: string; why: string } | null {
  if (!plausibleChunkSize(words) || nextWords.length < CHUNK_HEADER_WORDS) return null;
  if (!plausibleChunkSize(nextWords)) {
    const text = asciiOfWord(nextWords[1] ?? 0n);
    return { reading: `the next block's size field reads ${hex(nextWords[1] ?? 0n)}${text ? ` ("${text}")` : ""}`, why: "no size malloc writes" };
  }
  if (!inUseBitOverwritten(words, nextWords)) return null;
  const text = asciiOfWord(nextWords[0] ?? 0n);
  return {
    reading: `the next block's header marks this one free (the in-use bit clear) while its prev_size reads ${hex(nextWords[0] ?? 0n)}${text ? ` ("${text}")` : ""}`,
    why: "not this block's size, which a free of it leaves there",
  };
}

/** The memory words a memory probe read; none when it failed. */
function wordsOf(found: Found | null): bigint[] {
  if (!found?.ok || found.probe.kind !== "memory") return [];
  return (found.reading as { words: bigint[] }).words;
}

export function doubleFreePlaybook(facts: Facts): Playbook {
  const freed = freedExpression(facts.line);
  const owner = freed?.includes("->") ? freed.slice(0, freed.lastIndexOf("->")) : null;
  const member = freed ? (/(?:->|\.)(\w+)$/.exec(freed)?.[1] ?? freed) : null;
  const print = (e: string) => facts.inCulprit(probes.evaluate(e));
  const header = freed ? facts.inCulprit(probes.memory(chunkHeaderAddress(freed), CHUNK_HEADER_WORDS)) : null;
  // The next block's header: an overflow off this block's end lands there ("(!prev)" reads its in-use bit).
  const neighbour = freed ? facts.inCulprit(probes.memory(nextChunkHeaderAddress(freed), CHUNK_HEADER_WORDS)) : null;
  // The end of the block before this one, up to this block's size field.
  const tail = freed ? facts.inCulprit(probes.memory(`(char *)(${freed}) - ${8 * (TAIL_WORDS + 1)}`, TAIL_WORDS)) : null;
  const message = (evidence: Evidence) => evidence.find(ABORT_MESSAGE);
  // "double free or corruption (out)" is said for both; only the block's header tells which.
  const ambiguous = AMBIGUOUS_FREE_MESSAGE.test(facts.crash.message ?? "");
  const copies = facts.source ? grep(facts.source, UNBOUNDED_COPY).slice(0, 4) : [];

  const twice: PlannedHypothesis = {
    rule: "freed-twice",
    statement: freed
      ? `\`${freed}\` was freed twice: ${where(facts.culprit)} freed it again after an earlier free left the pointer set`
      : `${where(facts.culprit)} freed a block that was already free`,
    plan: [[freed ? print(freed) : null, owner ? print(`*${owner}`) : facts.inCulprit(probes.arguments()), ambiguous ? header : null, ambiguous ? neighbour : null].filter((c) => c !== null)],
    judge(evidence) {
      const c = new Citations();
      const said = message(evidence);
      const value = freed ? evidence.find(print(freed)) : null;
      const pointer = pointerOf(printed(value));
      if (ambiguous && said?.ok) {
        const found = header ? evidence.find(header) : null;
        const words = wordsOf(found);
        if (words.length < CHUNK_HEADER_WORDS) return verdict("inconclusive", `malloc's "${facts.crash.message}"${c.cite(said)} is said for a block freed twice and for a corrupted one alike, and the block's header could not be read${c.cite(found)}.`, said, found);
        if (!plausibleChunkSize(words)) {
          const text = asciiOfWord(words[1] ?? 0n);
          return verdict("rejected", `malloc says "${facts.crash.message}"${c.cite(said)} for a corrupted block too, and this block's size field reads ${hex(words[1] ?? 0n)}${text ? ` ("${text}")` : ""}${c.cite(found)}, which no free leaves behind: the header was overwritten, not freed before.`, said, found);
        }
        const next = neighbour ? evidence.find(neighbour) : null;
        const damage = neighbourDamage(words, wordsOf(next));
        if (damage) {
          return verdict("rejected", `malloc says "${facts.crash.message}"${c.cite(said)} for a corrupted block too; this block's header is intact${c.cite(found)}, but ${damage.reading}${c.cite(next)}, ${damage.why}: a write past this block's end overwrote it.`, said, found, next);
        }
        const still = pointer !== null && pointer !== 0n ? ` \`${freed}\` still holds ${hex(pointer)}${c.cite(value)}: nothing cleared it after the first free.` : "";
        return verdict("confirmed", `malloc reported "${facts.crash.message}"${c.cite(said)}, and the block's header is intact (size ${hex(chunkSize(words)?.size ?? 0n)})${c.cite(found)}: the block was not overwritten, it was already free.${still}`, said, found, value);
      }
      if (said?.ok && /double free/.test(said.reading ?? "")) {
        const still = pointer !== null && pointer !== 0n ? ` \`${freed}\` still holds ${hex(pointer)}${c.cite(value)}: nothing cleared it after the first free.` : "";
        return verdict("confirmed", `malloc reported "${facts.crash.message}"${c.cite(said)}: the block was already in its free list.${still}`, said, value);
      }
      return verdict("inconclusive", `malloc's message does not name a double free${c.cite(said)}.`, said);
    },
  };
  const corrupted: PlannedHypothesis = {
    rule: "corrupted-chunk",
    statement: "a buffer overflow corrupted the block's metadata and malloc misread it as a double free",
    plan: [[header ?? facts.inCulprit(probes.registers()), tail, ambiguous ? neighbour : null].filter((c) => c !== null)],
    judge(evidence) {
      const found = header ? evidence.find(header) : null;
      const chunk = chunkHeader(found);
      const c = new Citations();
      if (!chunk) return verdict("inconclusive", "The block's header could not be read.", found);
      const next = ambiguous && neighbour ? evidence.find(neighbour) : null;
      const damage = neighbourDamage(wordsOf(found), wordsOf(next));
      if (damage) {
        return verdict(
          "confirmed",
          `The block's own header is intact, its size field ${hex(wordsOf(found)[1] ?? 0n)}${c.cite(found)}, but ${damage.reading}${c.cite(next)}, ${damage.why}: a write ran on past the end of \`${freed}\` into its neighbour.`,
          found,
          next,
        );
      }
      if (plausibleChunkSize(wordsOf(found))) {
        return verdict("rejected", `The block's header is intact: size ${hex(chunk.size)} with flags ${chunk.flags}${c.cite(found)}. An overflow into it would have left an implausible size.`, found);
      }
      const size = wordsOf(found)[1] ?? 0n;
      const text = asciiOfWord(size);
      const before = tail ? evidence.find(tail) : null;
      const tailText = textOf(wordsOf(before));
      return verdict(
        "confirmed",
        `The block's size field reads ${hex(size)}${text ? ` ("${text}")` : ""}${c.cite(found)}, not a size malloc writes${tailText ? `, and the bytes before it, the end of the block in front, read "${tailText}"${c.cite(before)}: a write ran on past that block's end` : ""}.`,
        found,
        tailText ? before : null,
      );
    },
  };
  const otherFrees = (): number[] => {
    if (!facts.source || !member) return [];
    return grep(facts.source, new RegExp(`\\b(free|g_free|delete)\\b\\s*\\(?[^;]*\\b${escape(member)}\\s*\\)?\\s*;`)).filter((n) => n !== facts.culprit?.line);
  };
  return {
    hypotheses: [twice, corrupted],
    investigate: (rule, evidence) =>
      rule === "freed-twice"
        ? notYetRun(evidence, [facts.culpritListing, ...otherFrees().slice(0, 3).map((n) => facts.list(n)), facts.inCaller(probes.locals())])
        : rule === "corrupted-chunk"
          ? notYetRun(evidence, copies.map((n) => facts.list(n)))
          : [],
    conclude(hypotheses, evidence) {
      const overwritten = confirmed(hypotheses, "corrupted-chunk");
      // The block's own header intact and its neighbour's not: the overflow ran off this block's end.
      const intoNeighbour = neighbourDamage(wordsOf(header ? evidence.find(header) : null), wordsOf(neighbour ? evidence.find(neighbour) : null)) !== null;
      if (overwritten) return overwrittenHeaderConclusion(facts, hypotheses, evidence, overwritten, freed, copies, intoNeighbour);
      const hit = confirmed(hypotheses, "freed-twice");
      if (!hit) return undetermined(facts, hypotheses, evidence, "which free released the block first");
      const c = new Citations();
      const earlier = otherFrees()
        .map((n) => ({ n, found: evidence.find(facts.list(n)), fn: enclosingFunction(facts.source, n)?.name ?? null }))
        .filter((e) => e.found?.ok);
      const file = basename(facts.culprit?.file ?? "");
      const summary = `${where(facts.culprit)} freed \`${freed ?? "a block"}\` a second time: ${hit.finding ?? ""}`;
      return conclusion({ facts, evidence, hypotheses, hit }, c, {
        summary,
        cause: [
          earlier.length
            ? `The other free of it: ${earlier.map((e) => `\`${listedCode(e.found)}\` at ${file}:${e.n}${e.fn ? ` in \`${e.fn}\`` : ""}${c.cite(e.found)}`).join("; ")}. That path frees the block and keeps the pointer, so the cleanup at ${file}:${facts.culprit?.line} frees it again.`
            : `No other free of \`${member ?? "it"}\` is in ${file}; the first free happened in code outside this file or through an alias.`,
          `The second free is on the path ${callPath(facts)}.`,
        ],
        withCaller: true,
        confidence: earlier.length ? 0.9 : 0.7,
        recommendations: [
          `Set \`${freed ?? "the pointer"}\` to NULL right after every free of it${earlier[0] ? ` (first at ${file}:${earlier[0].n})` : ""}; free(NULL) is then harmless.`,
          "Give the block one owner that frees it, and run the test suite under AddressSanitizer, which reports both frees' stacks.",
        ],
      });
    },
    openQuestions: [
      { text: "A core records the second free, not the stack of the first one.", question: "Which error path ran before the cleanup? The program's log from before the crash would show where the first free was." },
      { text: "Whether the freed block was used between the two frees cannot be told from the dump.", question: "Can you reproduce under AddressSanitizer to see the first free's stack and any use after it?" },
    ],
  };
}

/**
 * One free of a block whose header a write past the block in front had overwritten: what malloc
 * reported, the header and the text in front of it, and the unbounded copies of the culprit's file.
 */
function overwrittenHeaderConclusion(facts: Facts, hypotheses: Hypothesis[], evidence: Evidence, hit: Hypothesis, freed: string | null, copies: number[], intoNeighbour: boolean) {
  const c = new Citations();
  const file = basename(facts.culprit?.file ?? "");
  const listed = copies
    .map((n) => ({ n, found: evidence.find(facts.list(n)), fn: enclosingFunction(facts.source, n)?.name ?? null }))
    .filter((copy) => copy.found?.ok);
  return conclusion({ facts, evidence, hypotheses, hit }, c, {
    summary: intoNeighbour
      ? `${where(facts.culprit)} freed \`${freed ?? "the block"}\` once; malloc's "${facts.crash.message}"${c.cite(evidence.find(ABORT_MESSAGE))} is said for a block next to a corrupted one too, and that is what it was: a write past the end of \`${freed ?? "the block"}\` overwrote the header of the block after it. ${hit.finding ?? ""}`
      : `The block \`${freed ?? "being freed"}\` that ${where(facts.culprit)} frees had its header overwritten before this free. ${hit.finding ?? ""} malloc reported it as "${facts.crash.message}"${c.cite(evidence.find(ABORT_MESSAGE))}, but it was one free of a corrupted block, not a second free.`,
    cause: [
      intoNeighbour
        ? `A write past the end of \`${freed ?? "the block"}\` (a heap buffer overflow) overwrote the next block's size field; the free only found the damage.`
        : `A write past the end of the block in front of \`${freed ?? "it"}\` (a heap buffer overflow) overwrote its size field; the free only found the damage.`,
      listed.length
        ? `Copies without a bound of their own in ${file}: ${listed.map((copy) => `\`${listedCode(copy.found)}\` at ${file}:${copy.n}${copy.fn ? ` in \`${copy.fn}\`` : ""}${c.cite(copy.found)}`).join("; ")}.`
        : "",
    ],
    confidence: 0.85,
    recommendations: [
      listed.length
        ? `Bound the copy that writes that text ${intoNeighbour ? "into" : "into the block in front of"} \`${freed ?? "it"}\`${listed[0] ? ` (first candidate: ${file}:${listed[0].n}${listed[0].fn ? ` in \`${listed[0].fn}\`` : ""})` : ""} by the destination's size.`
        : intoNeighbour
          ? `Find the write that runs past the end of \`${freed ?? "this block"}\`, and bound it by the block's size.`
          : `Find the write that runs past the end of the block allocated just before \`${freed ?? "this one"}\`, and bound it by that block's size.`,
      "Run the failing case under AddressSanitizer: it stops at the overflowing write, with the block's allocation stack.",
    ],
  });
}

/** The text the words end with: the longest run of wholly printable words at their end; null when the last is not text. */
function textOf(words: bigint[]): string | null {
  const text: string[] = [];
  for (const word of [...words].reverse()) {
    const ascii = asciiOfWord(word);
    if (ascii === null) break;
    text.unshift(ascii);
  }
  return text.length > 0 ? text.join("") : null;
}

export function heapCorruptionPlaybook(facts: Facts): Playbook {
  const message = facts.crash.message ?? "";
  // A "double free or corruption" that triage found to be corruption: the same two hypotheses decide it.
  if (AMBIGUOUS_FREE_MESSAGE.test(message)) return doubleFreePlaybook(facts);
  const invalidFree = /invalid pointer|invalid size|munmap_chunk/.test(message);
  return invalidFree ? invalidFreePlaybook(facts) : overflowPlaybook(facts);
}

function invalidFreePlaybook(facts: Facts): Playbook {
  const freed = freedExpression(facts.line);
  const print = (e: string) => facts.inCulprit(probes.evaluate(e));
  const header = freed ? facts.inCulprit(probes.memory(chunkHeaderAddress(freed), CHUNK_HEADER_WORDS)) : null;
  const interior: PlannedHypothesis = {
    rule: "interior-pointer",
    statement: `\`${freed ?? "the pointer"}\` given to free() in ${where(facts.culprit)} is not the start of a block malloc returned: it points inside one`,
    plan: [[freed ? print(freed) : null, facts.inCulprit(probes.arguments())].filter((c) => c !== null)],
    judge(evidence) {
      const value = freed ? evidence.find(print(freed)) : null;
      const pointer = pointerOf(printed(value));
      const c = new Citations();
      if (pointer === null) return verdict("inconclusive", "The freed pointer could not be printed.", value);
      if (pointer % 16n !== 0n) {
        return verdict("confirmed", `\`${freed}\` is ${hex(pointer)}${c.cite(value)}, ${pointer % 16n} bytes past a 16-byte boundary; malloc only returns 16-byte-aligned blocks, so this points ${pointer % 16n} bytes into one.`, value);
      }
      return verdict("inconclusive", `\`${freed}\` is ${hex(pointer)}${c.cite(value)}, aligned like a block start; it may still be a pointer malloc never returned (stack, static or another allocator).`, value);
    },
  };
  const corrupted: PlannedHypothesis = {
    rule: "corrupted-header",
    statement: "the block was valid but an overflow corrupted its header",
    plan: [[header ?? facts.inCulprit(probes.registers())]],
    judge(evidence) {
      const value = freed ? evidence.find(print(freed)) : null;
      const pointer = pointerOf(printed(value));
      if (pointer !== null && pointer % 16n !== 0n) {
        return verdict("rejected", `The pointer itself is misaligned (${hex(pointer)})${new Citations().cite(value)}: malloc rejects it before reading any header.`, value);
      }
      const found = header ? evidence.find(header) : null;
      return verdict("inconclusive", "The header alone cannot tell a corrupted block from a foreign pointer.", found);
    },
  };
  // Where the pointer was moved: pointer arithmetic in the function that produced it.
  const producer = producerOf(facts);
  return {
    hypotheses: [interior, corrupted],
    investigate: (rule, evidence) =>
      rule === "interior-pointer"
        ? notYetRun(evidence, [
            facts.culpritListing,
            facts.callerListing,
            ...(producer ? producer.lines.map((n) => facts.list(n, n, producer.file.path)) : []),
            facts.inCaller(probes.locals()),
          ])
        : [],
    conclude: concludeOn(facts, ["interior-pointer"], "what was wrong with the freed pointer", ({ evidence, hit }, c) => {
      const moved = producer
        ? producer.lines.map((n) => ({ n, found: evidence.find(facts.list(n, n, producer.file.path)) })).filter((m) => m.found?.ok)
        : [];
      const summary = `${where(facts.culprit)} passed free() a pointer into the middle of a block, and malloc aborted with "${facts.crash.message}"${c.cite(evidence.find(ABORT_MESSAGE))}.`;
      return {
        summary,
        cause: [
          hit.finding ?? "",
          moved.length && producer
            ? `The pointer comes from \`${producer.name}\`, which moves it before returning it: ${moved.map((m) => `\`${listedCode(m.found)}\` at ${basename(producer.file.path)}:${m.n}${c.cite(m.found)}`).join("; ")}. The start of the allocation is lost there.`
            : "",
        ],
        withCaller: true,
        confidence: moved.length ? 0.9 : 0.75,
        recommendations: [
          producer ? `Keep the pointer malloc returned in \`${producer.name}\` and free that one; advance a second pointer (or return an offset) instead of the owner.` : "Free only the exact pointer malloc returned.",
          "AddressSanitizer reports such a free with the allocation's stack.",
        ],
      };
    }),
    openQuestions: [{ text: "The dump shows the bad free, not every caller that might do the same.", question: "Do other callers free pointers obtained from the same function?" }],
  };
}

/** The function whose result the culprit freed (found through the caller's assignment), and its pointer arithmetic. */
function producerOf(facts: Facts): { name: string; file: SourceFile; lines: number[] } | null {
  const file = facts.callerSource;
  if (!file || facts.caller?.line == null) return null;
  const call = codeOf(file.lines[facts.caller.line - 1] ?? "");
  const passed = new RegExp(`${escape(facts.fn ?? "")}\\s*\\(\\s*([A-Za-z_]\\w*)`).exec(call)?.[1];
  if (!passed) return null;
  const assignments = grep(file, new RegExp(`\\b${escape(passed)}\\s*=\\s*([A-Za-z_]\\w*)\\s*\\(`), Math.max(1, facts.caller.line - 30), facts.caller.line);
  const last = assignments.at(-1);
  const name = last === undefined ? null : new RegExp(`\\b${escape(passed)}\\s*=\\s*([A-Za-z_]\\w*)\\s*\\(`).exec(codeOf(file.lines[last - 1] ?? ""))?.[1];
  if (!name) return null;
  const span = functionSpan(file, name);
  if (!span) return null;
  return { name, file, lines: grep(file, /\w+\s*(\+\+|--|\+=|-=)|(\+\+|--)\s*\w+/, span.start, span.end).slice(0, 3) };
}

function overflowPlaybook(facts: Facts): Playbook {
  const top = probes.evaluate(MAIN_ARENA_TOP);
  const topHeader = probes.memory(MAIN_ARENA_TOP, CHUNK_HEADER_WORDS);
  const base = probes.evaluate(HEAP_START);
  const overwritten: PlannedHypothesis = {
    rule: "heap-overflow",
    statement: `a write past the end of a heap block overwrote malloc's metadata ("${facts.crash.message}"); ${where(facts.culprit)} only noticed it`,
    plan: [[top, topHeader]],
    judge(evidence) {
      const found = evidence.find(topHeader);
      const c = new Citations();
      const words = wordsOf(found);
      const text = words.map(asciiOfWord);
      if (words.length >= 2 && text.every((t) => t !== null)) {
        return verdict("confirmed", `The top chunk's header holds the bytes "${text.join("")}"${c.cite(found)}: text was written over it.`, found);
      }
      if (words.length >= 2 && /top size/.test(facts.crash.message ?? "")) {
        return verdict("confirmed", `The top chunk's size field reads ${hex(words[1] ?? 0n)}${c.cite(found)}, which malloc rejected as corrupted.`, found);
      }
      return verdict("inconclusive", `malloc's own state could not be read${c.cite(found ?? evidence.find(top))}; without glibc's symbols the corrupted header cannot be shown.`, found ?? evidence.find(top));
    },
  };
  const culpritsFault: PlannedHypothesis = {
    rule: "culprit-allocation",
    statement: `${where(facts.culprit)}'s own allocation request is the bug`,
    plan: [[facts.inCulprit(probes.arguments()), BACKTRACE]],
    judge(evidence) {
      const args = evidence.find(facts.inCulprit(probes.arguments()));
      const bt = evidence.find(BACKTRACE);
      const c = new Citations();
      return verdict(
        "rejected",
        `It asked for ${args?.reading?.length ? args.reading.map((v) => `${v.name} = ${v.value}`).join(", ") : "memory"}${c.cite(args)}, a valid request; malloc aborted while checking state that an earlier write had left${c.cite(bt)}. The allocation is where the damage was found, not where it was done.`,
        args,
        bt,
      );
    },
  };
  return {
    hypotheses: [overwritten, culpritsFault],
    investigate(rule, evidence) {
      if (rule !== "heap-overflow") return [];
      const start = pointerOf(printed(evidence.find(base)));
      const end = pointerOf(printed(evidence.find(top)));
      if (start === null || end === null) return notYetRun(evidence, [base]);
      const walk = walkHeap(evidence, start, end);
      if (walk.next !== null) return [walk.next];
      if (walk.last === null) return [];
      const text = probes.string(hex(walk.last.address + 16n));
      const written = stringAt(evidence.find(text));
      return notYetRun(evidence, [text, ...(written ? writerLines(facts, written).map((l) => facts.list(l.line, l.line, l.file.path)) : [])]);
    },
    conclude: concludeOn(facts, ["heap-overflow"], "which write corrupted the heap", ({ evidence, hit }, c) => {
      const start = pointerOf(printed(evidence.find(base)));
      const end = pointerOf(printed(evidence.find(top)));
      const walk = start !== null && end !== null ? walkHeap(evidence, start, end) : null;
      const last = walk?.last ?? null;
      const textFound = last ? evidence.find(probes.string(hex(last.address + 16n))) : null;
      const written = stringAt(textFound);
      const writers = written ? writerLines(facts, written).map((l) => ({ ...l, found: evidence.find(facts.list(l.line, l.line, l.file.path)) })).filter((l) => l.found?.ok) : [];
      const usable = last ? last.size - 8n : null;
      const overflowText =
        last && written && usable !== null && BigInt(Buffer.byteLength(written)) + 1n > usable
          ? `The block just below the top chunk (${hex(last.address)}, ${usable} usable bytes${c.cite(last.found)}) holds a ${Buffer.byteLength(written)}-byte string: "${written}"${c.cite(textFound)}. It ran ${BigInt(Buffer.byteLength(written)) + 1n - usable} bytes past its block into the top chunk.`
          : "";
      const writerText = writers.length
        ? `That text is written by ${writers.map((w) => `\`${listedCode(w.found)}\` at ${basename(w.file.path)}:${w.line}${w.fn ? ` in \`${w.fn}\`` : ""}${c.cite(w.found)}`).join("; ")}.`
        : "";
      const summary = `Heap corruption: malloc found its metadata overwritten ("${facts.crash.message}")${c.cite(evidence.find(ABORT_MESSAGE))} when ${where(facts.culprit)} allocated. ${hit.finding ?? ""}`;
      return {
        summary,
        cause: [overflowText, writerText],
        confidence: writerText ? 0.85 : overflowText ? 0.75 : 0.6,
        recommendations: [
          writers[0]
            ? `Size the buffer written at ${basename(writers[0].file.path)}:${writers[0].line} for everything written into it (or use snprintf with the buffer's size, or asprintf).`
            : "Find the write that overflows a heap block: run the same input under AddressSanitizer, which stops at the first byte written out of bounds.",
          `Do not look for the bug in ${where(facts.culprit)}: it is where malloc noticed the damage.`,
        ],
      };
    }),
    openQuestions: [
      { text: "A core shows the damage, not the moment of the out-of-bounds write.", question: "Can you run the failing input under AddressSanitizer (or valgrind) to catch the write as it happens?" },
      { text: "Other blocks may be damaged too; only the first check that failed is visible.", question: "Have there been other unexplained crashes or corrupted output in this process before?" },
    ],
  };
}

/** Walks chunk headers from the heap's start towards the top chunk; `next` is the next read to make. */
function walkHeap(evidence: Evidence, start: bigint, top: bigint): { next: Probe | null; last: { address: bigint; size: bigint; found: Found } | null } {
  let address = start;
  let last: { address: bigint; size: bigint; found: Found } | null = null;
  for (let i = 0; i < MAX_CHUNKS && address < top; i++) {
    const command = probes.memory(hex(address), CHUNK_HEADER_WORDS);
    const found = evidence.find(command);
    if (!found) return { next: command, last };
    const chunk = chunkHeader(found);
    if (!chunk || chunk.size < 0x20n) return { next: null, last: null };
    last = { address, size: chunk.size, found };
    address += chunk.size;
  }
  return { next: null, last: address === top ? last : null };
}

function stringAt(found: Found | null): string | null {
  if (!found?.ok || found.probe.kind !== "string") return null;
  const text = found.reading as string | null;
  return text && text.length >= 8 ? text : null;
}

/** Source lines whose string literal (between its format specifiers) appears in `text`: who wrote it. */
function writerLines(facts: Facts, text: string): { file: SourceFile; line: number; fn: string | null }[] {
  const files = [facts.source, facts.callerSource].filter((f, i, all): f is SourceFile => f !== null && all.indexOf(f) === i);
  const hits: { file: SourceFile; line: number; fn: string | null }[] = [];
  for (const file of files) {
    file.lines.forEach((line, i) => {
      for (const literal of line.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
        const pieces = (literal[1] ?? "").split(/%[-+ #0-9.*]*[a-zA-Z]/).filter((p) => p.length >= 10);
        if (pieces.some((p) => text.includes(p))) hits.push({ file, line: i + 1, fn: enclosingFunction(file, i + 1)?.name ?? null });
      }
    });
  }
  return hits.slice(0, 2);
}
