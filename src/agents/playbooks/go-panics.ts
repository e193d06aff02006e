/**
 * Go's panics and throws as a Go engineer reads them: the runtime already said what went wrong
 * (triage read its message from the goroutine's `_panic` or the throw's argument), so the questions
 * are which value at the culprit's line it was about, and whether the dump can show that value.
 * A Go runtime error is unambiguous about its kind; the alternatives are rejected on what it said.
 */
import type { Evidence } from "../evidence.js";
import { concludeOn } from "./conclusions.js";
import type { Facts } from "./facts.js";
import { culpritVariables, goWhere, mapTypeOf, readable, unreadableText } from "./go-frames.js";
import { BACKTRACE, Citations, deeperProbes, verdict, type PlannedHypothesis, type Playbook } from "./kit.js";
import { callPath, quoteLine, where } from "./prose.js";
import { codeOf, indexedAccesses, insideParentheses, splitTopLevel } from "./source.js";

const NIL_MAP = /^assignment to entry in nil map$/;
const INDEX = /^runtime error: index out of range \[(-?\d+)\](?: with length (\d+))?$/;
const SLICE = /^runtime error: slice bounds out of range/;
const NIL_POINTER = /invalid memory address or nil pointer dereference/;
const CONCURRENT_MAP = /^fatal error: concurrent map (writes|read and map write|iteration and map write)$/;
/** The runtime's throws when the heap cannot grow: `out of memory` (no address space left), `runtime: out of memory` (the OS refused to map it), and the metadata's own. */
const OUT_OF_MEMORY = /^fatal error: (runtime: )?out of memory\b/;

/** The Go playbook for a panic or a throw; null for what the runtime's message does not name. */
export function goPanicPlaybook(facts: Facts): Playbook | null {
  const message = facts.crash.message ?? "";
  if (NIL_MAP.test(message)) return nilMap(facts);
  if (INDEX.test(message) || SLICE.test(message)) return indexOutOfRange(facts);
  if (CONCURRENT_MAP.test(message)) return concurrentMapWrites(facts);
  if (OUT_OF_MEMORY.test(message)) return outOfMemory(facts);
  if (facts.crash.kind === "null-dereference" || NIL_POINTER.test(message)) return nilPointer(facts);
  if (facts.crash.kind === "panic" && !/^(runtime error|fatal error):/.test(message) && message !== "") return programPanic(facts);
  if (/^(runtime error|fatal error):/.test(message)) return runtimeStop(facts);
  return null;
}

/** The probes every Go hypothesis reads: the crashing thread's stack (whether the culprit's frame is on it) and the culprit's line. */
function plan(facts: Facts) {
  return [[BACKTRACE, ...(facts.culpritListing ? [facts.culpritListing] : [])]];
}

/** The listing of the culprit's line, when it was read. */
function listed(facts: Facts, evidence: Evidence) {
  const found = evidence.find(facts.culpritListing);
  return found?.ok ? found : null;
}

/** The culprit's line as written, quoted, or a phrase saying it is not on this machine. */
function lineText(facts: Facts): string {
  return quoteLine(facts.line) ?? "its line (the source is not on this machine)";
}

/** The rival every runtime stop rules out: the program's own panic(...), whose value the message is not. */
function notTheProgramsPanic(facts: Facts, message: string) {
  return saidByRuntime(facts, "program-panic", "the program's own panic(...) fired", false, () => "", `The message is the runtime's ("${message}"), not a value the program passed to panic`);
}

/** A Go hypothesis decided by the runtime's own words: confirmed when `decides` holds of the message. */
function saidByRuntime(facts: Facts, rule: string, statement: string, decides: boolean, confirmedText: (c: Citations, evidence: Evidence) => string, rejectedText: string): PlannedHypothesis {
  return {
    rule,
    statement,
    plan: plan(facts),
    judge(evidence) {
      const c = new Citations();
      const bt = evidence.find(BACKTRACE);
      const code = listed(facts, evidence);
      if (decides) return verdict("confirmed", confirmedText(c, evidence), bt, code);
      return verdict("rejected", `${rejectedText}${c.cite(bt)}.`, bt);
    },
  };
}

