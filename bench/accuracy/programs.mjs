// Real programs from Debian, stripped as they ship, crashed, killed or hung. `how`: `crash` runs the
// command under gdb to its fatal signal; `hang` starts it, waits, and dumps it alive; `killed`
// starts it under gdb and sends it `signal` from another process. `culprit` is a function, or a
// module's file name for a stripped module (`?? in _ctypes…so`), or null when it is not judged.
export const PROGRAMS = [
  // Tuned: the cases the analyzers were written against.
  { name: "python-ctypes-null", set: "tuned", how: "crash", argv: ["/usr/bin/python3", "-c", "import ctypes; ctypes.string_at(0)"], expect: { kind: "null-dereference", culprit: /_ctypes\.cpython/ } },
  { name: "perl-unpack-pointer", set: "tuned", how: "crash", argv: ["/usr/bin/perl", "-e", 'print unpack("p", pack("J", 16))'], expect: { kind: "null-dereference", culprit: /^Perl_newSVpv$/ } },
  { name: "bash-kill-self", set: "tuned", how: "crash", argv: ["/bin/bash", "-c", "kill -SEGV $$"], expect: { kind: "unknown", culprit: /^kill_builtin$/, message: /raised SIGSEGV at itself/ } },
  {
    name: "python-semaphore-hang",
    set: "tuned",
    how: "hang",
    argv: ["/usr/bin/python3", "-c", "import threading\njobs = threading.Semaphore(0)\ndef worker():\n    jobs.acquire()\nthreads = [threading.Thread(target=worker) for _ in range(2)]\nfor t in threads: t.start()\nfor t in threads: t.join()\n"],
    expect: { kind: "hang", culprit: null, message: /^hung: all 3 threads/ },
  },
  // Held out: written before the bench first ran, not tuned to.
  { name: "bash-runaway-function", set: "held-out", how: "crash", argv: ["/bin/bash", "-c", "f() { f; }; f"], expect: { kind: "stack-overflow", culprit: null } },
  { name: "python-deep-recursion", set: "held-out", how: "crash", argv: ["/usr/bin/python3", "-c", "import sys\nsys.setrecursionlimit(10**8)\ndef depth(n):\n    return list(map(depth, [n + 1]))\ndepth(0)\n"], expect: { kind: "stack-overflow", culprit: null } },
  { name: "sleep-sent-sigbus", set: "held-out", how: "killed", signal: "SIGBUS", argv: ["/bin/sleep", "30"], expect: { kind: "unknown", culprit: null, message: /was sent SIGBUS by pid \d+/ } },
  { name: "perl-posix-abort", set: "held-out", how: "crash", argv: ["/usr/bin/perl", "-MPOSIX", "-e", "POSIX::abort()"], expect: { kind: "abort", culprit: null } },
];
