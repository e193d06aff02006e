/** The JSON report of the design (schemaVersion 1): the contract tests and users rely on. */
import { z } from "../zod.js";

const CRASH_KINDS = [
  "null-dereference",
  "bad-jump",
  "invalid-memory-access",
  "stack-overflow",
  "stack-buffer-overflow",
  "double-free",
  "heap-corruption",
  "assertion-failure",
  "abort",
  "uncaught-exception",
  "out-of-memory",
  "pure-virtual-call",
  "division-by-zero",
  "illegal-instruction",
  "bus-error",
  "panic",
  "deadlock",
  "hang",
  "breakpoint",
  "fortify-failure",
  "unknown",
] as const;

const CrashKindSchema = z.enum(CRASH_KINDS);
export type CrashKind = z.infer<typeof CrashKindSchema>;

/**
 * The first frame in the program's own code responsible for the crash, in any language: libc,
 * libstdc++, the loader, language runtimes and the abort/assert/terminate/panic machinery skipped.
 */
const CulpritSchema = z.object({
  function: z.string().nullable(),
  /** Null without debug information, as is `line`. */
  file: z.string().nullable(),
  line: z.number().int().nullable(),
  /** The 1-based column in `line`, where a runtime read one (the expression a JavaScript error was thrown at); null where not. */
  column: z.number().int().nullable().default(null),
  /** Frame number in the crashing thread's backtrace. */
  frame: z.number().int().nullable(),
  /** The executable or shared object the culprit's code lives in. */
  module: z.string().nullable(),
  /** The culprit's language where it is known (`java`, `c`); null where not. Null only in a report written before languages were recorded. */
  language: z.string().nullable().default(null),
});
export type Culprit = z.infer<typeof CulpritSchema>;

/** A runtime the program ran on, read with its own post-mortem tools. */
const RuntimeSchema = z.object({
  name: z.enum(["jvm", "node", "cpython", "go"]),
  /** As the runtime names its version (`17.0.15+6-Debian-1deb12u1`). */
  version: z.string().nullable(),
  /** What read its frames, with its version: `jhsdb (JVM 17.0.15+6-Debian-1deb12u1)`. */
  source: z.string(),
});
export type Runtime = z.infer<typeof RuntimeSchema>;

const DeadlockEdgeSchema = z.object({
  /** gdb's thread number of a thread in the cycle. */
  thread: z.number().int(),
  function: z.string().nullable(),
  file: z.string().nullable(),
  line: z.number().int().nullable(),
  /** Address of the lock this thread waits for. */
  lock: z.string().nullable(),
  /** The lock's name where the debugger knows it: a global (`audit_log`) or the waiting call's expression (`to->lock`). */
  lockName: z.string().nullable().optional(),
  /** The thread that holds that lock. */
  heldByThread: z.number().int().nullable(),
});

const ORIGIN_TYPES = ["fault", "sent", "raised", "requested", "exception", "unreadable"] as const;
export type OriginType = (typeof ORIGIN_TYPES)[number];

/**
 * Where the stop came from, decided on evidence and never on one field alone: the CPU faulted, another
 * process sent a signal, the program raised it itself, someone asked for the dump, or a software
 * exception went unhandled; `unreadable` where neither the dump's file nor the debugger showed the
 * stop (a debugger that read no registers: built for another processor than the dump's).
 */
const OriginSchema = z.object({
  type: z.enum(ORIGIN_TYPES),
  /** The process that sent the signal (`sent`; `raised` names the process itself), as the signal record gives it. */
  sender: z.object({ pid: z.number().int().nullable(), uid: z.number().int().nullable() }).nullable(),
  /** What decided it, and what disagreed. */
  evidence: z.string(),
});
export type Origin = z.infer<typeof OriginSchema>;

const EXPLOITABILITY_RATINGS = ["exploitable", "probably-exploitable", "probably-not-exploitable", "not-exploitable", "unknown"] as const;

/** How exploitable the crash looks, as CASR and `!exploitable` rate it, with the evidence for it. */
const ExploitabilitySchema = z.object({
  rating: z.enum(EXPLOITABILITY_RATINGS),
  reasons: z.array(z.string()),
});
export type Exploitability = z.infer<typeof ExploitabilitySchema>;

/** Crashpad's annotations, when the dump has them: what the client kept beside the crash. */
const AnnotationsSchema = z.object({
  reportId: z.string().nullable(),
  clientId: z.string().nullable(),
  simple: z.record(z.string(), z.string()),
  modules: z.array(
    z.object({
      module: z.string().nullable(),
      list: z.array(z.string()),
      simple: z.record(z.string(), z.string()),
      objects: z.record(z.string(), z.string()),
    }),
  ),
});

/** A core cut short (RLIMIT_CORE, systemd's ProcessSizeMax): where its file ends and the memory it lost, which is unknown, not zeros. */
const CutSchema = z.object({
  /** The bytes the file holds: where it was cut. */
  at: z.number().int(),
  /** The bytes its headers describe. */
  expectedBytes: z.number().int(),
  /** The bytes of memory lost, all segments counted. */
  lostBytes: z.number().int(),
  /** The segments lost, in the file's order, the first 32 of them. */
  segments: z.array(
    z.object({
      start: z.string(),
      end: z.string(),
      permissions: z.string(),
      lostBytes: z.number().int(),
      /** None of it is in the file (else its first part is). */
      whole: z.boolean(),
      /** The file mapped there, or the stack of the thread whose stack pointer points into it; null for other anonymous memory. */
      holds: z.string().nullable(),
    }),
  ),
  /** Segments lost beyond those listed. */
  moreSegments: z.number().int(),
});
export type Cut = z.infer<typeof CutSchema>;

