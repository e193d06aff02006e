/**
 * HotSpot's fatal error log, `hs_err_pid<pid>.log`, read into what a crash analysis needs: the signal
 * or the VM's own error, the problematic frame, the crashing thread with its native and Java frames,
 * the VM's state, heap and command line. The log is untrusted text (it may be huge, cut short or
 * forged), so it is read bounded and a field it does not show is null or empty, never a guess; each
 * field is read only in the part of the log the VM writes it in (the `#` header, then the S U M M A R Y,
 * T H R E A D and P R O C E S S sections), so a missing part leaves its fields unknown.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";

/** What ran a frame, from its line's leading letter as the log's legend says. */
export type HsErrFrameKind =
  /** `j`: the interpreter ran a Java method. */
  | "java-interpreted"
  /** `J`: a JIT-compiled Java method (c1, c2). */
  | "java-compiled"
  /** `A`: an ahead-of-time compiled Java method (JDK 9 to 16). */
  | "java-aot"
  /** `V`: the VM's own code (libjvm.so). */
  | "vm"
  /** `v`: code the VM generated (`~StubRoutines::call_stub`, `~RuntimeStub::…`, `~BufferBlob::…`). */
  | "stub"
  /** `C`: native code outside the VM (a JNI library, libc, the launcher). */
  | "native";

export interface HsErrFrame {
  kind: HsErrFrameKind;
  /** `Class.method` for a Java frame (`HeaderReader.readHeader`), the symbol for a native one (`Unsafe_GetLong`), the stub's name (`~StubRoutines::call_stub`); null where the log names none. */
  function: string | null;
  /** A Java frame's descriptor as printed: `(Lsun/misc/Unsafe;J)J`. */
  signature: string | null;
  /** The library a native or VM frame is in (`libjvm.so`), the Java module of a JDK method (`java.base@17.0.15`). */
  module: string | null;
  /** The frame's offset in its library: `0xed430c` of `[libjvm.so+0xed430c]`. */
  offset: string | null;
  /** The offset in the function: `0x12c` of `Unsafe_GetLong+0x12c`; for a compiled Java frame, in its compiled code. */
  functionOffset: string | null;
  /** The bytecode index an interpreted frame was at (hs_err prints no Java line numbers). */
  bci: number | null;
  /** The frame's pc where the log prints one: a compiled Java frame, a frame outside any library. */
  pc: string | null;
  language: "java" | null;
}

export interface HsErrSignal {
  /** `SIGSEGV`. */
  name: string;
  number: number | null;
  /** The si_code's name as printed: `SEGV_MAPERR`, `SI_USER`. */
  code: string | null;
  /** si_addr: the address that faulted. */
  address: string | null;
  /** Who sent it, for a signal sent with kill (si_pid, si_uid). */
  sender: { pid: number; uid: number | null } | null;
}

export interface HsErrThread {
  /** HotSpot's class of the thread (`JavaThread`, `VMThread`, `WatcherThread`, …), or `native` for a thread the VM does not know (`Current thread is native thread`). */
  type: string;
  /** The thread's name (`main`); null for a thread printed without one. */
  name: string | null;
  /** A Java thread's state: `_thread_in_vm`, `_thread_in_native`, `_thread_in_Java`. */
  state: string | null;
  /** The OS thread id (`id=`). */
  lwp: number | null;
}