function investigate(facts: Facts): Playbook["investigate"] {
  return (rule, evidence) => [...deeperProbes([facts.callerListing])(rule, evidence), ...culpritVariables(facts, evidence)];
}

function conclude(facts: Facts, rule: string, what: string, findings: Parameters<typeof concludeOn>[3]): Playbook["conclude"] {
  return concludeOn(facts, [rule], what, findings);
}

function nilMap(facts: Facts): Playbook {
  const map = indexedAccesses(facts.line ?? "")[0]?.base ?? null;
  const field = map?.split(".").at(-1) ?? null;
  const type = field ? mapTypeOf(facts.source, field) : null;
  const neverMade = saidByRuntime(
    facts,
    "nil-map",
    `the map written at ${where(facts.culprit)}${map ? ` (\`${map}\`)` : ""} is nil: it was never made with make`,
    true,
    (c, evidence) => `The runtime panicked with "assignment to entry in nil map": only a write to a nil map raises it${c.cite(evidence.find(BACKTRACE))}. The line is ${lineText(facts)}${c.cite(listed(facts, evidence))}${map ? `, so \`${map}\` was nil` : ""}.`,
    "",
  );
  const concurrent = saidByRuntime(facts, "concurrent-map", "the map was written by several goroutines at once", false, () => "", 'The runtime said "assignment to entry in nil map", not "concurrent map writes", which it throws when it catches two writers');
  return {
    hypotheses: [neverMade, concurrent],
    investigate: investigate(facts),
    conclude: conclude(facts, "nil-map", "which map was nil", ({ evidence, hit }, c) => {
      const shown = readable(facts, evidence, map);
      return {
        summary: `${goWhere(facts)} wrote to a nil map${map ? ` — \`${map}\`` : ""} — at ${lineText(facts)}${c.cite(listed(facts, evidence))}: Go panicked with "${facts.crash.message}". ${field ? `The struct's \`${field}\` field` : "The map"} was never initialised with make, so it held nothing.`,
        cause: [hit.finding ?? "", shown ? shown.text + c.cite(shown.found) : unreadableText(facts, evidence, map, c), `A map's zero value is nil: reading it yields zero values, but the first write panics. It was called on the path ${callPath(facts)}.`],
        confidence: map ? 0.9 : 0.8,
        recommendations: [
          field
            ? `Make the map where the struct is built: a constructor such as \`New…()\` returning \`&T{${field}: make(${type ?? "map[K]V"})}\`, and use it everywhere instead of a bare \`&T{}\`; or make it lazily before the write: \`if ${map} == nil { ${map} = make(${type ?? "map[K]V"}) }\`.`
            : "Initialise the map with make before the first write, in the constructor of the struct that holds it.",
          "Add a test that uses the zero value of the struct (or its constructor) and writes once: the panic reproduces without a dump.",
        ],
      };
    }),
    openQuestions: [{ text: "Which code built the struct without its map is outside the dump.", question: `Where is the struct holding ${map ? `\`${map}\`` : "the map"} constructed, and is there a constructor every caller should use?` }],
  };
}

function indexOutOfRange(facts: Facts): Playbook {
  const message = facts.crash.message ?? "";
  const [, index, length] = INDEX.exec(message) ?? [];
  const access = indexedAccesses(facts.line ?? "")[0] ?? null;
  const slice = access ? `\`${access.base}\`` : "the slice";
  const pastEnd = index !== undefined && Number(index) >= 0;
  const tooFar = saidByRuntime(
    facts,
    "index-past-end",
    `the index at ${where(facts.culprit)} ran past the end of ${slice}`,
    pastEnd || SLICE.test(message),
    (c, evidence) =>
      `The runtime's bounds check failed: "${message}"${c.cite(evidence.find(BACKTRACE))}${index !== undefined ? ` — index ${index}${length !== undefined ? ` into ${slice} of length ${length}` : ""}` : ""}. The line is ${lineText(facts)}${c.cite(listed(facts, evidence))}${access ? `: \`${access.index}\` was ${index ?? "out of range"}` : ""}.`,
    `The index was ${index}, below zero`,
  );
  const negative = saidByRuntime(facts, "negative-index", "the index was negative (an underflowed computation)", index !== undefined && Number(index) < 0, (c, evidence) => `The runtime reported the negative index ${index}${c.cite(evidence.find(BACKTRACE))}.`, `The runtime reported index ${index ?? "?"}, not a negative one`);
  return {
    hypotheses: [tooFar, negative],
    investigate: investigate(facts),
    conclude: concludeOn(facts, ["index-past-end", "negative-index"], "which index was out of range", ({ evidence, hit }, c) => {
      const shown = readable(facts, evidence, access?.base ?? null);
      return {
        summary: `${goWhere(facts)} indexed ${slice}${access ? ` with \`${access.index}\`` : ""} at ${lineText(facts)}${c.cite(listed(facts, evidence))}: Go panicked with "${message}"${index !== undefined && length !== undefined ? ` — index ${index}, but ${slice} holds ${length} element${length === "1" ? "" : "s"} (valid indexes 0..${Number(length) - 1})` : ""}.`,
        cause: [hit.finding ?? "", shown ? shown.text + c.cite(shown.found) : unreadableText(facts, evidence, access?.base ?? null, c), `It was called on the path ${callPath(facts)}.`],
        confidence: index !== undefined ? 0.9 : 0.8,
        recommendations: [
          `Check the index against the length before indexing: \`if ${access?.index ?? "i"} >= len(${access?.base ?? "s"}) { … }\` returning an error or ending the loop, or iterate with \`for i := range ${access?.base ?? "s"}\`.`,
          `Find where \`${access?.index ?? "the index"}\` is advanced: it went past the last element (an off-by-one, or a cursor not reset when the slice shrank).`,
        ],
      };
    }),
    openQuestions: [{ text: "Why the index outran the slice depends on how it is advanced, which the dump shows only as its last value.", question: `What bounds \`${access?.index ?? "the index"}\`, and can ${slice} shrink while it is in use?` }],
  };
}

