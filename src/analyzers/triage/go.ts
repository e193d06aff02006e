/**
 * A Go program's side of a dump, read through the debugger-neutral probes (symbols, memory, a
 * frame's CFA): a Go runtime that dies of a panic or a throw raises SIGABRT from its signal
 * handler, so the crashing thread's unwind shows only `runtime.raise` and stops at the signal
 * trampoline. What happened is in the runtime's structures: the goroutine the crashing thread ran
 * (`m.curg`, found from the thread's TLS), its `_panic` and its saved registers (`g.sched`), from
 * which its frames are walked by frame pointers (Go keeps them on amd64), then by the frames'
 * sizes in Go's own pc-SP table where that chain breaks; `runtime.allgs` for the goroutines of a
 * deadlock or a hang.
 */
import { hex } from "../../debuggers/dumpfile/file.js";
import type { GoLineTable } from "../../debuggers/dumpfile/index.js";
import type { Inspector } from "../../debuggers/inspector.js";
import { toBigInt, type Instruction } from "../../debuggers/model.js";
import type { CrashKind } from "../../report/schema.js";
import { NULL_PAGE_LIMIT } from "../address-space.js";
import type { PlacedFrame } from "../culprit.js";
import { deadlockCycles, type DeadlockEdge, type LockWait } from "../deadlock.js";
import { goFunctionStart, goLocksHeldBefore, goLockTaken, semaphoreWaits, SEMTABLE } from "../go-locks.js";
import { boundsErrorText, GO_RUNTIME_FUNCTION, goBuildVersion, goLayout, goroutineStatus, goStringText, goTypeName, panicValueShape, waitReasonText, type GoLayout, type GoroutineStatus } from "../go-runtime.js";
import { keyRegisters } from "../registers.js";
import { SIGSEGV } from "../signals.js";
import { bytesOf } from "../stack-scan.js";
import { memoryAccess } from "../x86-64.js";
import type { Stack } from "./stack.js";
import type { Stop } from "./stop.js";
import type { GoReading, GoroutineSummary } from "./result.js";
import type { Target } from "./target.js";

/** Bounds on what untrusted runtime memory can make triage read. */
const MAX_FRAMES = 48;
const MAX_GOROUTINES = 512;
const MAX_WALKED_GOROUTINES = 32;
const MAX_STRING = 4096;
/** The fields of a g read here lie in its first 37 words (up to sigpc). */
const G_WORDS = 37;
/** Sections only Go's linker writes. */
const GO_SECTIONS = new Set([".go.buildinfo", ".gopclntab", ".note.go.buildid"]);
/** A throw's frame is small: its message is within a few words of its frame pointer. */
const MAX_THROW_WORDS = 24;
const MAX_THROW_MESSAGE = 512n;
/** Sudogs walked in the runtime's semaphore table. */
const MAX_SUDOGS = 1024;

export interface Goroutine {
  /** Null where the goroutine was found by its frames, not by its g. */
  goid: number | null;
  status: GoroutineStatus;
  waitReason: string | null;
  /** Innermost first, walked from the goroutine's saved registers. */
  frames: PlacedFrame[];
  /** How: by the frame pointers, then by the frames' sizes (Go's pc-SP table) where the pointers' chain broke. */
  walkedBy: WalkedBy;
  /** The sync.Mutex it waits to lock (its address, from the runtime's semaphore table); null for any other wait. */
  lock: string | null;
}

export interface GoFindings {
  /** The Go release that built the program (`go1.19.8`). */
  version: string;
  /** The crash as the Go runtime saw it; null when its structures could not be read. */
  kind: CrashKind | null;
  message: string | null;
  /** The fault address of a nil dereference or wild access the runtime turned into a panic. */
  faultAddress: string | null;
  /** What the faulting instruction did at that address (a nil dereference's read or write). */
  access: "read" | "write" | null;
  /** The goroutine the culprit is read from: the one that panicked or threw, or the one a deadlock or hang is blamed on. */
  goroutine: Goroutine | null;
  /** The goroutines of the program's own that wait, read over allgs when no goroutine was running (a deadlock, a hang). */
  waiting: Goroutine[];
  /** Whether the debugger names the runtime's symbols: a program built with `-ldflags=-s` has no symbol table. */
  symbols: boolean;
  /** Goroutines each waiting for a sync.Mutex the next one holds, where the dump shows who holds them (goroutine ids as threads). */
  cycles: DeadlockEdge[][];
  /** Whether the debugger unwound the goroutines that wait on locks, so the locks their code took could be read; null when none waits on a lock. */
  goroutineFrames: boolean | null;
  notes: string[];
}

type WalkedBy = "frame pointers" | "frame pointers, then by their sizes";

interface GRecord {
  address: bigint;
  goid: number;
  status: GoroutineStatus;
  waitReason: string | null;
  panic: bigint;
  stack: { lo: bigint; hi: bigint };
  sched: { pc: bigint; bp: bigint };
  sig: number;
  sigcode1: bigint;
  sigpc: bigint;
}

/** Null for any program but Go's. */
/**
 * `recorded`: the signalled thread's registers as the core records them (NT_PRSTATUS), when it does;
 * `lines`: the program's own pc-line table, which names the goroutines' frames as Go's traceback does.
 */