export interface HsErr {
  /** The VM's build: `17.0.15+6-Debian-1deb12u1`. */
  version: string | null;
  /** `# Java VM:` as printed: `OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1, mixed mode, …, linux-amd64)`. */
  vm: string | null;
  /** The signal the VM died of; null for its own errors (see `error`). */
  signal: HsErrSignal | null;
  /** The pc the signal arrived at. */
  pc: string | null;
  pid: number | null;
  /** The OS thread id of the thread that died. */
  tid: number | null;
  /** `# Problematic frame:`: where the signal arrived. */
  problematicFrame: HsErrFrame | null;
  /** An error of the VM's own instead of a signal: `Internal Error (debug.cpp:362)`, `Out of Memory Error (os_linux.cpp:2749)`. */
  error: string | null;
  /** What the error says: `fatal error: OutOfMemory encountered: Java heap space`, `Native memory allocation (mmap) failed to map …`. */
  errorMessage: string | null;
  currentThread: HsErrThread | null;
  /** The crashing thread's stack as the VM walked it, native, VM and Java frames mixed, innermost first. */
  nativeFrames: HsErrFrame[];
  /** Its Java frames from the VM's last Java frame; empty where the log has none (a thread in compiled code has none). */
  javaFrames: HsErrFrame[];
  /** `not at safepoint (normal execution)`. */
  vmState: string | null;
  /** The JVM's options and main class (`Command Line:`), without the launcher. */
  commandLine: string | null;
  /** The main class or jar and its arguments (`java_command:`). */
  javaCommand: string | null;
  /** The `Heap:` section's lines as printed, indented as the VM indents them; at most 20. */
  heap: string[];
  /** Where the VM said the core would go (`Default location:`): a path, or the pipe the kernel hands cores to; null when it said none would be written. */
  coreLocation: string | null;
  /** The process's working directory, where the log names it (only in the core location a piped core pattern falls back to). */
  cwd: string | null;
  /** The log was longer than what is read, or ends before its `END.`. */
  truncated: boolean;
}

/** hs_err logs of real crashes are 40–200 KB; a log of thousands of threads and libraries stays under this. */
const MAX_BYTES = 4 * 1024 * 1024;
const MAX_LINE = 8 * 1024;
/** The VM prints at most StackPrintLimit (100) frames a stack unless told otherwise. */
const MAX_FRAMES = 1_000;
const MAX_HEAP_LINES = 20;

type Section = "header" | "summary" | "thread" | "process" | "system" | "other";

/** `---------------  T H R E A D  ---------------` */
const DIVIDER = /^-{5,} {2}([A-Z](?: [A-Z])+) {1,2}-{5,}$/;
/** `#  SIGSEGV (0xb) at pc=0x00007f9538ad430c, pid=16830, tid=16831`, ` (sent by kill)` after the pc when it was. */
const SIGNAL_HEADER = /^# {2}(SIG[A-Z0-9+-]{1,20}|[A-Z][A-Z0-9_]{1,40}) \((0x[0-9a-f]{1,8})\) at pc=(0x[0-9a-f]{1,16})(?: \(sent by kill\))?, pid=(\d{1,10}), tid=(\d{1,20})$/;
/** `#  Internal Error (debug.cpp:362), pid=17027, tid=17028` */
const ERROR_HEADER = /^# {2}((?:Internal Error|Out of Memory Error) \([^()]{1,300}\)), pid=(\d{1,10}), tid=(\d{1,20})$/;
/** `# Native memory allocation (mmap) failed to map 65536 bytes for committing reserved memory.` */
const NATIVE_OOM = /^# (Native memory allocation .+)$/;
const JRE_VERSION = /^# JRE version: .*\(build ([^()\s]+)\)/;
const JAVA_VM = /^# Java VM: (.+)$/;
/** `# Core dump will be written. Default location: /tmp/x/core (max size 1024 kB). To ensure …` */
const CORE_LOCATION = /^# Core dump will be written\. Default location: (.+?)(?: \(max size \d+ k?B\)\..*)?$/;
/** A piped core pattern: `"/usr/share/apport/apport -p%p …" (or dumping to /srv/app/core.4242)`. */
const PIPED_CORE = /^".*" \(or dumping to (\/.*)\/core\.\d+\)$/;
const VM_INFO = /^vm_info: .*?\(([^()\s]+)\) for /;

