/**
 * What a chat question asks for, when it is one of the questions the offline engine can answer
 * from the debugger alone. Pure: a question in, an intent out; the patterns are deliberately
 * plain, since a wrong guess costs one cheap debugger command and the answer says what it measured.
 */

/** A thread by gdb's number, the one that received the signal, or the process's main thread. */
export type ThreadRef = number | "crashed" | "main";

/** A frame by level, the culprit frame, or the innermost frame of a named function. */
export type FrameRef = number | "culprit" | { function: string };

export type Intent =
  | { kind: "stack"; thread: ThreadRef }
  | { kind: "all-stacks" }
  | { kind: "threads" }
  | { kind: "locals"; thread: ThreadRef; frame: FrameRef }
  /** `names` empty: all general registers. */
  | { kind: "registers"; names: string[]; thread: ThreadRef; frame: FrameRef }
  | { kind: "fault-address" }
  | { kind: "address"; address: string }
  /** `lock` null: every lock a thread waits for. */
  | { kind: "locks"; lock: string | null }
  | { kind: "null-pointer" }
  | { kind: "value"; expression: string; thread: ThreadRef; frame: FrameRef }
  /** Which goroutine panicked, threw or waits (Go programs). */
  | { kind: "goroutine" }
  /** What a map held (Go's nil map and concurrent map writes). */
  | { kind: "map-contents" }
  /** What was thrown: the uncaught error's class, message and where it was thrown. */
  | { kind: "thrown" }
  | { kind: "crash" }
  | { kind: "fix" }
  | { kind: "unknown" };