export async function readGo(q: Inspector, target: Target, stop: Stop, stack: Stack, recorded: Record<string, string> | null = null, lines: GoLineTable | null = null): Promise<GoFindings | null> {
  const version = await goVersion(q, target);
  if (version === null) return null;
  const layout = goLayout(version);
  const notes: string[] = [];
  const symbols = (await q.symbolAddress("runtime.allgs")) !== null;
  if (!symbols) notes.push(strippedNote(lines !== null));
  const found: GoFindings = { version, kind: null, message: null, faultAddress: null, access: null, goroutine: null, waiting: [], symbols, cycles: [], goroutineFrames: null, notes };
  if (layout === null) {
    notes.push(`a Go ${version} program: dumpdbg does not know where this release keeps a goroutine's state, so only the threads are read`);
    return found;
  }
  const memory = new GoMemory(q, layout, target, recorded?.rbp ?? null, lines);
  const curg = await memory.currentGoroutine(recorded?.fs_base ?? null);
  const thrown = (await memory.thrown(stack, stop.signal !== null)) ?? (await memory.thrownUnwound(stack));
  if (curg && curg.panic !== 0n) {
    const value = await memory.panicValue(curg.panic);
    const walk = await memory.frames(curg);
    const frames = walk.frames;
    // A fault's panic runs in sigpanic, whose call the runtime injected with the faulting pc as its return address (found by name, or without symbols by that address).
    const faulted = curg.sig === SIGSEGV && frames.some((frame) => frame.function === "runtime.sigpanic" || toBigInt(frame.address) === curg.sigpc);
    found.goroutine = goroutineOf(curg, walk);
    found.message = value;
    found.kind = faulted ? (curg.sigcode1 < NULL_PAGE_LIMIT ? "null-dereference" : "invalid-memory-access") : "panic";
    found.faultAddress = faulted ? hex(curg.sigcode1) : null;
    // The runtime kept the faulting pc (g.sigpc): its instruction says whether the nil pointer was read or written through.
    found.access = faulted ? memoryAccessAt((await q.instructions(1, hex(curg.sigpc)))?.instructions[0]) : null;
    notes.push(walkedNote(curg, walk));
    return found;
  }
  // A throw from a goroutine (concurrent map writes): the thread that threw walked into its stack.
  // The scheduler's "all goroutines are asleep" is no goroutine's throw, though the walk may pass
  // through a parked goroutine's frames (systemstack links them): it is read from allgs below.
  if (thrown !== null && throwKind(thrown.text) !== "deadlock" && thrown.frames.some((frame) => frame.function !== null && !GO_RUNTIME_FUNCTION.test(frame.function))) {
    found.goroutine = { goid: null, status: "running", waitReason: null, frames: thrown.frames, walkedBy: "frame pointers", lock: null };
    found.kind = throwKind(thrown.text);
    found.message = `fatal error: ${thrown.text}`;
    notes.push(`the crashing thread's unwind stops at Go's signal trampoline: the throwing goroutine's ${thrown.frames.length} frames were walked by frame pointers from the registers the signal frame saved`);
    return found;
  }
  // No goroutine was running: the scheduler threw (all goroutines asleep), or the process was dumped alive.
  const { waiting, working } = await memory.goroutines();
  if (thrown !== null) {
    found.message = `fatal error: ${thrown.text}`;
    found.kind = throwKind(thrown.text);
  } else if (stop.signal === null && working > 0) {
    notes.push(`${working} goroutine${working > 1 ? "s were" : " was"} running or runnable when the process was dumped: it was working, not hung`);
  } else if (stop.signal === null && waiting.length > 0) {
    found.kind = "hang";
    found.message = hungMessage(waiting);
  }
  if (found.kind === null) return found;
  found.waiting = waiting;
  const locks = await memory.lockCycles(waiting);
  found.cycles = locks.cycles;
  found.goroutineFrames = locks.goroutineFrames;
  // Goroutines dumped alive that wait on each other's locks are a deadlock the runtime could not see (a timer or a socket kept it hopeful).
  if (found.kind === "hang" && locks.cycles.length > 0) found.kind = "deadlock";
  found.goroutine = blamed(waiting, locks.cycles);
  if (found.goroutine) {
    const choice = found.kind === "hang" && locks.cycles.length === 0 && found.goroutine.lock === null ? "; no goroutine records who holds a sync.Mutex, so the one blamed is the odd one out among those waiting on a channel" : "";
    notes.push(`goroutine ${found.goroutine.goid}'s frames were walked by ${found.goroutine.walkedBy} from its saved registers (g.sched): it waits on ${waitOf(found.goroutine)}${choice}`);
  }
  notes.push(...locks.notes);
  return found;
}

/** What the playbooks and the chat read of Go's runtime: each goroutine by its id, what it waits on, and its first frame of the program's own. */
export function goReading(go: GoFindings | null): GoReading | null {
  if (go === null) return null;
  const summary = (g: Goroutine): GoroutineSummary => {
    const own = g.frames.find((frame) => frame.function !== null && !GO_RUNTIME_FUNCTION.test(frame.function)) ?? null;
    return { id: g.goid, status: g.status, waitsOn: g.status === "waiting" ? waitOf(g) : null, lock: g.lock, function: own?.function ?? null, file: own?.file ?? null, line: own?.line ?? null };
  };
  return { version: go.version, goroutine: go.goroutine ? summary(go.goroutine) : null, waiting: go.waiting.map(summary), goroutineFrames: go.goroutineFrames };
}

