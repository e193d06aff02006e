/**
 * Where CPython keeps what a stack walk needs, one layout per version, as data: the walker reads
 * fields by these offsets and knows no version. A version without a layout here is refused, not
 * guessed: its structures moved (3.12 moved the frames and the thread state, 3.13 again).
 *
 * 3.11's offsets are those of x86-64 (LP64) builds, taken with `offsetof` from CPython's own
 * headers (Include/internal/pycore_runtime.h, pycore_interp.h, pycore_frame.h, cpython/pystate.h,
 * cpython/code.h, cpython/unicodeobject.h, pycore_dict.h, pycore_object.h; the lock objects' from
 * Modules/_threadmodule.c, whose structs are not in any header), compiled with Py_BUILD_CORE against Debian's 3.11.2
 * and a 3.11.7 build alike; they agree.
 */

export interface PythonLayout {
  /** `3.11`: the versions the layout is for. */
  series: string;
  /** _PyRuntimeState: the main thread's ident; the GIL's last holder (a thread state) and whether it is held now. */
  runtime: { mainThread: number; interpretersHead: number; gilLastHolder: number; gilLocked: number };
  /** PyInterpreterState. */
  interpreter: { next: number; threadsHead: number; size: number };
  /** PyThreadState: `native_thread_id` is the kernel's id of the thread (its LWP). */
  thread: { next: number; cframe: number; currentExceptionType: number; currentException: number; threadId: number; nativeThreadId: number; size: number };
  /** _PyCFrame: the frame the thread runs. */
  cframe: { currentFrame: number; size: number };
  /** _PyInterpreterFrame: its locals, then its value stack, start at `size` (`localsplus`). */
  frame: { globals: number; code: number; previous: number; prevInstr: number; stackTop: number; isEntry: number; owner: number; size: number };
  /** PyCodeObject: the instructions start at `codeAdaptive`, 2 bytes each. */
  code: {
    exceptionTable: number;
    stackSize: number;
    localsPlusCount: number;
    localsPlusNames: number;
    filename: number;
    name: number;
    qualname: number;
    lineTable: number;
    firstLine: number;
    firstTraceable: number;
    codeAdaptive: number;
    size: number;
  };
  /** PyObject's type pointer. */
  objectType: number;
  /** PyBytesObject: its length (ob_size) and where its bytes start. */
  bytes: { size: number; data: number };
  /** PyASCIIObject and PyCompactUnicodeObject: compact ASCII text starts at `asciiData`, other compact text at `compactData`. */
  unicode: { length: number; state: number; asciiData: number; compactData: number };
  /** PyTypeObject's name (a C string) and flags; a heap type's cached keys, those its instances' attributes share. */
  type: { name: number; flags: number; cachedKeys: number };
  /** Py_TPFLAGS_MANAGED_DICT: an instance's attributes are kept before it, not in a slot of its type's. */
  managedDict: { flag: number; dict: number; values: number };
  /** PyVarObject's size and PyTupleObject's, PyListObject's items (in place, behind a pointer). */
  tuple: { size: number; items: number };
  list: { size: number; items: number };
  /** PyDictObject and its keys (PyDictKeysObject): entries follow the index table, of 16 bytes for str keys, 24 otherwise. */
  dict: { used: number; keys: number; values: number };
  dictKeys: { log2Size: number; log2IndexBytes: number; kind: number; entryCount: number; indices: number };
  /** PyLongObject's 30-bit digits; PyFloatObject's double. */
  long: { size: number; digits: number };
  float: { value: number };
  /** PyCFunctionObject (a builtin method) and PyMethodDef; PyMethodObject (a bound Python method). */
  builtinMethod: { definition: number; self: number };
  methodDefinition: { name: number };
  boundMethod: { function: number; self: number };
  /** PyFunctionObject's `__name__`. */
  function: { name: number };
  /** _threadmodule.c's lockobject (`locked`, a char) and rlockobject (its owner's thread ident, how often it holds it). */
  lock: { locked: number; size: number };
  rlock: { owner: number; count: number; size: number };
  /** PyBaseExceptionObject's args (a tuple). */
  exception: { args: number };
  /** _frameowner: a generator's frame is complete however far it ran. */
  ownedByGenerator: number;
}

export const PYTHON_3_11: PythonLayout = {
  series: "3.11",
  runtime: { mainThread: 80, interpretersHead: 40, gilLastHolder: 368, gilLocked: 376 },
  interpreter: { next: 0, threadsHead: 16, size: 24 },
  thread: { next: 8, cframe: 56, currentExceptionType: 96, currentException: 104, threadId: 152, nativeThreadId: 160, size: 168 },
  cframe: { currentFrame: 8, size: 16 },
  frame: { globals: 8, code: 32, previous: 48, prevInstr: 56, stackTop: 64, isEntry: 68, owner: 69, size: 72 },
  code: {
    exceptionTable: 40,
    stackSize: 68,
    localsPlusCount: 76,
    localsPlusNames: 96,
    filename: 112,
    name: 120,
    qualname: 128,
    lineTable: 136,
    firstLine: 72,
    firstTraceable: 168,
    codeAdaptive: 184,
    size: 184,
  },
  objectType: 8,
  bytes: { size: 16, data: 32 },
  unicode: { length: 16, state: 32, asciiData: 48, compactData: 72 },
  type: { name: 24, flags: 168, cachedKeys: 872 },
  managedDict: { flag: 1 << 4, dict: -24, values: -32 },
  tuple: { size: 16, items: 24 },
  list: { size: 16, items: 24 },
  dict: { used: 16, keys: 32, values: 40 },
  dictKeys: { log2Size: 8, log2IndexBytes: 9, kind: 10, entryCount: 24, indices: 32 },
  long: { size: 16, digits: 24 },
  float: { value: 16 },
  builtinMethod: { definition: 16, self: 24 },
  methodDefinition: { name: 0 },
  boundMethod: { function: 16, self: 24 },
  function: { name: 32 },
  lock: { locked: 32, size: 33 },
  rlock: { owner: 24, count: 32, size: 40 },
  exception: { args: 24 },
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