/** Register names that read as nothing else in a question. */
const PLAIN_REGISTERS = new Set([
  ...["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "rip", "eflags"],
  ...["r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"],
  ...["eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp", "eip"],
  ...["pc", "sp", "cpsr", "fs_base", "gs_base"],
]);
/** Short names that are also words or abbreviations: a register only as `$name` or next to "register". */
const QUALIFIED_REGISTER = /^(cs|ss|ds|es|fs|gs|fp|lr|x([12]?\d|30)|w([12]?\d|30))$/;

/** A C/C++ lvalue as users type it: `session->client`, `job.request`, `items[2]`, `this->fd`. */
const EXPRESSION = String.raw`[A-Za-z_]\w*(?:(?:->|\.)[A-Za-z_]\w*|\[\w+\])*`;
const ADDRESS = /\b0x[0-9a-f]+\b/i;

export function classifyQuestion(question: string): Intent {
  const q = question.toLowerCase();
  const thread = threadRef(q);
  const address = ADDRESS.exec(q)?.[0] ?? null;

  // "How do I fix it?", "what should I change?", "how to prevent this": the report's recommendations.
  if (/\b(fix(es|ed|ing)?|repair|patch|prevent|avoid|remed(y|ies)|recommend(ation)?s?|what (should|do|can) (i|we) (do|change))\b/.test(q)) return { kind: "fix" };
  if (/\bgoroutines?\b/.test(q)) return { kind: "goroutine" };
  if (/\bwhat (was|got|is being|did it) (thrown|throw)\b|\bwhat threw\b|\b(which|what) (error|exception)\b|\b(error|exception)('s| object'?s?)? (class|type|message)\b|\bthrown (error|exception|value)\b/.test(q)) return { kind: "thrown" };
  if (address === null && /\bmaps?\b/.test(q) && /\b(what|contents?|in|held|hold|holds|inside|entries)\b/.test(q)) return { kind: "map-contents" };
  const aboutOwner = /\b(holds?|held|owner|owns)\b/.test(q) && (/\bwho\b/.test(q) || address !== null);
  if (aboutOwner || /\b(locks?|locked|mutex(es)?|deadlock(s|ed)?)\b/.test(q)) return { kind: "locks", lock: address };
  if (/\bfault(ing)?\s+addr(ess)?\b|\bsi_addr\b|\baddress\b.*\b(fault|crash|segfault)|\b(fault|crash|segfault)\w*\b.*\baddress\b/.test(q)) {
    return { kind: "fault-address" };
  }
  const names = registerNames(q);
  if (names.length > 0 || /\bregisters?\b/.test(q)) return { kind: "registers", names, thread, frame: frameRef(question) ?? 0 };
  if (address !== null) return { kind: "address", address };
  if (/\blocals?\b|\blocal variables?\b|\bvariables\b|\bargs\b|\barguments\b/.test(q)) {
    return { kind: "locals", thread, frame: frameRef(question) ?? "culprit" };
  }
  if (/\bnull(ptr)?\b/.test(q) && /\b(which|what|who|pointer|is|was)\b/.test(q)) return { kind: "null-pointer" };
  const expression = valueExpression(question);
  if (expression !== null) return { kind: "value", expression, thread, frame: frameRef(question) ?? "culprit" };
  if (/\b(all|every|each|other)\s+threads?\b.*\b(stacks?|backtraces?|doing)\b|\ball (the )?(stacks|backtraces)\b/.test(q)) return { kind: "all-stacks" };
  if (/\b(stack|stacks|backtraces?|bt|call ?stack|call chain|frames|stack ?trace)\b/.test(q) || (typeof thread === "number" && /\bdoing\b/.test(q))) {
    return { kind: "stack", thread };
  }
  if (/\bthreads\b/.test(q)) return { kind: "threads" };
  if (/\b(why|how come|what happened|root cause|cause[sd]?|crash(ed|es|ing)?|fail(ed|s|ure)?|die[sd]?|signal|culprit|summary|summari[sz]e|explain|segfault(ed)?)\b/.test(q)) {
    return { kind: "crash" };
  }
  return { kind: "unknown" };
}

function threadRef(q: string): ThreadRef {
  const numbered = /\bthread\s*#?\s*(\d+)\b/.exec(q);
  if (numbered) return Number(numbered[1]);
  if (/\bmain thread\b/.test(q)) return "main";
  return "crashed";
}

/**
 * `frame 2`, `frame #2`, `#2`, "the culprit frame", and a function: "function parse_value",
 * "send_to_client()", or "of/in transfer_funds" (a name no English word looks like).
 */
function frameRef(question: string): FrameRef | null {
  const level = /\bframe\s*#?\s*(\d+)\b|(?:^|\s)#(\d+)\b/i.exec(question);
  if (level) return Number(level[1] ?? level[2]);
  if (/\b(culprit|crashing|faulting|crashed)\s+frame\b/i.test(question)) return "culprit";
  const named =
    /\b(?:function|func)\s+`?([A-Za-z_][\w:~]*)`?/.exec(question) ??
    /`?([A-Za-z_][\w:~]*)`?\s*\(\)/.exec(question) ??
    /\b(?:of|in|for)\s+`?([A-Za-z_]\w*(?:_|::)[\w:~]*)`?/.exec(question);
  return named?.[1] ? { function: named[1] } : null;
}

function registerNames(q: string): string[] {
  const names: string[] = [];
  const nearRegisterWord = /\bregisters?\b/.test(q);
  for (const match of q.matchAll(/(\$?)\b([a-z][a-z0-9_]*)\b/g)) {
    const [, dollar, name = ""] = match;
    const isRegister = PLAIN_REGISTERS.has(name) || (QUALIFIED_REGISTER.test(name) && (dollar === "$" || nearRegisterWord));
    if (isRegister && !names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * The expression of "what is `x`", "value of session->client", "print job.request": code in
 * backticks, or an expression that cannot be an English word (it has `->`, `.` or `[`).
 */
function valueExpression(question: string): string | null {
  const quoted = new RegExp(`\`(${EXPRESSION})\``).exec(question);
  if (quoted?.[1]) return quoted[1];
  const asked = new RegExp(`\\b(?:value of|print|p|what (?:is|was|were|are)(?: the value of)?|show(?: me)?)\\s+(?:the\\s+)?(${EXPRESSION})`, "i").exec(question);
  const candidate = asked?.[1];
  return candidate && /->|\.|\[/.test(candidate) ? candidate : null;
}