/** What a report notes of a Go program: how its goroutines were found, and under gdb, that Delve lists them all. */
export function goNotes(go: GoFindings | null, debuggerName: string | undefined): string[] {
  if (go === null) return [];
  const delve = debuggerName === "gdb" && go.symbols ? [`a Go ${go.version} program: gdb shows threads, not goroutines; \`dlv core <program> <core>\` lists every goroutine with its stack`] : [];
  return [...go.notes, ...delve];
}

/**
 * The release from `.go.buildinfo` (go1.18+), else the runtime's `runtime.buildVersion` string. A
 * program with none of Go's sections is not asked anything: triage of C and Rust costs no command more.
 */
async function goVersion(q: Inspector, target: Target): Promise<string | null> {
  const own = target.files.sections.filter((s) => s.source === "exec");
  if (!own.some((s) => GO_SECTIONS.has(s.name))) return null;
  const section = own.find((s) => s.name === ".go.buildinfo");
  if (section) {
    const version = goBuildVersion(bytesOf(await q.readMemory(section.start, 12)));
    if (version) return version;
  }
  const symbol = await q.symbolAddress("runtime.buildVersion");
  if (symbol === null) return null;
  const [pointer, length] = await q.readMemory(symbol, 2);
  if (pointer === undefined || length === undefined || length <= 0n || length > 64n) return null;
  return goStringText(bytesOf(await q.readMemory(hex(pointer), Number((length + 7n) / 8n))), Number(length));
}

class GoMemory {
  constructor(
    private readonly q: Inspector,
    private readonly layout: GoLayout,
    private readonly target: Target,
    /** The signalled thread's frame pointer as the core records it, when it does. */
    private readonly recordedFp: string | null = null,
    /** The program's own pc-line table: frames named without asking the debugger, symbols or not. */
    private readonly lines: GoLineTable | null = null,
  ) {}

  private async word(address: bigint): Promise<bigint | null> {
    return (await this.q.readMemory(hex(address), 1))[0] ?? null;
  }

  private async goroutine(address: bigint): Promise<GRecord | null> {
    if (address < NULL_PAGE_LIMIT) return null;
    const words = await this.q.readMemory(hex(address), G_WORDS);
    if (words.length < G_WORDS) return null;
    const { g } = this.layout;
    const at = (offset: number) => words[offset / 8] ?? 0n;
    const low32 = (offset: number) => Number((at(offset - (offset % 8)) >> BigInt((offset % 8) * 8)) & 0xffffffffn);
    const byte = (offset: number) => low32(offset) & 0xff;
    return {
      address,
      goid: Number(at(g.goid)),
      status: goroutineStatus(low32(g.status)),
      waitReason: waitReasonText(byte(g.waitReason)),
      panic: at(g.panic),
      stack: { lo: at(g.stackLo), hi: at(g.stackHi) },
      sched: { pc: at(g.schedPc), bp: at(g.schedBp) },
      sig: low32(g.sig),
      sigcode1: at(g.sigcode1),
      sigpc: at(g.sigpc),
    };
  }

  /**
   * The crashing thread's goroutine: TLS holds its g (fs_base - 8 on linux/amd64), g.m its thread,
   * m.curg the user goroutine. The core's own fs_base is preferred (gdb's `info registers` may not
   * list it); without any, `runtime.m0`'s, which a program without symbols cannot name.
   */
  async currentGoroutine(recordedTls: string | null): Promise<GRecord | null> {
    const tls = toBigInt(recordedTls ?? this.target.registers.find((r) => r.name === "fs_base")?.value ?? null);
    let m: bigint | null = null;
    if (tls !== null && tls > 8n) {
      const g = await this.word(tls - 8n);
      if (g !== null && g >= NULL_PAGE_LIMIT) m = await this.word(g + BigInt(this.layout.g.m));
    }
    if (m === null || m < NULL_PAGE_LIMIT) m = toBigInt(await this.q.symbolAddress("runtime.m0"));
    if (m === null) return null;
    const curg = await this.word(m + BigInt(this.layout.m.curg));
    return curg === null ? null : this.goroutine(curg);
  }

  /**
   * From `runtime.allgs`: every goroutine waiting with frames of the program's own (the runtime's
   * own workers wait too, for work), and how many were running or runnable.
   */
  async goroutines(): Promise<{ waiting: Goroutine[]; working: number }> {
    const none = { waiting: [], working: 0 };
    const allgs = await this.q.symbolAddress("runtime.allgs");
    if (allgs === null) return none;
    const [array, length] = await this.q.readMemory(allgs, 2);
    if (array === undefined || length === undefined || length <= 0n) return none;
    const pointers = await this.q.readMemory(hex(array), Math.min(Number(length), MAX_GOROUTINES));
    const waiting: { g: GRecord; goroutine: Goroutine }[] = [];
    let working = 0;
    for (const pointer of pointers) {
      const g = await this.goroutine(pointer);
      if (g && (g.status === "running" || g.status === "runnable")) working++;
      if (!g || g.status !== "waiting" || waiting.length >= MAX_WALKED_GOROUTINES) continue;
      const walk = await this.frames(g);
      if (walk.frames.some((frame) => frame.function !== null && !GO_RUNTIME_FUNCTION.test(frame.function))) waiting.push({ g, goroutine: goroutineOf(g, walk) });
    }
    // A goroutine in sync.(*Mutex).Lock sleeps on the mutex's semaphore: the runtime's table of them says which.
    if (waiting.some(({ goroutine }) => locksMutex(goroutine))) {
      const semaphoreOf = new Map((await this.semaphoreWaits()).map((wait) => [wait.g, wait.semaphore]));
      for (const { g, goroutine } of waiting) {
        const semaphore = semaphoreOf.get(g.address);
        if (semaphore !== undefined && locksMutex(goroutine)) goroutine.lock = hex(semaphore - SEMTABLE.mutexSemaOffset);
      }
    }
    return { waiting: waiting.map(({ goroutine }) => goroutine), working };
  }