const CURRENT_THREAD = /^Current thread \(0x[0-9a-f]{1,16}\): +(\w{1,60})(?: "(.{0,1000})")?(?: daemon)? *\[(.*)$/;
const THREAD_STATE = /^(_thread_[A-Za-z_]{1,40})\b/;
const THREAD_ID = /\bid=(\d{1,10})\b/;
const FRAMES_HEADER = /^(Native|Java) frames: /;
/** `siginfo: si_signo: 11 (SIGSEGV), si_code: 1 (SEGV_MAPERR), si_addr: 0x0000000000000008`, or `…, si_pid: 4242, si_uid: 0` */
const SIGINFO = /^siginfo: si_signo: (\d{1,3}) \(([A-Z0-9+-]{1,20})\), si_code: -?\d{1,10} \(([A-Za-z0-9_]{1,40})\)(?:, si_addr: (0x[0-9a-f]{1,16})|, si_pid: (\d{1,10}), si_uid: (\d{1,10}))?/;

/** `j  HeaderReader.readHeader(Lsun/misc/Unsafe;J)J+6`, ` java.base@17.0.15` after the bci for a JDK method. */
const INTERPRETED = /^j {2}([^\s(]{1,1000})(\([^()\s]{0,2000}\)[^\s+]{1,1000})\+(\d{1,6})(?: (\S{1,200}))?$/;
/** `J 74 c2 HotHeaderReader.handle(Lsun/misc/Unsafe;J)J (6 bytes) @ 0x00007fa2ad31dc14 [0x00007fa2ad31dc00+0x0000000000000014]` (`J 74%` on-stack replacement, a module after the descriptor for a JDK method, no compiler for a native wrapper). */
const COMPILED = /^([JA]) \d{1,10}%? (?:[\w-]{1,20} )? ?([^\s(]{1,1000})(\([^()\s]{0,2000}\)\S{1,1000})(?: (\S{1,200}))? \(\d{1,10} bytes\) @ (0x[0-9a-f]{1,16}) \[0x[0-9a-f]{1,16}\+(0x[0-9a-f]{1,16})\]$/;
/** `V  [libjvm.so+0xed430c]  Unsafe_GetLong+0x12c`, `C  [libc.so.6+0x8ae8c]`, `C  0x0000000000000000` */
const NATIVE = /^([VC]) {2}(?:\[(.{1,500}?)\+(0x[0-9a-f]{1,16})\]|(0x[0-9a-f]{1,16}))(?: {2}(.{1,4000}?)\+(0x[0-9a-f]{1,16}))?$/;
/** `v  ~StubRoutines::call_stub`, with its pc after it in JDK 21 and later; `v  blob 0x…` for code the VM cannot name. */
const STUB = /^v {2}(?:blob (0x[0-9a-f]{1,16})|(~\S{1,500})(?: (0x[0-9a-f]{1,16}))?)$/;
/** A frame line the VM printed without a method or library: `j  0x…`, `J 0x…`. */
const BARE_JAVA = /^([jJ]) {1,2}(0x[0-9a-f]{1,16})$/;

/** Reads an hs_err log, bounded: at most MAX_BYTES of it; null when it cannot be read as a regular file. */
export async function readHsErr(file: string): Promise<HsErr | null> {
  let handle;
  try {
    // O_NONBLOCK: a FIFO given as the log must not wait for a writer; it is refused below.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return null;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return null;
    const buffer = Buffer.alloc(Math.min(stats.size, MAX_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return parse(buffer.subarray(0, bytesRead).toString("utf8"), stats.size > MAX_BYTES);
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

/** An hs_err log's text read into its fields; never throws, whatever the text. */
export function parseHsErr(text: string): HsErr {
  return parse(text.length > MAX_BYTES ? text.slice(0, MAX_BYTES) : text, text.length > MAX_BYTES);
}

function parse(text: string, cut: boolean): HsErr {
  const read: HsErr = {
    version: null,
    vm: null,
    signal: null,
    pc: null,
    pid: null,
    tid: null,
    problematicFrame: null,
    error: null,
    errorMessage: null,
    currentThread: null,
    nativeFrames: [],
    javaFrames: [],
    vmState: null,
    commandLine: null,
    javaCommand: null,
    heap: [],
    coreLocation: null,
    cwd: null,
    truncated: cut,
  };
  const lines = text.split("\n");
  // A last line without its newline was cut (by the bound, or the VM died writing it): its value may be partial.
  if (lines.length > 0) lines.pop();
  let section: Section = "header";
  let list: HsErrFrame[] | "heap" | null = null;
  let previous = "";
  let ended = false;
  let vmInfoVersion: string | null = null;
  let siginfo: HsErrSignal | null = null;
  for (const raw of lines) {
    if (raw.length > MAX_LINE) {
      list = null;
      previous = "";
      continue;
    }
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const divider = DIVIDER.exec(line);
    if (divider) {
      section = sectionOf(divider[1]!);
      list = null;
      continue;
    }
    if (line === "END.") ended = true;
    if (list === "heap") {
      // The heap's lines are indented; the first that is not ends the section.
      if (/^\s+\S/.test(line)) {
        if (read.heap.length < MAX_HEAP_LINES) read.heap.push(line.trimEnd());
        continue;
      }
      list = null;
    } else if (list !== null) {
      const frame = frameOf(line);
      if (frame) {
        if (list.length < MAX_FRAMES) list.push(frame);
        continue;
      }
      // A blank line or the next part's title ends the frames; anything else among them (`...<more frames>...`, an error while printing them) is passed over.
      if (line.trim() === "" || /^[A-Za-z][A-Za-z _()-]*:(?: |$)/.test(line)) list = null;
      else continue;
    }
    if (section === "header") readHeaderLine(read, line, previous);
    else if (section === "summary") {
      const command = /^Command Line: (.*)$/.exec(line);
      if (command && read.commandLine === null) read.commandLine = command[1]!.trim() || null;
    } else if (section === "thread") {
      const thread = CURRENT_THREAD.exec(line);
      if (thread && read.currentThread === null) read.currentThread = threadOf(thread);
      if (line === "Current thread is native thread" && read.currentThread === null) read.currentThread = { type: "native", name: null, state: null, lwp: null };
      const frames = FRAMES_HEADER.exec(line);
      if (frames) {
        const target = frames[1] === "Native" ? read.nativeFrames : read.javaFrames;
        // A second list of the same name (a forged or repeated part) is not read into the first.
        list = target.length === 0 ? target : null;
      }
      const info = SIGINFO.exec(line);
      if (info && siginfo === null) siginfo = siginfoOf(info);
    } else if (section === "process") {
      const state = /^VM state: (.{1,200})$/.exec(line);
      if (state && read.vmState === null) read.vmState = state[1]!.trim();
      if (line === "Heap:" && read.heap.length === 0) list = "heap";
      const command = /^java_command: (.*)$/.exec(line);
      if (command && read.javaCommand === null) read.javaCommand = command[1]!.trim() || null;
    } else if (section === "system") {
      const info = VM_INFO.exec(line);
      if (info && vmInfoVersion === null) vmInfoVersion = info[1]!;
    }
    previous = line;
  }
  read.version ??= vmInfoVersion;
  read.signal = mergedSignal(read.signal, siginfo);
  read.truncated = cut || !ended;
  return read;
}

function sectionOf(title: string): Section {
  switch (title.replace(/ /g, "")) {
    case "SUMMARY":
      return "summary";
    case "THREAD":
      return "thread";
    case "PROCESS":
      return "process";
    case "SYSTEM":
      return "system";
    default:
      return "other";
  }
}

function readHeaderLine(read: HsErr, line: string, previous: string): void {
  const signal = SIGNAL_HEADER.exec(line);
  if (signal && read.signal === null && read.error === null) {
    const [, name, number, pc, pid, tid] = signal;
    read.signal = { name: name!, number: Number.parseInt(number!, 16), code: null, address: null, sender: null };
    read.pc = minimalHex(pc!);
    read.pid = Number(pid);
    read.tid = Number(tid);
    return;
  }
  const error = ERROR_HEADER.exec(line);
  if (error && read.signal === null && read.error === null) {
    read.error = error[1]!;
    read.pid = Number(error[2]);
    read.tid = Number(error[3]);
    return;
  }
  // The line after an error's names what went wrong: `#  fatal error: …`, `#  guarantee(…) failed: …`, `#  Error: …`.
  if (read.error !== null && read.errorMessage === null && ERROR_HEADER.test(previous)) {
    const message = /^# {2}(\S.*)$/.exec(line);
    if (message) read.errorMessage = message[1]!.trim();
    return;
  }
  const nativeOom = NATIVE_OOM.exec(line);
  if (nativeOom && read.errorMessage === null) read.errorMessage = nativeOom[1]!.trim();
  const jre = JRE_VERSION.exec(line);
  if (jre && read.version === null) read.version = jre[1]!;
  const vm = JAVA_VM.exec(line);
  if (vm && read.vm === null) {
    read.vm = vm[1]!.trim();
    // The JRE line names the build; where it is missing, the VM line's first word in parentheses is the same build.
    read.version ??= /\(([^,()\s]+)[,)]/.exec(read.vm)?.[1] ?? null;
  }
  if (previous === "# Problematic frame:" && read.problematicFrame === null) {
    read.problematicFrame = line.startsWith("# ") ? frameOf(line.slice(2)) : null;
  }
  const core = CORE_LOCATION.exec(line);
  if (core && read.coreLocation === null) {
    read.coreLocation = core[1]!;
    read.cwd = PIPED_CORE.exec(core[1]!)?.[1] ?? null;
  }
}

function threadOf(match: RegExpExecArray): HsErrThread {
  const [, type, name, rest] = match;
  return {
    type: type!,
    name: name ?? null,
    state: THREAD_STATE.exec(rest!)?.[1] ?? null,
    lwp: numberOf(THREAD_ID.exec(rest!)?.[1]),
  };
}

function siginfoOf(match: RegExpExecArray): HsErrSignal {
  const [, number, name, code, address, pid, uid] = match;
  return {
    name: name!,
    number: Number(number),
    code: code === "unknown" ? null : code!,
    address: address ? minimalHex(address) : null,
    sender: pid !== undefined ? { pid: Number(pid), uid: numberOf(uid) } : null,
  };
}

/** The header's signal with siginfo's details; siginfo alone where the header is missing, the header's alone where they name different signals. */
function mergedSignal(header: HsErrSignal | null, siginfo: HsErrSignal | null): HsErrSignal | null {
  if (header === null) return siginfo;
  if (siginfo === null) return header;
  if (siginfo.number !== header.number) return header;
  return { ...header, code: siginfo.code, address: siginfo.address, sender: siginfo.sender };
}

/** One line of a stack as HotSpot prints it (frame::print_on_error); null for a line that is no frame. */
function frameOf(line: string): HsErrFrame | null {
  const blank: HsErrFrame = { kind: "native", function: null, signature: null, module: null, offset: null, functionOffset: null, bci: null, pc: null, language: null };
  const interpreted = INTERPRETED.exec(line);
  if (interpreted) {
    const [, method, signature, bci, module] = interpreted;
    return { ...blank, kind: "java-interpreted", function: method!, signature: signature!, module: module ?? null, bci: Number(bci), language: "java" };
  }
  const compiled = COMPILED.exec(line);
  if (compiled) {
    const [, letter, method, signature, module, pc, offset] = compiled;
    return { ...blank, kind: letter === "A" ? "java-aot" : "java-compiled", function: method!, signature: signature!, module: module ?? null, pc: minimalHex(pc!), functionOffset: minimalHex(offset!), language: "java" };
  }
  const native = NATIVE.exec(line);
  if (native) {
    const [, letter, library, offset, pc, symbol, symbolOffset] = native;
    return {
      ...blank,
      kind: letter === "V" ? "vm" : "native",
      function: symbol ?? null,
      module: library ?? null,
      offset: offset ? minimalHex(offset) : null,
      functionOffset: symbolOffset ? minimalHex(symbolOffset) : null,
      pc: pc ? minimalHex(pc) : null,
    };
  }
  const stub = STUB.exec(line);
  if (stub) {
    const [, blob, name, pc] = stub;
    const at = blob ?? pc;
    return { ...blank, kind: "stub", function: name ?? null, pc: at ? minimalHex(at) : null };
  }
  const bare = BARE_JAVA.exec(line);
  if (bare) return { ...blank, kind: bare[1] === "j" ? "java-interpreted" : "java-compiled", pc: minimalHex(bare[2]!), language: "java" };
  return null;
}

/** `0x0000000000000008` → `0x8`, as the rest of dumpdbg writes addresses. */
function minimalHex(text: string): string {
  return `0x${text.slice(2).toLowerCase().replace(/^0+(?=.)/, "")}`;
}

function numberOf(text: string | undefined): number | null {
  return text === undefined ? null : Number(text);
}