function concurrentMapWrites(facts: Facts): Playbook {
  const map = indexedAccesses(facts.line ?? "")[0]?.base ?? null;
  const shared = saidByRuntime(
    facts,
    "unsynchronized-map",
    `${map ? `\`${map}\`` : "the map"} is shared by goroutines that write it without a lock`,
    true,
    (c, evidence) => `The runtime threw "${facts.crash.message}"${c.cite(evidence.find(BACKTRACE))}: a map's writer sets a flag the next writer checks, so two goroutines were inside a write to the same map at once. The write is ${lineText(facts)}${c.cite(listed(facts, evidence))}.`,
    "",
  );
  const nilMapped = saidByRuntime(facts, "nil-map", "the map was nil", false, () => "", "A nil map panics with \"assignment to entry in nil map\" before any concurrency check; this map was made and in use");
  return {
    hypotheses: [shared, nilMapped],
    investigate: investigate(facts),
    conclude: conclude(facts, "unsynchronized-map", "which map was shared", ({ evidence, hit }, c) => ({
      summary: `${goWhere(facts)} wrote ${map ? `\`${map}\`` : "a map"} at ${lineText(facts)}${c.cite(listed(facts, evidence))} while another goroutine was writing it: Go threw "${facts.crash.message}". Maps are not safe for concurrent use; nothing guards this one.`,
      cause: [hit.finding ?? "", `The throw is fatal (recover cannot catch it) and the runtime detects it only sometimes, so the race is older than this crash. It was called on the path ${callPath(facts)}.`],
      confidence: 0.9,
      recommendations: [
        `Guard ${map ? `\`${map}\`` : "the map"} with a sync.Mutex held around every read and write (a sync.RWMutex if reads dominate), kept next to it in the struct; or use sync.Map for keys written once and read many times.`,
        "Run the tests and a load test with the race detector (`go test -race ./...`, `go build -race`): it names both goroutines' stacks at the racing accesses.",
      ],
    })),
    openQuestions: [{ text: "The other writer's stack is not in the dump: the runtime caught this goroutine only.", question: `Which goroutines write ${map ? `\`${map}\`` : "the map"}, and which lock did the design intend to protect it?` }],
  };
}

function nilPointer(facts: Facts): Playbook {
  const fault = facts.crash.faultAddress;
  const line = facts.line ?? "";
  const pointer = /([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\.[A-Za-z_]\w*/.exec(line)?.[1] ?? null;
  const inNullPage = fault !== null && BigInt(fault) < 0x10000n;
  const nilDeref = saidByRuntime(
    facts,
    "nil-pointer",
    `a nil pointer${pointer ? ` (\`${pointer}\`)` : ""} was dereferenced at ${where(facts.culprit)}`,
    inNullPage,
    (c, evidence) => `The runtime turned a SIGSEGV at ${fault} into "${facts.crash.message}"${c.cite(evidence.find(BACKTRACE))}; ${fault} is in the never-mapped first page, the address of a field of a nil pointer. The line is ${lineText(facts)}${c.cite(listed(facts, evidence))}${pointer ? `: \`${pointer}\` was nil` : ""}.`,
    `The fault address ${fault ?? "is unknown"}, not within the first page a nil pointer's fields lie in`,
  );
  const wild = saidByRuntime(facts, "wild-pointer", "a corrupted (non-nil) pointer was dereferenced (unsafe or cgo code)", fault !== null && !inNullPage, (c, evidence) => `The fault address ${fault}${c.cite(evidence.find(BACKTRACE))} is not a nil pointer's field: a pointer held garbage.`, `The fault address ${fault ?? "?"} is a nil pointer's field, not garbage`);
  return {
    hypotheses: [nilDeref, wild],
    investigate: investigate(facts),
    conclude: concludeOn(facts, ["nil-pointer", "wild-pointer"], "which pointer was nil", ({ evidence, hit }, c) => {
      const shown = readable(facts, evidence, pointer);
      const verb = facts.crash.access === "write" ? "writing" : "reading";
      return {
        summary: `${goWhere(facts)} dereferenced a nil pointer${pointer ? `, \`${pointer}\`,` : ""} at ${lineText(facts)}${c.cite(listed(facts, evidence))}, ${verb} address ${fault ?? "unknown"}: Go panicked with "${facts.crash.message}".`,
        cause: [hit.finding ?? "", shown ? shown.text + c.cite(shown.found) : unreadableText(facts, evidence, pointer, c), `It was called on the path ${callPath(facts)}.`],
        confidence: hit.rule === "nil-pointer" ? 0.85 : 0.6,
        recommendations: [
          `Check \`${pointer ?? "the pointer"}\` for nil where it is set or before it is used, and return an error naming the record instead of dereferencing it.`,
          "Find where the value is built without it (a lookup that returns nil on a miss, a struct literal that leaves the field out) and make that path set it or fail early.",
        ],
      };
    }),
    openQuestions: [{ text: "Why the pointer was nil is decided where it was set, outside the culprit.", question: `Can \`${pointer ?? "the pointer"}\` legitimately be nil, and if so, what should the code do then?` }],
  };
}