  /** Every goroutine asleep on a semaphore, and its address, from `runtime.semtable`. */
  private async semaphoreWaits(): Promise<{ g: bigint; semaphore: bigint }[]> {
    const table = toBigInt(await this.q.symbolAddress("runtime.semtable"));
    if (table === null) return [];
    const roots = await this.q.readMemory(hex(table), SEMTABLE.roots * SEMTABLE.rootWords);
    const treaps = roots.filter((_, i) => i % SEMTABLE.rootWords === SEMTABLE.treapWord);
    const mapped = (pointer: bigint) => pointer >= NULL_PAGE_LIMIT && this.target.mapped.some((range) => pointer >= range.start && pointer < range.end);
    return semaphoreWaits(treaps, (sudog) => this.q.readMemory(hex(sudog), SEMTABLE.sudogWords), MAX_SUDOGS, mapped);
  }

  /**
   * The cycles among goroutines waiting on sync.Mutexes, where the dump shows who holds each: a
   * waiting goroutine's own function took `x.mu` on an earlier line and has not unlocked it (its
   * code says so), and `&x.mu` evaluated in that frame is the mutex another goroutine waits on.
   * Only a debugger that lists goroutines as threads (Delve) has that frame to evaluate in; with
   * another (gdb) the holders stay unknown, and the waiters are said grouped by the mutex they wait on.
   */
  async lockCycles(waiting: Goroutine[]): Promise<{ cycles: DeadlockEdge[][]; goroutineFrames: boolean | null; notes: string[] }> {
    const onLocks = waiting.filter((g) => g.lock !== null && g.goid !== null);
    if (onLocks.length === 0) return { cycles: [], goroutineFrames: null, notes: [] };
    const locks = new Set(onLocks.map((g) => g.lock));
    const ownerOf = new Map<string, number>();
    const nameOf = new Map<number, string>();
    const took: string[] = [];
    const readLine = this.target.readLine;
    let goroutineFrames = false;
    // Any waiting goroutine may hold them: one waiting on a channel while it holds a lock too.
    for (const g of waiting.filter((w) => w.goid !== null)) {
      const own = ownFrame(g);
      const level = own ? await this.unwoundLevel(g.goid ?? 0, own) : null;
      if (!own?.file || own.line === null || level === null || !readLine) continue;
      goroutineFrames = true;
      const file = own.file;
      // As an integer: a debugger may print a pointer to a struct as the struct (Delve does).
      const addressOf = async (expression: string) => printedAddress(await this.q.evaluate(`uintptr(unsafe.Pointer(&${expression}))`, { thread: g.goid ?? 0, frame: level }));
      // The waiting line's lock, named when it evaluates to the mutex the runtime says it waits on.
      const waitsOn = g.lock === null ? null : goLockTaken(readLine(file, own.line) ?? "");
      if (waitsOn && (await addressOf(waitsOn)) === g.lock) nameOf.set(g.goid ?? 0, waitsOn);
      const start = goFunctionStart((n) => readLine(file, n), own.line);
      if (start === null) continue;
      const body = Array.from({ length: own.line - start }, (_, i) => ({ line: start + i, text: readLine(file, start + i) ?? "" }));
      for (const held of goLocksHeldBefore(body, own.line)) {
        const lock = await addressOf(held.expression);
        if (lock === null || !locks.has(lock) || ownerOf.has(lock)) continue;
        ownerOf.set(lock, g.goid ?? 0);
        took.push(`goroutine ${g.goid} took \`${held.expression}\` (${lock}) at ${basename(file)}:${held.line} and has not unlocked it`);
      }
    }
    const waits: LockWait[] = onLocks.map((g) => ({ thread: g.goid ?? 0, lock: g.lock, waiter: ownFrame(g) }));
    const cycles = deadlockCycles(waits, ownerOf);
    for (const edge of cycles.flat()) edge.lockName = nameOf.get(edge.thread) ?? null;
    // "0xc0000ac030: goroutine 18 (main.transfer at main.go:27)".
    const waiter = (g: Goroutine) => {
      const own = ownFrame(g);
      return `${g.goid}${own?.file && own.line !== null ? ` (${own.function} at ${basename(own.file)}:${own.line})` : ""}`;
    };
    const grouped = [...locks].map((lock) => {
      const waiters = onLocks.filter((g) => g.lock === lock);
      return `${lock}: goroutine${waiters.length > 1 ? "s" : ""} ${waiters.map(waiter).join(", ")}`;
    });
    const notes = [`goroutines wait to lock ${locks.size === 1 ? "one sync.Mutex" : `${locks.size} sync.Mutexes`} (read from the runtime's semaphore table): ${grouped.join("; ")}`];
    if (took.length > 0) notes.push(`a sync.Mutex records no holder; who holds each was read from the waiting goroutines' code and their frames: ${took.join("; ")}`);
    else if (goroutineFrames) notes.push("a sync.Mutex records no holder, and no waiting goroutine's own function took one of these before its wait: who holds each is unknown");
    else notes.push("a sync.Mutex records no holder, and this debugger shows no goroutine's frame to read one from its code (Delve does): who holds each is unknown");
    return { cycles, goroutineFrames, notes };
  }

