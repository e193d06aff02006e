// Evidence store throughput on the biggest output an analysis meets: `thread apply all bt full`
// of a 1,000-thread core (~10 frames a thread, with locals), as gdb prints it. Measures insert
// (to file, chunked, FTS-indexed) against a plain synced file write of the same bytes, search
// throughput, and peak memory. Run `npm run build` first: it measures the built store.
//
//   node bench/evidence.mjs

import { existsSync, fsyncSync, mkdtempSync, openSync, closeSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const built = new URL("../dist/internals.cjs", import.meta.url);
if (!existsSync(built)) {
  console.error("bench/evidence.mjs measures the built store: run `npm run build` first");
  process.exit(2);
}
const { EvidenceStore } = await import(built.href);

const THREADS = 1000;
const INSERTS = 10;
const SMALL_INSERTS = 300;
const SEARCH_SECONDS = 2;

/** Deterministic pseudo-random numbers, so every run stores the same text. */
let seed = 1;
function random(n) {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  // The high bits: an LCG's low bits repeat with a short period.
  return (seed >>> 16) % n;
}
const hex = (n) => `0x${n.toString(16).padStart(16, "0")}`;
const pick = (list) => list[random(list.length)];

const WAITS = [
  [
    "futex_wait (private=0, expected=2, futex_word=0x5555555580a0 <queue_lock>) at ../sysdeps/nptl/futex-internal.h:146",
    "__GI___lll_lock_wait (futex=futex@entry=0x5555555580a0 <queue_lock>, private=0) at ./nptl/lowlevellock.c:49",
    "lll_mutex_lock_optimized (mutex=0x5555555580a0 <queue_lock>) at ./nptl/pthread_mutex_lock.c:48",
    "___pthread_mutex_lock (mutex=0x5555555580a0 <queue_lock>) at ./nptl/pthread_mutex_lock.c:93",
  ],
  [
    "epoll_wait (epfd=7, events=0x7ffff0000b70, maxevents=64, timeout=-1) at ../sysdeps/unix/sysv/linux/epoll_wait.c:30",
    "event_loop_poll (loop=0x5555555a92a0, timeout_ms=-1) at src/event_loop.c:211",
  ],
  [
    "__GI___clock_nanosleep (clock_id=clock_id@entry=0, flags=flags@entry=0, req=0x7ffff5ffed90, rem=0x0) at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:71",
    "__GI___nanosleep (req=<optimized out>, rem=<optimized out>) at ../sysdeps/unix/sysv/linux/nanosleep.c:25",
  ],
  [
    "__libc_recv (fd=42, buf=0x7ffff0001f40, len=16384, flags=0) at ../sysdeps/unix/sysv/linux/recv.c:28",
    "conn_read (conn=0x5555555b4e10, buf=0x7ffff0001f40, len=16384) at src/conn.c:88",
  ],
];
const APP = ["handle_request", "dispatch_message", "session_flush", "cache_lookup", "parse_headers", "worker_loop"];
const LOCALS = [
  () => `        req = 0x${(0x5555555b0000 + random(0xffff)).toString(16)}`,
  () => `        len = ${random(65536)}`,
  () => `        rc = ${random(3) - 1}`,
  () => `        key = "user:${random(100000)}", '\\000' <repeats ${random(40)} times>`,
  () => `        stats = {hits = ${random(1e6)}, misses = ${random(1e4)}, evictions = ${random(100)}}`,
  () => "        __ret = <optimized out>",
];

function threadApplyAllBtFull() {
  const out = [];
  for (let t = THREADS; t >= 1; t--) {
    const lwp = 40000 + t;
    out.push(`Thread ${t} (Thread ${hex(0x7ffff7dd1740 - t * 0x11000)} (LWP ${lwp}) "worker-${t}"):`);
    const frames = [...pick(WAITS)];
    while (frames.length < 8) {
      const fn = pick(APP);
      const ctx = `0x5555555a${random(0xffff).toString(16)}`;
      frames.push(`${fn} (ctx=${ctx}, id=${t}) at src/${fn.split("_")[0]}.c:${10 + random(500)}`);
    }
    frames.push("start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442");
    frames.push("clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81");
    frames.forEach((frame, level) => {
      out.push(level === 0 ? `#${level}  ${frame}` : `#${level}  ${hex(0x7ffff7e60000 + random(0xfffff))} in ${frame}`);
      const locals = level === frames.length - 1 ? 0 : random(6);
      if (locals === 0) out.push("No locals.");
      for (let i = 0; i < locals; i++) out.push(pick(LOCALS)());
    });
    out.push("");
  }
  return `${out.join("\n")}\n`;
}

const mb = (bytes) => bytes / (1024 * 1024);
const dir = mkdtempSync(join(tmpdir(), "dumpdbg-bench-"));
try {
  const bt = threadApplyAllBtFull();
  const bytes = Buffer.byteLength(bt);
  const store = EvidenceStore.open(join(dir, "evidence.db"));

  const fileStart = performance.now();
  for (let i = 0; i < INSERTS; i++) {
    const fd = openSync(join(dir, `plain-${i}.txt`), "w");
    writeFileSync(fd, bt);
    fsyncSync(fd);
    closeSync(fd);
  }
  const fileSeconds = (performance.now() - fileStart) / 1000;

  const insertStart = performance.now();
  for (let i = 0; i < INSERTS; i++) {
    store.add({
      command: "thread apply all bt full",
      backend: "gdb",
      context: { thread: null, frame: i },
      output: bt,
      ok: true,
      summary: `${THREADS} threads; most wait on queue_lock`,
      findings: { threads: THREADS },
      ms: 0,
      source: "agent",
    });
  }
  const insertSeconds = (performance.now() - insertStart) / 1000;

  const smallStart = performance.now();
  for (let i = 0; i < SMALL_INSERTS; i++) {
    store.add({
      command: `frame ${i % 10}`,
      backend: "gdb",
      context: { thread: 1 + (i % THREADS), frame: i % 10 },
      output: bt.slice(i * 997, i * 997 + 800),
      ok: true,
      summary: "one frame",
      findings: null,
      ms: 0,
      source: "agent",
    });
  }
  const smallSeconds = (performance.now() - smallStart) / 1000;

  const queries = [
    "queue_lock",
    "worker-512",
    "handle_request",
    "epoll_wait timeout",
    "stats hits",
    "LWP 40777",
    "user:4242",
    "why is everyone waiting on the lock",
  ];
  let searches = 0;
  let hits = 0;
  const searchStart = performance.now();
  while (performance.now() - searchStart < SEARCH_SECONDS * 1000) {
    hits += store.search(queries[searches % queries.length]).length;
    searches++;
  }
  const searchSeconds = (performance.now() - searchStart) / 1000;
  const chunks = store.chunks("E1").length;
  store.close();

  const total = mb(bytes * INSERTS);
  const insertRate = total / insertSeconds;
  const fileRate = total / fileSeconds;
  console.log(`evidence store: thread apply all bt full, ${THREADS} threads, ${mb(bytes).toFixed(2)} MB, ${chunks} chunks`);
  console.log(
    `insert  ${INSERTS} x ${mb(bytes).toFixed(2)} MB in ${insertSeconds.toFixed(2)} s: ${insertRate.toFixed(1)} MB/s ` +
      `(plain synced file write ${fileRate.toFixed(1)} MB/s; store/plain ${(insertRate / fileRate).toFixed(2)})`,
  );
  console.log(`insert  ${SMALL_INSERTS} small outputs of 800 B: ${(SMALL_INSERTS / smallSeconds).toFixed(0)} inserts/s`);
  console.log(
    `search  ${searches} queries over ${total.toFixed(1)} MB: ${(searches / searchSeconds).toFixed(0)} searches/s, ` +
      `${(hits / searches).toFixed(1)} hits each`,
  );
  console.log(`memory  peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
