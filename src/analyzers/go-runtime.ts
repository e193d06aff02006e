/**
 * Go's runtime as it lies in a dump's memory, pure: the build's version from `.go.buildinfo`, where
 * the runtime keeps a goroutine's panic, status and saved registers (per Go release, for amd64),
 * what a panic value says as the runtime prints it, and which functions are the runtime's.
 * The reading itself (memory through the debugger) is triage's `go.ts`.
 */

/** Offsets into the runtime's structures, for the releases whose layout they are. */
export interface GoLayout {
  g: { stackLo: number; stackHi: number; panic: number; m: number; schedSp: number; schedPc: number; schedBp: number; status: number; goid: number; waitReason: number; sig: number; sigcode1: number; sigpc: number };
  m: { curg: number };
  panic: { argType: number; argData: number; link: number };
  type: { tflag: number; str: number };
  /** `runtime.firstmoduledata.types`: the base that a type's name offset counts from. */
  moduleTypes: number;
}

/** go1.17 to go1.20 on amd64 (the fields read here did not move between them). */
const AMD64_117: GoLayout = {
  g: { stackLo: 0, stackHi: 8, panic: 32, m: 48, schedSp: 56, schedPc: 64, schedBp: 104, status: 144, goid: 152, waitReason: 176, sig: 240, sigcode1: 280, sigpc: 288 },
  m: { curg: 192 },
  panic: { argType: 8, argData: 16, link: 24 },
  type: { tflag: 20, str: 40 },
  moduleTypes: 280,
};

/** "go1.19.8" → its layout; null for a release whose layout this does not know. */
export function goLayout(version: string): GoLayout | null {
  const minor = /^go1\.(\d+)/.exec(version)?.[1];
  return minor !== undefined && Number(minor) >= 17 && Number(minor) <= 20 ? AMD64_117 : null;
}

const BUILDINFO_MAGIC = "\xff Go buildinf:";
const BUILDINFO_INLINE_STRINGS = 2;

/** The Go release a `.go.buildinfo` section names (go1.18 and later write it inline); null otherwise. */
export function goBuildVersion(bytes: Uint8Array): string | null {
  if (Buffer.from(bytes.subarray(0, 14)).toString("latin1") !== BUILDINFO_MAGIC) return null;
  if (((bytes[15] ?? 0) & BUILDINFO_INLINE_STRINGS) === 0) return null;
  const read = uvarint(bytes, 32);
  if (read === null || read.value > 64 || read.next + read.value > bytes.length) return null;
  const version = Buffer.from(bytes.subarray(read.next, read.next + read.value)).toString("latin1");
  return /^go1\.\d+/.test(version) ? version : null;
}

function uvarint(bytes: Uint8Array, at: number): { value: number; next: number } | null {
  let value = 0;
  for (let i = 0; i < 5 && at + i < bytes.length; i++) {
    const byte = bytes[at + i] ?? 0;
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) return { value, next: at + i + 1 };
  }
  return null;
}

/**
 * A type's name from the bytes at its name offset: a flags byte, a varint length, the name. Types
 * flagged `tflagExtraStar` are stored as `*T` for T's name.
 */
export function goTypeName(bytes: Uint8Array, tflag: number): string | null {
  const read = uvarint(bytes, 1);
  if (read === null || read.value === 0 || read.next + read.value > bytes.length) return null;
  const name = Buffer.from(bytes.subarray(read.next, read.next + read.value)).toString("utf8");
  if (!/^[\x21-\x7e]+$/.test(name)) return null;
  const TFLAG_EXTRA_STAR = 2;
  return tflag & TFLAG_EXTRA_STAR && name.startsWith("*") ? name.slice(1) : name;
}

/** The runtime's statuses of a goroutine (`_Grunning`…), without the GC's scan bit. */
export const GOROUTINE_STATUS = ["idle", "runnable", "running", "syscall", "waiting", "moribund", "dead", "enqueue", "copystack", "preempted"] as const;
export type GoroutineStatus = (typeof GOROUTINE_STATUS)[number] | "unknown";

export function goroutineStatus(word: number): GoroutineStatus {
  const G_SCAN = 0x1000;
  return GOROUTINE_STATUS[word & ~G_SCAN] ?? "unknown";
}