  /** The level of a goroutine's frame in the debugger's own unwind, when it lists the goroutine as the thread of that id and that frame is on its stack. */
  private async unwoundLevel(goid: number, frame: PlacedFrame): Promise<number | null> {
    if (!this.target.threads.some((thread) => thread.id === goid)) return null;
    const { frames } = await this.q.backtrace(MAX_FRAMES, { thread: goid });
    return frames.find((f) => f.function === frame.function && f.line === frame.line)?.level ?? null;
  }

  /**
   * A goroutine's frames from its saved registers, each return address named by Go's table or the
   * debugger's symbols: walked by frame pointers. Where a saved pointer leads out of the goroutine's
   * stack before the chain's end, it is stale (one Go did not move when it copied the stack to grow
   * or shrink it, so which frames are cut depends on when that happened), and the walk goes on by
   * the frames' sizes in Go's pc-SP table, as Go's own traceback walks: the caller of the frame whose
   * pointer is stale starts 16 bytes above that frame's base.
   */
  async frames(g: GRecord): Promise<{ frames: PlacedFrame[]; walkedBy: WalkedBy }> {
    const { frames, resume } = await this.framesByPointers(g);
    if (resume === null || this.lines === null) return { frames, walkedBy: "frame pointers" };
    const before = frames.length;
    await this.framesBySize(g, this.lines, frames, resume);
    return { frames, walkedBy: frames.length > before ? "frame pointers, then by their sizes" : "frame pointers" };
  }

  /**
   * The frames by the frame pointers' chain; `resume` when a saved pointer leads out of the
   * goroutine's stack: the last frame's pc and its stack pointer, for the walk by sizes.
   */
  private async framesByPointers(g: GRecord): Promise<{ frames: PlacedFrame[]; resume: { pc: bigint; sp: bigint } | null }> {
    const frames: PlacedFrame[] = [await this.frameAt(0, g.sched.pc, false)];
    let bp = g.sched.bp;
    while (frames.length < MAX_FRAMES && inStack(g, bp)) {
      const [saved, ret] = await this.q.readMemory(hex(bp), 2);
      if (saved === undefined || ret === undefined || ret < NULL_PAGE_LIMIT) break;
      frames.push(await this.frameAt(frames.length, ret, !returnsToFault(frames)));
      // The chain's end (goexit's frame saves no pointer), or a pointer left behind when Go moved the stack.
      if (saved !== 0n && !inStack(g, saved)) return { frames, resume: { pc: ret, sp: bp + 16n } };
      if (saved <= bp) break;
      bp = saved;
    }
    return { frames, resume: null };
  }

  /**
   * Adds the frames above `from` by their sizes: at each pc the table gives the frame's size, above
   * which its caller pushed the return address. It ends at runtime.goexit, where every goroutine
   * starts, or at anything that is not Go's code or not in the goroutine's stack.
   */
  private async framesBySize(g: GRecord, lines: GoLineTable, frames: PlacedFrame[], from: { pc: bigint; sp: bigint }): Promise<void> {
    let { pc, sp } = from;
    while (frames.length < MAX_FRAMES && frames.at(-1)?.function !== "runtime.goexit") {
      const size = lines.frameSize(pc);
      if (size === null) return;
      const returnSlot = sp + BigInt(size);
      if (returnSlot < g.stack.lo || returnSlot + 8n > g.stack.hi) return;
      const [ret] = await this.q.readMemory(hex(returnSlot), 1);
      if (ret === undefined || lines.framesAt(ret) === null) return;
      frames.push(await this.frameAt(frames.length, ret, !returnsToFault(frames)));
      pc = ret;
      sp = returnSlot + 8n;
    }
  }

  private async frameAt(level: number, pc: bigint, returnAddress: boolean): Promise<PlacedFrame> {
    // A return address is after the call: its line is the call's, one byte before.
    const looked = returnAddress ? pc - 1n : pc;
    const named = await this.named(looked);
    return {
      level,
      address: hex(pc),
      function: named.function,
      args: "",
      file: named.file,
      line: named.line,
      from: null,
      found: "scan",
      unwound: null,
      module: this.target.moduleAt(pc),
    };
  }

  /**
   * The function a pc is compiled in, and its position: from Go's own table where there is one, at
   * the innermost call of the program's own (where sync.(*Mutex).Lock is inlined into a caller, the
   * caller's line that locks; where a function of its own is inlined, that function's line); else
   * as the debugger names it.
   */
  private async named(pc: bigint): Promise<{ function: string | null; file: string | null; line: number | null }> {
    const frames = this.lines?.framesAt(pc) ?? null;
    const compiled = frames?.at(-1);
    if (frames && compiled) {
      const shown = frames.find((frame) => !GO_RUNTIME_FUNCTION.test(frame.function)) ?? frames[0] ?? compiled;
      return { function: compiled.function, file: shown.file, line: shown.line };
    }
    const symbol = await this.q.symbolAt(hex(pc));
    const line = await this.q.sourceLine(hex(pc));
    return { function: symbol?.symbol ?? null, file: line?.file ?? null, line: line?.line ?? null };
  }