export const CrashSchema = z.object({
  /** What kind of crash or hang it is. */
  kind: CrashKindSchema,
  /** The signal's name (`SIGSEGV`), or a Windows exception's (`EXCEPTION_ACCESS_VIOLATION`). */
  signal: z.string().nullable(),
  /** The signal's code (`SEGV_MAPERR`), or the exception's code. */
  signalCode: z.string().nullable(),
  /** The address the faulting access was to, in hex. */
  faultAddress: z.string().nullable(),
  /** Whether the faulting access read, wrote or executed. */
  access: z.enum(["read", "write", "execute"]).nullable(),
  /** The abort or assertion message, the panic's value, or the exception's type and message. */
  message: z.string().nullable(),
  /** The thread that crashed (a goroutine's id for a Go program). */
  thread: z.object({
    /** The debugger's number of the thread. */
    id: z.number().int().nullable(),
    /** The operating system's thread id. */
    lwp: z.number().int().nullable(),
    name: z.string().nullable(),
  }),
  culprit: CulpritSchema,
  /** The runtime whose own frames were read into the crash's stack (a JVM's, by jhsdb), and what read them; null for none. Null only in a report written before runtimes were read. */
  runtime: RuntimeSchema.nullable().default(null),
  /** `kind | f1 | f2 | f3` over the first three culprit-side frames: stable across ASLR and rebuilds. */
  signature: z.string(),
  /** The cycle of threads blocked on locks, for a deadlock; null otherwise. */
  deadlock: z.object({ cycle: z.array(DeadlockEdgeSchema) }).nullable(),
  /** Null only in a report written before origins were recorded. */
  origin: OriginSchema.nullable().default(null),
  /** Null only in a report written before crashes were rated. */
  exploitability: ExploitabilitySchema.nullable().default(null),
  /** Crashpad's annotations (report and client ids, the process's and each module's); null when the dump has none. */
  annotations: AnnotationsSchema.nullable().default(null),
  /** A core cut short: where, and the memory it lost; null for a whole dump. Null only in a report written before cut cores were read. */
  cut: CutSchema.nullable().default(null),
});
export type Crash = z.infer<typeof CrashSchema>;

const HypothesisStatusSchema = z.enum(["confirmed", "rejected", "inconclusive"]);

export const ReportSchema = z.object({
  schemaVersion: z.literal(1),
  session: z.object({
    /** The session's id: `dumpdbg chat`, `report` and `resume` take it. */
    id: z.string(),
    /** The dump that was read. */
    dump: z.string(),
    /** The program the dump came from, as given or as the dump names it. */
    executable: z.string().nullable(),
    /** The debugger that read the dump (`gdb`, `lldb`, `cdb`, `dlv`). */
    debugger: z.string(),
    /** ISO 8601 times. */
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
  }),
  /** What went wrong in the user's words (`--issue`). */
  issue: z.string().nullable(),
  crash: CrashSchema,
  /** What the analysis supposed and how each test came out. */
  hypotheses: z.array(
    z.object({
      id: z.string(),
      statement: z.string(),
      status: HypothesisStatusSchema,
      /** The evidence that decided it (`E3`). */
      evidenceIds: z.array(z.string()),
    }),
  ),
  conclusion: z.object({
    summary: z.string(),
    rootCause: z.string(),
    confidence: z.number().min(0).max(1),
    recommendations: z.array(z.string()),
  }),
  /** The critic's review, two rounds at most, and what it left unresolved. */
  critique: z.object({
    rounds: z.array(z.object({ round: z.number().int(), issues: z.array(z.string()) })),
    unresolved: z.array(z.string()),
  }),
  /** Questions worth asking next, in the chat. */
  followUpQuestions: z.array(z.string()),
  /** Every debugger output the analysis kept, cited by id in the report. */
  evidence: z.array(
    z.object({
      /** `E1`, `E2`, … */
      id: z.string(),
      /** The debugger command that printed it. */
      command: z.string(),
      /** What the analyzers read in it. */
      summary: z.string(),
      bytes: z.number().int(),
      /** The file in the session that holds the whole output. */
      path: z.string().nullable(),
    }),
  ),
  /** Model calls and tokens, local and cloud (0 offline). */
  usage: z.object({
    llmCalls: z.number().int(),
    local: z.object({ inputTokens: z.number().int(), outputTokens: z.number().int() }),
    cloud: z.object({ inputTokens: z.number().int(), outputTokens: z.number().int() }),
    /** Models that stopped answering during the run; every step after that ran offline. Added in a later version. */
    modelsDown: z
      .array(
        z.object({
          tier: z.enum(["local", "cloud"]),
          provider: z.string(),
          model: z.string(),
          url: z.string(),
          answered: z.number().int(),
          reason: z.string(),
        }),
      )
      .optional(),
  }),
  /** What was masked before any model saw it, by kind (count 0 when nothing left the machine). Added in a later version. */
  redactions: z.object({ count: z.number().int(), kinds: z.record(z.string(), z.number().int()) }).optional(),
  /** Where the run's time went, in milliseconds. */
  timings: z.object({
    totalMs: z.number(),
    debuggerMs: z.number(),
    llmMs: z.number(),
  }),
});
export type Report = z.infer<typeof ReportSchema>;