/** Why a goroutine waits, by `waitReason` as go1.17–go1.20 number them. */
const WAIT_REASONS = [
  "", "GC assist marking", "IO wait", "chan receive (nil chan)", "chan send (nil chan)", "dumping heap", "garbage collection", "garbage collection scan",
  "panicwait", "select", "select (no cases)", "GC assist wait", "GC sweep wait", "GC scavenge wait", "chan receive", "chan send", "finalizer wait",
  "force gc (idle)", "semacquire", "sleep", "sync.Cond.Wait", "timer goroutine (idle)", "trace reader (blocked)", "wait for GC cycle", "GC worker (idle)",
  "preempted", "debug call", "GC mark termination", "stopping the world",
];

export function waitReasonText(reason: number): string | null {
  return WAIT_REASONS[reason] || null;
}

/** The runtime's index and slice checks, as `runtime.boundsError.Error` words them (`code` is boundsErrorCode). */
const BOUNDS = [
  "index out of range [%x] with length %y",
  "slice bounds out of range [:%x] with length %y",
  "slice bounds out of range [:%x] with capacity %y",
  "slice bounds out of range [%x:%y]",
  "slice bounds out of range [::%x] with length %y",
  "slice bounds out of range [::%x] with capacity %y",
  "slice bounds out of range [:%x:%y]",
  "slice bounds out of range [%x:%y:]",
  "cannot convert slice with length %x to array or pointer to array with length %y",
];
/** The same, for a negative signed index (y is then meaningless). */
const NEGATIVE_BOUNDS = [
  "index out of range [%x]",
  "slice bounds out of range [:%x]",
  "slice bounds out of range [:%x]",
  "slice bounds out of range [%x:]",
  "slice bounds out of range [::%x]",
  "slice bounds out of range [::%x]",
  "slice bounds out of range [:%x:]",
  "slice bounds out of range [%x::]",
];

/** `runtime error: index out of range [5] with length 3` from a boundsError's fields. */
export function boundsErrorText(x: bigint, y: bigint, signed: boolean, code: number): string | null {
  const negative = signed && BigInt.asIntN(64, x) < 0n;
  const format = (negative ? NEGATIVE_BOUNDS : BOUNDS)[code];
  if (format === undefined) return null;
  const shownX = signed ? BigInt.asIntN(64, x) : x;
  return `runtime error: ${format.replace("%x", shownX.toString()).replace("%y", BigInt.asIntN(64, y).toString())}`;
}

/** How a panic value of a type is read: its type name decides where its text lies. */
export type PanicValueShape =
  /** data points at a Go string (ptr, len): a `string` or `runtime.plainError`, printed as is. */
  | { shape: "string"; prefix: string }
  /** data is a pointer to a struct whose first field is the message string (`*errors.errorString`, `*fmt.wrapError`). */
  | { shape: "struct-string"; prefix: string }
  /** data points at a `runtime.boundsError`. */
  | { shape: "bounds" }
  /** data points at an integer. */
  | { shape: "integer" }
  | { shape: "unknown" };

export function panicValueShape(typeName: string): PanicValueShape {
  switch (typeName) {
    case "string":
    case "runtime.plainError":
      return { shape: "string", prefix: "" };
    // runtime.Error values the runtime raises itself: "runtime error: " + their text.
    case "runtime.errorString":
    case "runtime.errorAddressString":
      return { shape: "string", prefix: "runtime error: " };
    case "runtime.boundsError":
      return { shape: "bounds" };
    case "*errors.errorString":
    case "*fmt.wrapError":
    case "*fmt.wrapErrors":
      return { shape: "struct-string", prefix: "" };
    case "int":
    case "int64":
    case "int32":
    case "uint":
    case "uint64":
      return { shape: "integer" };
    default:
      return { shape: "unknown" };
  }
}

/** A Go string's bytes as text, when they are text. */
export function goStringText(bytes: Uint8Array, length: number): string | null {
  if (length <= 0 || bytes.length < length) return null;
  const text = Buffer.from(bytes.subarray(0, length)).toString("utf8");
  return text.includes("\uFFFD") || /[\u0000-\u0008\u000e-\u001f]/.test(text) ? null : text;
}

/**
 * Go's runtime and standard library machinery, skipped in the culprit search: the runtime, its
 * internal packages, sync and reflect, and the assembly thunks (`runtime.systemstack_switch.abi0`).
 */
export const GO_RUNTIME_FUNCTION = /^(runtime|internal\/[\w/]+|sync|sync\/atomic|reflect)\.|^(runtime|sync|reflect)\/internal\//;