  /** The panic's value, as the runtime printed it after "panic: ". */
  async panicValue(panic: bigint): Promise<string | null> {
    const { panic: p } = this.layout;
    const words = await this.q.readMemory(hex(panic), 4);
    const type = words[p.argType / 8];
    const data = words[p.argData / 8];
    if (type === undefined || data === undefined || type < NULL_PAGE_LIMIT) return null;
    const name = await this.typeName(type);
    if (name === null) return null;
    const shape = panicValueShape(name);
    switch (shape.shape) {
      case "string":
      case "struct-string": {
        const text = await this.goString(data);
        return text === null ? null : `${shape.prefix}${text}`;
      }
      case "bounds": {
        const [x, y, flags] = await this.q.readMemory(hex(data), 3);
        if (x === undefined || y === undefined || flags === undefined) return null;
        return boundsErrorText(x, y, (flags & 0xffn) !== 0n, Number((flags >> 8n) & 0xffn));
      }
      case "integer": {
        const value = await this.word(data);
        return value === null ? null : BigInt.asIntN(64, value).toString();
      }
      case "unknown":
        return `a value of type ${name} (its text is not in the dump)`;
    }
  }

  /** A type's name: its name offset counts from the module's types base. */
  private async typeName(type: bigint): Promise<string | null> {
    const types = await this.typesBase();
    return types === null ? null : this.typeNameFrom(types, type);
  }

  private async typeNameFrom(types: bigint, type: bigint): Promise<string | null> {
    const words = await this.q.readMemory(hex(type), 6);
    const { tflag } = this.layout.type;
    const flags = words[Math.floor(tflag / 8)] === undefined ? undefined : (words[Math.floor(tflag / 8)] ?? 0n) >> BigInt((tflag % 8) * 8);
    const str = words[this.layout.type.str / 8];
    if (flags === undefined || str === undefined) return null;
    const nameOff = BigInt.asIntN(32, str & 0xffffffffn);
    const bytes = bytesOf(await this.q.readMemory(hex(types + nameOff), 16));
    return goTypeName(bytes, Number(flags & 0xffn));
  }

  /**
   * `runtime.firstmoduledata.types`. A program without symbols (`-ldflags=-s`) still has its
   * sections: Go's linker puts the type data first in `.rodata` (in `.data.rel.ro` for a PIE), and
   * that start is taken only when the first type `.typelink` lists (an offset from it) has a name.
   */
  private async typesBase(): Promise<bigint | null> {
    const moduledata = await this.q.symbolAddress("runtime.firstmoduledata");
    if (moduledata !== null) return this.word(BigInt(moduledata) + BigInt(this.layout.moduleTypes));
    const own = this.target.files.sections.filter((s) => s.source === "exec");
    for (const [data, links] of [[".rodata", ".typelink"], [".data.rel.ro", ".data.rel.ro.typelink"]] as const) {
      const start = own.find((s) => s.name === data)?.start;
      const typelink = own.find((s) => s.name === links)?.start;
      if (start === undefined || typelink === undefined) continue;
      const [first] = await this.q.readMemory(typelink, 1);
      if (first === undefined) continue;
      const base = BigInt(start);
      if ((await this.typeNameFrom(base, base + BigInt.asIntN(32, first & 0xffffffffn))) !== null) return base;
    }
    return null;
  }

  /** The first Go string (pointer into the program's read-only data, length) stored in [from, to), read as text. */
  private async stringBetween(from: bigint, to: bigint): Promise<string | null> {
    const count = Math.min(MAX_THROW_WORDS, Number((to - from) / 8n));
    if (count < 2) return null;
    const words = await this.q.readMemory(hex(from), count);
    const constant = (address: bigint) => this.target.files.sections.some((s) => s.source === "exec" && /^\.(rodata|go\.buildinfo|noptrdata)$/.test(s.name) && address >= BigInt(s.start) && address < BigInt(s.end));
    for (let i = 0; i + 1 < words.length; i++) {
      const [pointer = 0n, length = 0n] = [words[i], words[i + 1]];
      if (!constant(pointer) || length <= 0n || length > MAX_THROW_MESSAGE) continue;
      const text = goStringText(bytesOf(await this.q.readMemory(hex(pointer), Number((length + 7n) / 8n))), Number(length));
      if (text !== null && /[A-Za-z]{2}/.test(text)) return text;
    }
    return null;
  }

  /** The Go string (pointer, length) at `address`, bounded. */
  private async goString(address: bigint): Promise<string | null> {
    const [pointer, length] = await this.q.readMemory(hex(address), 2);
    if (pointer === undefined || length === undefined || pointer < NULL_PAGE_LIMIT || length <= 0n || length > BigInt(MAX_STRING)) return null;
    return goStringText(bytesOf(await this.q.readMemory(hex(pointer), Number((length + 7n) / 8n))), Number(length));
  }

