/**
 * The pure parts of reading a Python program that died in native code: Py_FatalError's text from
 * the arguments gdb prints, the signature across a stripped interpreter's unnamed frames, and the
 * Python frames placed only over the evaluation loops of the stack's unbroken innermost part.
 */
import { describe, expect, it } from "vitest";

import { crashSignature, placeFrames, type PlacedFrame } from "../../src/analyzers/culprit.js";
import { fatalErrorFromArguments } from "../../src/analyzers/python-fatal.js";
import type { Verdict } from "../../src/analyzers/triage/classify.js";
import { withPython } from "../../src/analyzers/triage/python.js";
import { parseBacktrace } from "../../src/debuggers/gdb/text/backtrace.js";
import type { PythonFrame } from "../../src/runtimes/cpython/index.js";

/** gdb's `bt` of an extension that called Py_FatalError("record table full"), on Debian's python3.11 with python3.11-dbg. */
const FATAL_BT = `#0  __pthread_kill_implementation (threadid=<optimized out>, signo=signo@entry=6, no_tid=no_tid@entry=0) at ./nptl/pthread_kill.c:44
#1  0x00007ffff7d32f4f in __pthread_kill_internal (signo=6, threadid=<optimized out>) at ./nptl/pthread_kill.c:78
#2  0x00007ffff7ce3fb2 in __GI_raise (sig=sig@entry=6) at ../sysdeps/posix/raise.c:26
#3  0x00007ffff7cce472 in __GI_abort () at ./stdlib/abort.c:79
#4  0x00000000004230a6 in fatal_error_exit (status=-1) at ../Python/pylifecycle.c:2626
#5  fatal_error (fd=<optimized out>, header=<optimized out>, prefix=<optimized out>, msg=<optimized out>, status=-1) at ../Python/pylifecycle.c:2737
#6  0x00000000004c5b17 in _Py_FatalErrorFunc (func=0x7ffff79ea148 <__func__.0> "records_define", msg=0x7ffff79ea07b "record table full") at ../Python/pylifecycle.c:2823
#7  0x00007ffff79e9392 in records_define (self=<module at remote 0x7ffff7a19d50>, kind='transfer') at /tmp/pyn/deb-setup/records.c:78
#8  0x000000000051e3df in cfunction_vectorcall_O (func=<built-in method define of module object at remote 0x7ffff7a19d50>, args=0x7ffff7fb50f8, nargsf=<optimized out>, kwnames=<optimized out>) at ../Include/cpython/methodobject.h:52
`;

const frames = (text: string) => parseBacktrace(text).frames;

describe("Py_FatalError's text from the arguments gdb prints", () => {
  it("reads the function and the message from _Py_FatalErrorFunc where fatal_error's are optimized out", () => {
    expect(fatalErrorFromArguments(frames(FATAL_BT))).toBe("Fatal Python error: records_define: record table full");
  });

  it("takes fatal_error's own prefix and message where they are shown, and leaves out a null prefix", () => {
    const shown = FATAL_BT.replace("prefix=<optimized out>, msg=<optimized out>", 'prefix=0x0, msg=0x5d1f20 "PyThreadState_Get: the function must be called with the GIL held"');
    expect(fatalErrorFromArguments(frames(shown))).toBe("Fatal Python error: PyThreadState_Get: the function must be called with the GIL held");
    const nullPrefix = FATAL_BT.replace('func=0x7ffff79ea148 <__func__.0> "records_define"', "func=0x0");
    expect(fatalErrorFromArguments(frames(nullPrefix))).toBe("Fatal Python error: record table full");
  });

  it("reads nothing where no frame of the path shows its message (a stripped interpreter, or none on the stack)", () => {
    const stripped = `#5  0x00000000004230a6 in _Py_FatalErrorFunc () from /usr/bin/python3.11
#6  0x00007ffff79e9392 in records_define (self=<module at remote 0x7ffff7a19d50>, kind='transfer') at /tmp/records.c:78
`;
    expect(fatalErrorFromArguments(frames(stripped))).toBeNull();
    expect(fatalErrorFromArguments(frames(FATAL_BT).filter((frame) => !/fatal|Fatal/.test(frame.function ?? "")))).toBeNull();
  });
});

const native = (level: number, fn: string | null, module: string, file: string | null = null): PlacedFrame => ({ level, address: "0x1000", function: fn, args: "", file, line: file ? 10 : null, from: null, module });
const python = (fn: string, line: number, entry = true): PythonFrame => ({ function: fn, file: "/srv/app.py", line, firstLine: line - 1, entry });

describe("a stack with Python frames read into it", () => {
  it("keeps the Python callers in the signature across the stripped interpreter's unnamed frames", () => {
    const stack: PlacedFrame[] = [
      native(0, "records_define", "/srv/records.so", "/srv/records.c"),
      native(1, null, "/usr/bin/python3.11"),
      native(2, "PyObject_Vectorcall", "/usr/bin/python3.11"),
      { ...native(3, "register", "/usr/bin/python3.11"), module: null, file: "/srv/app.py", language: "python", found: "runtime" },
    ];
    expect(crashSignature("abort", stack, 0)).toBe("abort | records_define | register");
    // Without Python frames, an unnamed frame past the culprit still ends it: past it the unwind may be garbage.
    expect(crashSignature("abort", stack.slice(0, 3), 0)).toBe("abort | records_define");
  });

  it("places Python frames only over the loops of the unbroken innermost frames, not over a recursion's outermost ones fetched apart", () => {
    const loop = (level: number) => native(level, "_PyEval_EvalFrameDefault", "/usr/bin/python3.11");
    const unwound = [loop(0), native(1, "infinite_lru_cache_wrapper", "/usr/bin/python3.11"), loop(2), native(3, "infinite_lru_cache_wrapper", "/usr/bin/python3.11"), loop(70_000), native(70_001, "Py_RunMain", "/usr/bin/python3.11")];
    const verdict: Verdict = { kind: "stack-overflow", thread: { id: 1, lwp: 7, name: null, current: true } as Verdict["thread"], frames: placeFrames(unwound, () => null, null).map((frame, index) => ({ ...frame, module: unwound[index]!.module })), culprit: 0, blocked: null, abortedIn: null, caught: null };
    const reading = { version: "3.11.2", notes: [], threads: [{ lwp: 7, frames: [python("depth", 12), python("depth", 12), python("depth", 12), python("<module>", 15)], complete: true, why: null }] };
    const mixed = withPython(verdict, { reading });
    expect(mixed.frames.map((frame) => frame.function)).toEqual(["depth", "infinite_lru_cache_wrapper", "depth", "infinite_lru_cache_wrapper", "_PyEval_EvalFrameDefault", "Py_RunMain"]);
    expect(mixed.culprit).toBe(0);
  });
});
