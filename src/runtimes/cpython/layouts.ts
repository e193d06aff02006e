/**
 * Where CPython keeps what a stack walk needs, one layout per version, as data: the walker reads
 * fields by these offsets and knows no version. A version without a layout here is refused, not
 * guessed: its structures moved (3.12 moved the frames and the thread state, 3.13 again).
 *
 * 3.11's offsets are those of x86-64 (LP64) builds, taken with `offsetof` from CPython's own
 * headers (Include/internal/pycore_runtime.h, pycore_interp.h, pycore_frame.h, cpython/pystate.h,
 * cpython/code.h, cpython/unicodeobject.h), compiled with Py_BUILD_CORE against Debian's 3.11.2
 * and a 3.11.7 build alike; they agree.
 */

export interface PythonLayout {
  /** `3.11`: the versions the layout is for. */
  series: string;
  /** _PyRuntimeState. */
  runtime: { interpretersHead: number };
  /** PyInterpreterState. */
  interpreter: { next: number; threadsHead: number; size: number };
  /** PyThreadState: `native_thread_id` is the kernel's id of the thread (its LWP). */
  thread: { next: number; cframe: number; threadId: number; nativeThreadId: number; size: number };
  /** _PyCFrame: the frame the thread runs. */
  cframe: { currentFrame: number; size: number };
  /** _PyInterpreterFrame. */
  frame: { code: number; previous: number; prevInstr: number; isEntry: number; owner: number; size: number };
  /** PyCodeObject: the instructions start at `codeAdaptive`, 2 bytes each. */
  code: { filename: number; name: number; qualname: number; lineTable: number; firstLine: number; firstTraceable: number; codeAdaptive: number; size: number };
  /** PyObject's type pointer. */
  objectType: number;
  /** PyBytesObject: its length (ob_size) and where its bytes start. */
  bytes: { size: number; data: number };
  /** PyASCIIObject and PyCompactUnicodeObject: compact ASCII text starts at `asciiData`, other compact text at `compactData`. */
  unicode: { length: number; state: number; asciiData: number; compactData: number };
  /** _frameowner: a generator's frame is complete however far it ran. */
  ownedByGenerator: number;
}

export const PYTHON_3_11: PythonLayout = {
  series: "3.11",
  runtime: { interpretersHead: 40 },
  interpreter: { next: 0, threadsHead: 16, size: 24 },
  thread: { next: 8, cframe: 56, threadId: 152, nativeThreadId: 160, size: 168 },
  cframe: { currentFrame: 8, size: 16 },
  frame: { code: 32, previous: 48, prevInstr: 56, isEntry: 68, owner: 69, size: 72 },
  code: { filename: 112, name: 120, qualname: 128, lineTable: 136, firstLine: 72, firstTraceable: 168, codeAdaptive: 184, size: 184 },
  objectType: 8,
  bytes: { size: 16, data: 32 },
  unicode: { length: 16, state: 32, asciiData: 48, compactData: 72 },
  ownedByGenerator: 1,
};

/** A version as CPython's PY_VERSION_HEX says it (0x030b02f0 is 3.11.2): `3.11.2`, `3.12.0rc1`. */
export function versionText(hex: number): string {
  const major = (hex >>> 24) & 0xff;
  const minor = (hex >>> 16) & 0xff;
  const micro = (hex >>> 8) & 0xff;
  const level = (hex >>> 4) & 0xf;
  const serial = hex & 0xf;
  const suffix = level === 0xa ? `a${serial}` : level === 0xb ? `b${serial}` : level === 0xc ? `rc${serial}` : "";
  return `${major}.${minor}.${micro}${suffix}`;
}

/** The layout of the interpreter whose PY_VERSION_HEX is `hex`; null for a version with none here. */
export function layoutFor(hex: number): PythonLayout | null {
  const major = (hex >>> 24) & 0xff;
  const minor = (hex >>> 16) & 0xff;
  return major === 3 && minor === 11 ? PYTHON_3_11 : null;
}