  /**
   * What `runtime.throw`/`runtime.fatal` was given: the thread that throws is interrupted by the
   * runtime's own SIGABRT, and the signal frame above the trampoline (its ucontext, at the
   * trampoline's CFA) holds the thread's registers then; walking from them reaches the throw,
   * whose string argument is spilled just above its return address.
   */
  async thrown(stack: Stack, signalled: boolean): Promise<{ text: string; frames: PlacedFrame[] } | null> {
    const trampoline = stack.frames.find((frame) => frame.function === "runtime.sigtramp");
    if (!trampoline) {
      // A debugger whose unwind shows no trampoline (Delve's, of a goroutine the signal did not hit)
      // still gives the crashing thread's registers: the kernel keeps rbp across the signal's
      // delivery, so the frame pointers lead from the raise through the handler into the throw.
      // The core's own record of the thread is preferred: a debugger may show the goroutine's registers.
      const fps = signalled ? [...new Set([this.recordedFp, this.target.keyRegisters.fp])].map(toBigInt).filter((fp): fp is bigint => fp !== null) : [];
      for (const fp of fps) {
        const walked = await this.walkToThrow(fp);
        if (walked) return walked;
      }
      return null;
    }
    const uc = toBigInt(await this.q.frameCfa(trampoline.level));
    if (uc === null) return null;
    // struct ucontext: flags, link, stack_t (3 words), then sigcontext's r8…r15, rdi, rsi, rbp, …, rsp, rip.
    const context = await this.q.readMemory(hex(uc), 22);
    return this.walkToThrow(context[15] ?? 0n);
  }

  /** Frame pointers from `bp` up to runtime.throw or runtime.fatal, and the string it was given. */
  private async walkToThrow(from: bigint): Promise<{ text: string; frames: PlacedFrame[] } | null> {
    let bp = from;
    let text: string | null = null;
    const returns: bigint[] = [];
    const within = (address: bigint) => this.target.mapped.some((range) => address >= range.start && address + 16n <= range.end);
    for (let i = 0; i < MAX_FRAMES && within(bp); i++) {
      const [saved, ret] = await this.q.readMemory(hex(bp), 2);
      if (saved === undefined || ret === undefined || ret < NULL_PAGE_LIMIT) break;
      returns.push(ret);
      const caller = (await this.named(ret - 1n)).function ?? "";
      // bp is the frame of the function throw called, `saved` throw's own: its string argument lies
      // between them (a closure that prints it) or just above its return address (the argument's spill slot).
      if (text === null && /^runtime\.(throw|fatal)$/.test(caller)) text = await this.stringBetween(bp + 16n, saved + 32n);
      // The chain leaves the signal's thread stack for the goroutine's (systemstack links them): bounded by MAX_FRAMES, not by direction.
      if (saved === bp) break;
      bp = saved;
    }
    if (text === null) return null;
    // The thread that threw ran the throwing goroutine: past systemstack, its frames are that goroutine's.
    const frames: PlacedFrame[] = [];
    for (const ret of returns) frames.push(await this.frameAt(frames.length, ret, true));
    return { text, frames };
  }

  /**
   * The same, where the debugger unwinds through the signal and off the system stack itself (Delve
   * does): `runtime.throw`/`runtime.fatal` is among the crashing thread's frames, and its message
   * lies between the frame pointer of the function it called and its own, as in the walk above.
   * The frames past it are named again from their return addresses, one per address (a debugger
   * that shows inlined calls as frames of their own repeats an address), so the culprit is the
   * symbol gdb names, and its line the line table's.
   */
  async thrownUnwound(stack: Stack): Promise<{ text: string; frames: PlacedFrame[] } | null> {
    const at = stack.frames.findIndex((frame) => /^runtime\.(throw|fatal)$/.test(frame.function ?? ""));
    const callee = stack.frames[at - 1];
    if (at <= 0 || !callee) return null;
    const bp = toBigInt(keyRegisters(await this.q.registers({ frame: callee.level })).fp);
    if (bp === null || bp < NULL_PAGE_LIMIT) return null;
    const [saved] = await this.q.readMemory(hex(bp), 1);
    if (saved === undefined || saved <= bp) return null;
    const text = await this.stringBetween(bp + 16n, saved + 32n);
    if (text === null) return null;
    const frames: PlacedFrame[] = [];
    let last: string | null = null;
    for (const frame of stack.frames.slice(at, at + MAX_FRAMES)) {
      const pc = toBigInt(frame.address);
      if (pc === null || frame.address === last) continue;
      last = frame.address;
      frames.push(await this.frameAt(frames.length, pc, true));
    }
    return { text, frames };
  }
}

function memoryAccessAt(instruction: Instruction | undefined): "read" | "write" | null {
  return instruction ? memoryAccess(instruction) : null;
}

function goroutineOf(g: GRecord, walk: { frames: PlacedFrame[]; walkedBy: WalkedBy }): Goroutine {
  return { goid: g.goid, status: g.status, waitReason: g.waitReason, frames: walk.frames, walkedBy: walk.walkedBy, lock: null };
}

/** Whether a frame's 16 bytes (a saved frame pointer and a return address) lie in the goroutine's stack. */
function inStack(g: GRecord, address: bigint): boolean {
  return address >= g.stack.lo && address + 16n <= g.stack.hi;
}

/**
 * Whether the next frame's pc is the faulting instruction itself: the runtime injects a call to
 * sigpanic at a fault, with the faulting pc as its return address.
 */
