/**
 * The debugger-neutral model of a dump: what every layer above `debuggers/` speaks. A backend
 * (gdb, lldb, cdb) fills these shapes from its own output; the dump file's own records (ELF notes,
 * minidump streams) fill the ground-truth parts (stop reason, threads, modules, memory regions)
 * without any debugger.
 *
 * Addresses are lower-case hex strings with a `0x` prefix and no leading zeros (`0x0` for zero):
 * they serialise into the graph's checkpoints and the report as they are.
 */

/** A hex address, normalised: `0x7ffc1234`, `0x0`. */
export type Address = string;

/** Which operating system and architecture the dump comes from. */
export interface Platform {
  os: "linux" | "windows" | "macos" | "other";
  arch: "x86_64" | "x86" | "arm64" | "arm" | "other";
  /** Bytes in a pointer. */
  pointerSize: 4 | 8;
}

/** A name and its value as the debugger printed it, with what could be read from that text. */
export interface Variable {
  name: string;
  value: string;
}

/** One frame of a thread's stack, innermost first (level 0). */
export interface Frame {
  level: number;
  /** The frame's pc; null when the debugger did not print one (an inlined frame, a line start). */
  address: Address | null;
  /** Demangled; null when the debugger knows no symbol there. */
  function: string | null;
  /** The argument list as the debugger printed it, without its parentheses. */
  args: string;
  file: string | null;
  line: number | null;
  /** The 1-based column in `line` where a runtime's tools read one (the expression a JavaScript error was thrown at); absent where not. */
  column?: number | null;
  /** The shared object the debugger named for the frame (frames without debug info). */
  from: string | null;
  /** The language of the frame's code where it is known (`java` for a JVM's frame read by its own tools); null or absent when not. */
  language?: string | null;
  /** The frame's locals, when they were asked for with the stack. */
  locals?: Variable[];
  /**
   * How the frame was found when not by the debugger's unwinder: "scan" for a return address found
   * in the thread's stack memory (checked by the call instruction before it), as Breakpad does;
   * "runtime" for a frame a runtime's own tools read (a JVM's Java frame, by jhsdb), which the
   * debugger cannot select.
   */
  found?: "scan" | "runtime";
  /**
   * The debugger's own frame number for the frame where `level` is not it: for a frame found by a
   * scan, where the debugger's unwind reached the same pc too, else null (its numbering shows other
   * frames or none there); null for a runtime's frame; for a debugger's frame renumbered in a stack a
   * runtime's frames were read into, its number in the debugger's backtrace.
   */
  unwound?: number | null;
  /**
   * Where the frame's function was inlined, innermost first, each with the line of its call site:
   * set where dumpdbg named the frame from a Breakpad symbol file's INLINE records.
   */
  inlinedInto?: { function: string; file: string | null; line: number | null }[];
}

/**
 * The debugger's number for a frame, to place a probe in it: its level, or for a frame found by a
 * stack scan the debugger's frame with the same pc; null when the debugger's unwind has no such frame.
 */
export function debuggerLevel(frame: Frame): number | null {
  return frame.found === "scan" || frame.found === "runtime" ? (frame.unwound ?? null) : (frame.unwound ?? frame.level);
}

export interface Backtrace {
  frames: Frame[];
  /** The listing was cut by a frame count: more frames follow. */
  truncated: boolean;
}

/** One thread as a thread list shows it. */
export interface ThreadSummary {
  /** The debugger's thread number (1-based in gdb and lldb). */
  id: number;
  /** The kernel's thread id (LWP on Linux, TID on Windows). */
  lwp: number | null;
  name: string | null;
  /** The thread the debugger selected on opening the dump: the one that received the signal. */
  current: boolean;
  /** The thread's innermost frame. */
  frame: Omit<Frame, "level"> | null;
}

/** Each thread's stack, as a listing of all threads prints it. */
export interface ThreadBacktrace {
  thread: number;
  lwp: number | null;
  name: string | null;
  frames: Frame[];
}

export interface Register {
  name: string;
  /** The raw value in hex. */
  value: string;
  /** The debugger's natural rendering: decimal, a symbol (`0x... <leaf+12>`) or flag names. */
  natural: string;
}