function programPanic(facts: Facts): Playbook {
  const line = facts.line ?? "";
  const atPanic = /\bpanic\(/.test(line);
  const own = saidByRuntime(
    facts,
    "program-panic",
    `the program's own panic(...) at ${where(facts.culprit)} fired`,
    atPanic || facts.line === null,
    (c, evidence) => `The panic value is the program's own: "${facts.crash.message}", not a runtime error${c.cite(evidence.find(BACKTRACE))}. ${atPanic ? `The culprit's line calls panic: ${lineText(facts)}${c.cite(listed(facts, evidence))}.` : "The culprit's source is not on this machine to show the call."}`,
    "",
  );
  const runtime = saidByRuntime(facts, "runtime-error", "the runtime raised the panic (a runtime.Error)", false, () => "", `A runtime error's message starts with "runtime error:"; this one is "${facts.crash.message}"`);
  return {
    hypotheses: [own, runtime],
    investigate: investigate(facts),
    conclude: conclude(facts, "program-panic", "why the program panicked", ({ evidence, hit }, c) => ({
      summary: `${goWhere(facts)} called panic with "${facts.crash.message}"${atPanic ? ` at ${lineText(facts)}${c.cite(listed(facts, evidence))}` : ""}: the program gave up on a condition it checks itself, and nothing recovered.`,
      cause: [hit.finding ?? "", `It was called on the path ${callPath(facts)}.`],
      confidence: atPanic ? 0.9 : 0.75,
      recommendations: [
        `If the condition can happen with real input, return an error from \`${facts.fn ?? "the culprit"}\` and let the caller report it instead of panicking.`,
        "If it must never happen, find what broke the invariant before the panic: the inputs on the path are in the callers' frames (dlv core svc core, then goroutine, frame and locals).",
      ],
    })),
    openQuestions: [{ text: "The condition the program checks is its own; the dump shows that it failed, not why.", question: `What does "${facts.crash.message}" mean for this service, and which input can cause it?` }],
  };
}

/** The allocation a line of Go makes, as written: `make([]byte, declared)` and the expression its size is, when the line calls make, append or new. */
function allocationOf(line: string | null): { call: string; size: string | null } | null {
  const code = codeOf(line ?? "");
  const call = /\b(make|append|new)\(/.exec(code);
  if (!call?.[1]) return null;
  const inside = insideParentheses(code, call.index + call[0].length);
  if (inside === null) return null;
  // make(T, len[, cap]) sizes by its length (its capacity when given); append and new by what they copy or build.
  const args = splitTopLevel(inside);
  const size = call[1] === "make" ? (args[2] ?? args[1] ?? null) : null;
  return { call: `${call[1]}(${inside})`, size: size && /^[A-Za-z_][\w.]*$/.test(size) ? size : null };
}

/**
 * The heap could not grow: the runtime asked the OS for memory and was refused (a container's
 * limit, ulimit -v, the machine's). The allocation that failed is the last one, not necessarily
 * what holds the memory; the dump says which allocation it was, and its size where a debugger
 * prints the culprit's variables.
 */
function outOfMemory(facts: Facts): Playbook {
  const message = facts.crash.message ?? "";
  const allocation = allocationOf(facts.line);
  const refused = saidByRuntime(
    facts,
    "heap-exhausted",
    `the heap could not grow for the allocation at ${where(facts.culprit)}`,
    true,
    (c, evidence) =>
      `The runtime threw "${message}"${c.cite(evidence.find(BACKTRACE))}: it asked the operating system for more memory for the heap and was refused, which no Go code can recover from. The allocation was ${lineText(facts)}${c.cite(listed(facts, evidence))}${allocation ? `, \`${allocation.call}\`${allocation.size ? ` sized by \`${allocation.size}\`` : ""}` : ""}.`,
    "",
  );
  const own = notTheProgramsPanic(facts, message);
  return {
    hypotheses: [refused, own],
    investigate: investigate(facts),
    conclude: conclude(facts, "heap-exhausted", "what exhausted the memory", ({ evidence, hit }, c) => {
      const shown = allocation?.size ? readable(facts, evidence, allocation.size) : null;
      return {
        summary: `${goWhere(facts)} allocated at ${lineText(facts)}${c.cite(listed(facts, evidence))} when the Go heap could not grow any more: the runtime threw "${message}".${allocation?.size ? ` The allocation's size is \`${allocation.size}\`.` : ""}`,
        cause: [
          hit.finding ?? "",
          allocation?.size ? (shown ? shown.text + c.cite(shown.found) : unreadableText(facts, evidence, allocation.size, c)) : "",
          `It was called on the path ${callPath(facts)}. The allocation that failed is the one that found no memory left, not necessarily what holds the memory: the heap the program keeps alive filled what the process may use.`,
        ],
        confidence: allocation ? 0.8 : 0.7,
        recommendations: [
          allocation?.size
            ? `Bound \`${allocation.size}\` before \`${allocation.call}\`: a size that comes from a client or a file (a declared length, a count) must be checked against a limit, and a large body streamed (io.Copy to its destination) instead of buffered whole.`
            : `Find what keeps the heap full when ${lineText(facts)} runs: buffers kept per request or per connection, caches without a bound, goroutines that never end and hold their data.`,
          "Set GOMEMLIMIT (Go 1.19 and later) a little below the process's limit (the container's memory limit, ulimit -v), so the garbage collector works harder before the limit is reached; it cannot save a heap that live data fills.",
          "See what holds the heap before the limit: a heap profile (`/debug/pprof/heap`, or runtime/pprof's WriteHeapProfile) names the allocation sites of live memory.",
        ],
      };
    }),
    openQuestions: [{ text: "The limit the process ran under (ulimit -v, a container's memory limit) is not in the dump.", question: `How much memory may the service use, and how large can ${allocation?.size ? `\`${allocation.size}\`` : "its allocations"} get with real traffic?` }],
  };
}

/** Any other runtime error or throw (a failed conversion, a stack overflow): the runtime's words are the verdict. */
function runtimeStop(facts: Facts): Playbook {
  const message = facts.crash.message ?? "";
  const thrown = message.startsWith("fatal error:");
  const said = saidByRuntime(
    facts,
    "runtime-stopped",
    `the Go runtime stopped the program at ${where(facts.culprit)} on a check of its own`,
    true,
    (c, evidence) => `The runtime ${thrown ? "threw" : "panicked with"} "${message}"${c.cite(evidence.find(BACKTRACE))} at ${lineText(facts)}${c.cite(listed(facts, evidence))}.`,
    "",
  );
  const own = notTheProgramsPanic(facts, message);
  return {
    hypotheses: [said, own],
    investigate: investigate(facts),
    conclude: conclude(facts, "runtime-stopped", "what the runtime stopped on", ({ evidence, hit }, c) => {
      const shown = readable(facts, evidence, null);
      if (facts.crash.kind === "stack-overflow") return goStackOverflow(facts, c, evidence, hit.finding);
      return {
        summary: `${goWhere(facts)} ${thrown ? "made the Go runtime throw" : "failed a Go runtime check"} at ${lineText(facts)}${c.cite(listed(facts, evidence))}: "${message}".`,
        cause: [hit.finding ?? "", shown ? shown.text + c.cite(shown.found) : "", `It was called on the path ${callPath(facts)}.`],
        confidence: 0.7,
        recommendations: [
          `Read the runtime's message against ${lineText(facts)}: it names the check that failed; guard the value it is about before this line.`,
          thrown ? "A throw cannot be recovered: rerun the workload with GOTRACEBACK=all (or crash) and, for shared data, with the race detector (`go build -race`)." : "Recover only at a boundary (a request handler) and log the value; fix the cause at the line named.",
        ],
      };
    }),
    openQuestions: [{ text: "Which input drove the program to this runtime check is outside the dump.", question: `Which request or data was being processed when "${message}" happened?` }],
  };
}