function returnsToFault(frames: PlacedFrame[]): boolean {
  return frames.at(-1)?.function === "runtime.sigpanic";
}

/** A goroutine's first frame of the program's own. */
function ownFrame(g: Goroutine): PlacedFrame | null {
  return g.frames.find((frame) => frame.function !== null && !GO_RUNTIME_FUNCTION.test(frame.function)) ?? null;
}

/** Whether a goroutine waits inside sync.(*Mutex).Lock (an RWMutex's writers wait in one too). */
function locksMutex(g: Goroutine): boolean {
  return g.waitReason === "semacquire" && g.frames.some((frame) => /^sync\.\(\*Mutex\)\.(Lock|lockSlow)$/.test(frame.function ?? ""));
}

/** The address an integer print holds: `824634425392`, `824634425392 = 0xc0000ac030`, `0xc0000ac030`. */
function printedAddress(printed: string | null): string | null {
  const text = (printed ?? "").trim();
  const number = /^(?:(\d+)|(0x[0-9a-f]+))(?:\s*=\s*0x[0-9a-f]+)?$/i.exec(text);
  const value = number?.[1] ?? number?.[2];
  return value ? hex(BigInt(value)) : null;
}

function basename(file: string): string {
  return file.split(/[\\/]/).at(-1) ?? file;
}

function walkedNote(g: GRecord, walk: { frames: PlacedFrame[]; walkedBy: WalkedBy }): string {
  const how = walk.walkedBy === "frame pointers" ? "by frame pointers" : "by frame pointers, then by their sizes in Go's pc-SP table (a saved frame pointer led out of the goroutine's stack: Go had moved the stack and left it behind)";
  return `the crashing thread's unwind stops at Go's signal trampoline: goroutine ${g.goid}'s ${walk.frames.length} frames were walked ${how} from its saved registers (g.sched), read from the runtime (m.curg of the crashing thread)`;
}

/**
 * The goroutine a hang or deadlock is blamed on: one blocked on a channel or a select (not a lock
 * or a WaitGroup, which wait on someone else) in a function no other goroutine waits in — the odd
 * one out, as a dispatcher among its workers is; with none, the first of a lock cycle, else one
 * waiting to lock a sync.Mutex (a WaitGroup's waiter waits for them).
 */
function blamed(waiting: Goroutine[], cycles: DeadlockEdge[][]): Goroutine | null {
  const own = (g: Goroutine) => ownFrame(g)?.function ?? null;
  const count = new Map<string, number>();
  for (const g of waiting) count.set(own(g) ?? "", (count.get(own(g) ?? "") ?? 0) + 1);
  const oddFirst = (gs: Goroutine[]) => [...gs].sort((a, b) => (count.get(own(a) ?? "") ?? 0) - (count.get(own(b) ?? "") ?? 0) || (a.goid ?? 0) - (b.goid ?? 0))[0];
  const onChannel = oddFirst(waiting.filter((g) => /^(chan|select)/.test(g.waitReason ?? "")));
  const inCycle = waiting.find((g) => g.goid !== null && g.goid === cycles[0]?.[0]?.thread);
  return onChannel ?? inCycle ?? oddFirst(waiting.filter((g) => g.lock !== null)) ?? waiting[0] ?? null;
}

/** What a program without symbols still tells, and what it does not. */
function strippedNote(pcLineTable: boolean): string {
  const delve = "; Delve cannot read it either, as it needs DWARF. Keep the unstripped build of each release to read its cores";
  return pcLineTable
    ? `the program has no symbol table (built with -ldflags=-s, or stripped): its frames were named from Go's own pc-line table (.gopclntab), as the runtime's traceback names them, but the runtime's list of goroutines (allgs) cannot be found without symbols, so the waits of a deadlock or a hang are not read${delve}`
    : `the program has no symbol table (built with -ldflags=-s, or stripped), and Go's pc-line table was not read: the goroutine's frames and the culprit are unknown, and a throw's message is not found${delve}`;
}

/** What a goroutine waits on: go1.19 says only "semacquire" for a sync.Mutex and a WaitGroup alike; its frames tell them apart. */
function waitOf(g: Goroutine): string {
  const syncWait = g.frames.map((frame) => /^sync\.\(\*(Mutex|RWMutex|WaitGroup|Cond)\)\./.exec(frame.function ?? "")).find((match) => match !== null);
  return syncWait ? `a sync.${syncWait[1]}` : (g.waitReason ?? "something");
}

/** "hung: 5 goroutines wait: 3 on chan receive (in main.worker), …". */
function hungMessage(waiting: Goroutine[]): string {
  const groups = new Map<string, number>();
  for (const g of waiting) {
    const where = g.frames.find((frame) => frame.function !== null && !GO_RUNTIME_FUNCTION.test(frame.function))?.function ?? "??";
    const key = `${waitOf(g)} (in ${where})`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  const parts = [...groups].sort((a, b) => b[1] - a[1]).map(([key, n]) => `${n} on ${key}`);
  return `hung: all ${waiting.length} goroutines of the program's own wait: ${parts.join(", ")}`;
}

/** The kind a runtime throw names: Go's stack overflow and its scheduler's deadlock are kinds of their own. */
function throwKind(text: string): CrashKind {
  if (/all goroutines are asleep/.test(text)) return "deadlock";
  if (/^stack overflow\b/.test(text)) return "stack-overflow";
  return "panic";
}