/** The registers that locate a crash, by architecture-neutral role. */
export interface KeyRegisters {
  pc: Address | null;
  sp: Address | null;
  fp: Address | null;
}

/**
 * Why the process stopped. On Linux: the signal, its `si_code`, the fault address and, for a
 * signal sent by a process, the sender. On Windows: the exception code, flags, address and
 * parameters. A dump with neither (a hang dump, gcore of a live process) has no stop reason.
 */
export type StopReason = SignalStop | ExceptionStop;

export interface SignalStop {
  type: "signal";
  signo: number;
  code: number;
  errno: number;
  /** `si_addr` for SIGSEGV, SIGBUS, SIGILL, SIGFPE; null for signals whose siginfo holds no address. */
  address: Address | null;
  /** `si_pid`/`si_uid` for a signal sent by a process (SI_USER, SI_QUEUE, SI_TKILL). */
  senderPid: number | null;
  senderUid: number | null;
  /** The kernel thread that received it (NT_PRSTATUS's pr_pid), when the file says. */
  thread: number | null;
  /**
   * Who wrote the record: the kernel (an ELF core's NT_SIGINFO), or a crash handler that copied it
   * into a minidump, where si_code is often left 0 and reads as "sent with kill" whatever happened;
   * "thread-status" where a core records only the thread's current signal (pr_cursig, no
   * NT_SIGINFO: qemu-user's cores): `code` is then 0 and means nothing, the address and sender unknown.
   */
  recordedBy?: "kernel" | "crash-handler" | "thread-status";
}

export interface ExceptionStop {
  type: "exception";
  /** The NTSTATUS-style code, `0xc0000005`. */
  code: string;
  flags: number;
  /** Where the exception was raised. */
  address: Address;
  parameters: string[];
  /** The thread id the exception stream names. */
  thread: number | null;
}

/**
 * A check the program's runtime recorded as failing, beside the exception: Breakpad's assertion
 * stream (MDRawAssertionInfo), written by its invalid-parameter and pure-call handlers.
 */
export interface RecordedAssertion {
  expression: string | null;
  function: string | null;
  file: string | null;
  line: number | null;
  type: "invalid-parameter" | "pure-virtual-call" | "unknown";
}

/** What Crashpad's client kept beside the dump (its MINIDUMP_CRASHPAD_INFO stream). */
export interface CrashpadInfo {
  /** The report's and the client's ids; null when the writer left them zero. */
  reportId: string | null;
  clientId: string | null;
  /** The process's simple annotations: product, version, channel, crash keys. */
  simple: Record<string, string>;
  /** Each module's own annotations: its list (e.g. libsystem_c's "abort() called"), key-value pairs and annotation objects. */
  modules: { module: string | null; list: string[]; simple: Record<string, string>; objects: Record<string, string> }[];
}

/** A loaded executable or shared library. */
export interface Module {
  path: string;
  /** Lowest and highest address of the module's image, when known. */
  start: Address | null;
  end: Address | null;
  /** GNU build id (ELF) or the CodeView signature and age (PE): how symbols are matched. */
  buildId: string | null;
  /**
   * The debug file the module's CodeView record names, as its linker wrote it
   * (`C:\build\server.pdb`): where a PE's PDB was; null when no record names one (ELF modules).
   */
  debugFile: string | null;
  /**
   * A PE's TimeDateStamp and SizeOfImage as `%08X%x` (`5F3A2B1C1d000`): the id Microsoft symbol
   * servers file the executable itself under; null for other modules.
   */
  codeId: string | null;
  /** The debugger loaded symbols for it. */
  symbolsLoaded: boolean | null;
  /** Where its code lies, as its program headers in the dump say (a core's modules); absent where the dump does not say. */
  code?: { start: Address; end: Address }[];
}

/** A range of the process's address space. */
export interface MemoryRegion {
  start: Address;
  end: Address;
  /** `r-xp` and the like; null when the dump does not record protections. */
  permissions: string | null;
  /** The file mapped there; null for anonymous memory. */
  file: string | null;
  /** Offset into that file. */
  offset: Address | null;
}