/**
 * A goroutine's stack passed its limit (Go's "fatal error: stack overflow"): a recursion that does
 * not end, usually over data that contains itself. Said as such only where the dump shows it.
 */
function goStackOverflow(facts: Facts, c: Parameters<Parameters<typeof conclude>[3]>[1], evidence: Parameters<Parameters<typeof conclude>[3]>[0]["evidence"], finding: string | null) {
  const recursion = facts.triage.recursion;
  const name = facts.culprit?.function ?? "the culprit";
  const repeats = recursion && recursion.cycle.length > 0 ? `The stack repeats ${recursion.cycle.map((f) => `\`${f}\``).join(" → ")} about ${recursion.depth} times.` : "";
  return {
    summary: `${goWhere(facts)} recursed at ${lineText(facts)}${c.cite(listed(facts, evidence))} until its goroutine's stack passed the runtime's limit: "${facts.crash.message ?? "fatal error: stack overflow"}".`,
    cause: [finding ?? "", repeats, `It was called on the path ${callPath(facts)}.`],
    confidence: recursion ? 0.85 : 0.75,
    recommendations: [
      `Find what should end \`${name}\`'s recursion at ${lineText(facts)}: data that contains itself (a cycle in what it walks) or a base case never reached; keep a set of what was visited, or bound the depth and return an error.`,
      "A recursion that is bounded but deeper than the stack allows (debug.SetMaxStack, 1 GB by default on 64-bit) is better written as a loop with an explicit stack.",
    ],
  };
}