/**
 * One machine instruction. On x86 its operands are in AT&T order and spelling (`mov 0x8(%rax),%edx`:
 * sources first, the destination last), what `analyzers/x86-64.ts` reads: every backend asks its
 * disassembler for that flavour (gdb's default; LLDB's `target.x86-disassembly-flavor att`).
 */
export interface Instruction {
  address: Address;
  /** `leaf+12`, or `+12` in a function's listing; null when no symbol is known there. */
  location: string | null;
  mnemonic: string;
  operands: string[];
  /** The debugger's annotation of a pc-relative operand: the address it names and its symbol. */
  reference: { address: Address; symbol: string | null } | null;
  /** The selected frame's pc. */
  current: boolean;
}

export interface Disassembly {
  function: string | null;
  instructions: Instruction[];
  /** The code could not be read (the pc is not in mapped memory). */
  unreadable: boolean;
}

/** What is at an address: a symbol and offset in a section of a module. */
export interface SymbolAt {
  symbol: string;
  offset: number;
  section: string | null;
  module: string | null;
  /** The source line of the address, when the debugger printed it with the symbol. */
  file?: string | null;
  line?: number | null;
  /**
   * Where the address is in code inlined into `symbol`: the frames there, innermost first, each
   * function with its line at the address, the last `symbol` itself (`symbol` and `offset` stay
   * the function compiled, the one a call enters).
   */
  inlined?: { function: string; file: string | null; line: number | null }[];
}

/** Lines of a source file, as the debugger listed them. */
export interface SourceLine {
  line: number;
  text: string;
}

/** A hex address normalised: lower case, no leading zeros (`0x0` for zero). */
export function normalizeAddress(text: string): Address {
  const value = BigInt(text);
  return `0x${value.toString(16)}`;
}

/** An address as a number, or null when the text is not one. */
export function toBigInt(address: string | null): bigint | null {
  if (address === null) return null;
  try {
    return BigInt(address);
  } catch {
    return null;
  }
}

/**
 * .NET's side of a process, as the runtime's debugger extension (SOS) reads it: JIT-compiled code
 * has no symbols for a native debugger, so its threads, frames, exceptions and locks are the
 * runtime's to tell.
 */
export interface ManagedThread {
  /** The debugger's thread number; null for a thread the OS no longer has. */
  thread: number | null;
  managedId: number;
  osThreadId: number;
  /** Monitors the thread holds. */
  lockCount: number;
  /** The type of the exception the thread holds (its last thrown), when it holds one. */
  exception: string | null;
  /** What the runtime uses the thread for: `Finalizer`, `Threadpool Worker`. */
  role: string | null;
}

/** A managed frame, innermost first. */
export interface ManagedFrame {
  /** `Namespace.Type.Method(ArgTypes)`; null for a frame the runtime does not name. */
  function: string | null;
  /** The assembly, when the listing names it. */
  module: string | null;
  /** From the assembly's PDB, when the runtime found it. */
  file: string | null;
  line: number | null;
  /** A transition frame of the runtime itself (`[HelperMethodFrame_1OBJ: …]`), not a method. */
  runtime: boolean;
  parameters: Variable[];
  locals: Variable[];
}

export interface ManagedStack {
  /** The debugger's thread number; null when the listing does not say. */
  thread: number | null;
  osThreadId: number;
  frames: ManagedFrame[];
}

/** A .NET exception: its type and message, and the frames it was thrown through. */
export interface ManagedException {
  type: string;
  message: string | null;
  /** The exception object's address. */
  object: Address | null;
  /** As the runtime recorded it (innermost first); empty when the listing has none. */
  stack: ManagedFrame[];
}

/** A monitor (`lock (obj)`) some thread holds. */
export interface MonitorLock {
  /** The locked object's address and type. */
  object: Address;
  type: string;
  /** The debugger's number of the owning thread; null when the OS no longer has it. */
  ownerThread: number | null;
  ownerOsThreadId: number;
  /** Threads waiting to enter it. */
  waiters: number;
}

/** Objects of one type on the managed heap. */
export interface HeapTypeStat {
  type: string;
  count: number;
  bytes: number;
}
