/**
 * Which frames are the program's own code: the skip lists for the C/C++/Rust runtimes and the
 * abort/assert/terminate/panic machinery, the culprit frame, and the crash signature.
 */
import type { Frame } from "../debuggers/model.js";
import type { SharedLibrary, TargetFiles } from "../debuggers/probe.js";
import { fileSectionAt } from "./address-space.js";
import { GO_RUNTIME_FUNCTION } from "./go-runtime.js";

export interface PlacedFrame extends Frame {
  /** The executable or shared object the frame's code lives in, when known. */
  module: string | null;
}

export type ModuleLocator = (address: bigint) => string | null;

/**
 * Which file's code an address is in, from the sections the debugger lists for the program and
 * each library (falling back on the libraries' text ranges); null for memory that holds no
 * file's code, such as the null page a bad call jumped to.
 */
export function moduleLocator(files: TargetFiles, libraries: SharedLibrary[]): ModuleLocator {
  return (address) => {
    const section = fileSectionAt(files, address);
    if (section) return section.source === "exec" ? files.executable : section.source;
    const library = libraries.find(
      (lib) => lib.from !== null && lib.to !== null && BigInt(lib.from) <= address && address <= BigInt(lib.to),
    );
    return library?.path ?? null;
  };
}

/**
 * Names the module of every frame. A frame without an address is inlined into the next
 * addressed frame towards frame 0 (or into the pc itself), so it shares that frame's module.
 */
export function placeFrames(frames: Frame[], moduleAt: ModuleLocator, pc: string | null): PlacedFrame[] {
  let inherited = pc === null ? null : moduleAt(BigInt(pc));
  return frames.map((frame) => {
    const module = frame.from ?? (frame.address !== null ? moduleAt(BigInt(frame.address)) : inherited);
    inherited = module;
    return { ...frame, module };
  });
}

/** Shared objects of the C, C++ and Rust runtimes, the loader and the sanitizers. */
/** Rust's SIGSEGV handler for a guard-page hit (`std::sys::pal::unix::stack_overflow::imp::signal_handler`). */
export const RUST_STACK_OVERFLOW_HANDLER = /^std::sys::(pal::)?unix::stack_overflow::(imp::)?signal_handler$/;

const RUNTIME_MODULE =
  /^system-supplied DSO|^(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*|ld|ld64|libstdc\+\+|libgcc_s|libc\+\+|libc\+\+abi|libunwind|libffi|libasan|libubsan|libtsan|liblsan|linux-vdso|linux-gate)([.-].*)?\.so(\.\d+)*$|^linux-vdso/;

/** Windows' system DLLs, the C and C++ runtimes' (MSVC's, mingw's) and .NET's (the CLR, its JIT and hosts). */
const WINDOWS_RUNTIME_MODULE =
  /^(ntdll|kernel32|kernelbase|ucrtbased?|msvcrt|msvcp\d*d?|vcruntime\d*d?(_\d)?|concrt\d*|libstdc\+\+-\d+|libgcc_s_\w+-\d+|libwinpthread-\d+|dbghelp|user32|win32u|gdi32|combase|rpcrt4|ole32|ws2_32|mswsock|sechost|advapi32|wow64\w*|coreclr|clr|clrjit|mscorwks|mscoree|mscoreei|hostfxr|hostpolicy)\.dll$/i;

/** macOS's and iOS's system libraries and language runtimes (libsystem_c, libc++, the Objective-C and Swift runtimes, dyld, CoreFoundation). */
const APPLE_RUNTIME_MODULE = /^(libsystem_\w+|libc\+\+(abi)?(\.\d+)?|libobjc(\.A)?|libdyld|dyld|libswift\w+|libxpc|libdispatch|CoreFoundation|Foundation)(\.dylib)?$/;

/** Functions of those runtimes that may also be linked into the executable itself. */
const RUNTIME_FUNCTION = new RegExp(
  [
    // glibc: signal raising, abort, assert, malloc checks, stack protector, fortify, startup
    "^(__GI_)*_*(raise|abort|assert_fail(_base)?|assert_perror_fail|libc_message|libc_fatal|malloc_printerr|int_free|int_malloc|int_realloc|libc_free|libc_malloc|libc_realloc|stack_chk_fail(_local)?|fortify_fail|chk_fail|pthread_kill(_implementation|_internal)?|libc_start_call_main|libc_start_main(_impl|_alias_\\d+)?|start_thread|clone3?|restore_rt)$",
    "^__\\w+_chk$",
    "^_start$",
    // the C start-up and tear-down code crt1.o and crti.o link into every executable (older glibc's __libc_csu_*)
    "^(__libc_csu_init|__libc_csu_fini|_init|_fini|frame_dummy|register_tm_clones|deregister_tm_clones|__do_global_dtors_aux)$",
    // Windows: raising an exception, and the C runtime's start-up (MSVC's and mingw's)
    "^(RaiseException|RtlRaiseException|_CxxThrowException|KiUserExceptionDispatcher|BaseThreadInitThunk|RtlUserThreadStart|_w?assert)$",
    "^(__tmainCRTStartup|mainCRTStartup|WinMainCRTStartup|wmainCRTStartup|invoke_main|__scrt_common_main(_seh)?)$",
    "^(__GI_)*_*(pthread_mutex_(timed)?lock|lll_lock_wait|futex_\\w+|pthread_cond_\\w+|pthread_join|pthread_clockjoin_ex|clock_nanosleep|nanosleep|sleep)$",
    "^(lll_mutex_lock_optimized|futex_wait|__futex_abstimed_wait_common(64)?)$",
    // C++ runtime: throw, terminate, personality, unwinder, pure virtual
    "^(__cxa_|__cxxabiv1::|__gxx_personality|_Unwind_|__gnu_cxx::|std::|<std::)",
    // macOS: signals, thread start-up, Objective-C's and Swift's exception and failure paths
    "^(__pthread_kill|_sigtramp|_pthread_start|thread_start|objc_exception_throw|_objc_terminate|__exceptionPreprocess|swift_\\w+)$",
    // Rust runtime: panics and the standard library
    "^(core::|alloc::|panic_abort::|panic_unwind::|__rust_|<core::|<alloc::)|^(rust_panic|rust_begin_unwind)$",
    // HotSpot's fatal error path: its signal handler, its error report and its abort
    "^(JVM_handle_linux_signal|javaSignalHandler|os::abort|os::die|VMError::\\w+|report_fatal|report_vm_error|report_java_out_of_memory|report_vm_out_of_memory)$",
  ].join("|"),
);

/** The JDK's own classes: a Java frame of theirs is the runtime's, as libc's frames are. */
const JDK_CLASS = /^(java|javax|jdk|sun|com\.sun)\./;

/** The HotSpot VM's native code and its launcher's: the runtime, in a stack its Java frames were read into. */
const JVM_MODULE = /^(libjvm\.so|libjli\.so|libjava\.so|java)$/;

/** The CPython interpreter's native code and its own extension modules (ctypes' libffi among them): the runtime, in a stack its Python frames were read into. A program's own C extension is not. */
/** Node.js's program and library: V8 and Node's own C++ are the runtime where JavaScript frames were read. */
const NODE_MODULE = /^(node|nodejs|libnode\.so(\.\d+)*)$/;
/** Node's own JavaScript (`node:internal/modules/cjs/loader`), the runtime's, as the standard library is Python's. */
const NODE_INTERNAL_SCRIPT = /^node:/;
const PYTHON_MODULE = /^(python3(\.\d+)?[a-z]*|libpython3\.\d+[a-z]*\.so(\.[\d.]+)?|libffi\.so(\.\d+)*)$/;
/** The interpreter's own extension modules, wherever its prefix is (`/usr/lib`, Fedora's `/usr/lib64`, pyenv's). */
const PYTHON_STDLIB_MODULE = /\/python3\.\d+\/lib-dynload\//;

/**
 * A Python frame of the standard library or the interpreter's frozen modules, not the program's
 * (site-packages and dist-packages are the program's dependencies, read as its own): a file under a
 * folder named for the interpreter's version, wherever its prefix is (`/usr/lib/python3.11/`,
 * `/usr/lib64/python3.11/`, `~/.pyenv/versions/3.11.7/lib/python3.11/`).
 */
const PYTHON_STDLIB_FILE = /(^|\/)python3\.\d+\/(?!site-packages\/|dist-packages\/)|^<frozen /;

/** Source files of code that is not the program's own even when inlined into it. */
// A cross toolchain's headers are the target's system headers (Debian's /usr/aarch64-linux-gnu/include/).
const RUNTIME_FILE = /^\/usr\/include\/|^\/usr\/[a-z0-9_]+-linux-gnu[a-z]*\/include\/|^\/rustc\/|^\/rust\/deps\/|(^|\/)library\/(std|core|alloc|panic_abort|panic_unwind)\/src\//;

/** Whether a module (a path in either system's spelling) is a system or language runtime library. */
export function isRuntimeModule(path: string): boolean {
  const name = path.split(/[\\/]/).at(-1) ?? "";
  return RUNTIME_MODULE.test(name) || WINDOWS_RUNTIME_MODULE.test(name) || APPLE_RUNTIME_MODULE.test(name);
}

export function isRuntimeFrame(frame: PlacedFrame): boolean {
  if (frame.function === "<signal handler called>") return true;
  if (frame.language === "java") return JDK_CLASS.test(frame.function ?? "");
  if (frame.language === "python") return frame.file === null || PYTHON_STDLIB_FILE.test(frame.file);
  if (frame.language === "javascript") return frame.file === null || NODE_INTERNAL_SCRIPT.test(frame.file);
  // No name and no file: a jump into memory that holds no code, or code nothing can be said of
  // (a stripped part of a module); a module stripped whole is judged by `culpritIndex`.
  if (frame.function === null && frame.file === null) return true;
  // A function the program called through an import, found by a stack scan: another module's code.
  if (frame.found === "scan" && frame.address === null) return true;
  if (frame.module !== null && isRuntimeModule(frame.module)) return true;
  if (frame.file !== null && RUNTIME_FILE.test(frame.file)) return true;
  return frame.function !== null && (RUNTIME_FUNCTION.test(normalizeFunctionName(frame.function)) || GO_RUNTIME_FUNCTION.test(frame.function));
}

/** Index in `frames` of the first frame of the program's own code, or null when there is none. */
export function culpritIndex(frames: PlacedFrame[]): number | null {
  const own = ownCode(frames);
  const index = frames.findIndex(own);
  return index < 0 ? null : index;
}

/**
 * Which frames of a stack are the program's own code: not runtime, or unnamed code of a module that
 * names no frame of this stack (stripped whole, `?? in _ctypes.so`: its code is the program's,
 * named by its module). An unnamed frame of a module that names others is a stripped part of it
 * (a statically linked runtime's cold code).
 */
function ownCode(frames: PlacedFrame[]): (frame: PlacedFrame) => boolean {
  const named = new Set(frames.filter((frame) => frame.function !== null && frame.module !== null).map((frame) => frame.module));
  const vm = virtualMachineCode(frames);
  return (frame) =>
    !vm(frame) &&
    (!isRuntimeFrame(frame) ||
      (frame.function === null && frame.file === null && frame.module !== null && !named.has(frame.module) && !isRuntimeModule(frame.module)));
}

/**
 * Which native frames are a language runtime's own code in a stack its frames were read into: where
 * a JVM's Java frames or the interpreter's Python frames were read, the runtime's native frames are
 * the runtime; without them, they are all there is to blame.
 */
function virtualMachineCode(frames: PlacedFrame[]): (frame: PlacedFrame) => boolean {
  const onJvm = frames.some((frame) => frame.language === "java");
  const onPython = frames.some((frame) => frame.language === "python");
  const onNode = frames.some((frame) => frame.language === "javascript");
  const runtimeModule = (module: string) => {
    const name = module.split(/[\\/]/).at(-1) ?? "";
    return (onJvm && JVM_MODULE.test(name)) || (onPython && (PYTHON_MODULE.test(name) || PYTHON_STDLIB_MODULE.test(module))) || (onNode && NODE_MODULE.test(name));
  };
  return (frame) => frame.module !== null && runtimeModule(frame.module);
}

/**
 * A function name without what changes between builds and compilers: parameter lists,
 * template arguments, compiler clone suffixes (`.cold`, `.part.0`, `[clone .isra.0]`), glibc's
 * internal `__GI_` aliases and Rust's legacy symbol hashes.
 */
export function normalizeFunctionName(name: string): string {
  let text = name.trim();
  text = text.replace(/\s*\[clone [^\]]*\]/g, "").replace(/\[cold\]$/, "");
  text = text.replace(/(\.(cold|part|isra|constprop|lto_priv|llvm)(\.\d+)?)+$/, "");
  text = text.replace(/::h[0-9a-f]{16}$/, "");
  text = demangleRustEscapes(text);
  // A closure: `{{closure}}` in legacy Rust symbols, `{closure#0}` in DWARF and v0 symbols.
  text = text.replace(/\{\{closure\}\}|\{closure#\d+\}/g, "{closure}");
  text = text.replace(/^(__GI_)+/, "");
  // LLDB names a C++ function with internal linkage from the global namespace: `::read_field`.
  text = text.replace(/^::(?=\w)/, "");
  // Operators whose names contain brackets must survive the stripping below.
  const operators: string[] = [];
  text = text.replace(/operator\s*(<=>|<<=|>>=|<<|>>|<=|>=|->\*|->|<|>|\(\)|\[\])/g, (op) => {
    operators.push(op.replace(/\s+/g, ""));
    return `\u0000${operators.length - 1}\u0000`;
  });
  text = stripTrailingParameters(text);
  text = stripTemplateArguments(text);
  return text.replace(/\u0000(\d+)\u0000/g, (_, index: string) => operators[Number(index)] ?? "").trim();
}

/** Rust's legacy mangling escapes (`_$u7b$$u7b$closure$u7d$$u7d$`, `$LT$`), as a debugger may leave them. */
function demangleRustEscapes(text: string): string {
  if (!text.includes("$")) return text;
  const escapes: Record<string, string> = { SP: "@", BP: "*", RF: "&", LT: "<", GT: ">", LP: "(", RP: ")", C: "," };
  return text
    .replace(/(^|::)_(?=\$)/g, "$1")
    .replace(/\$(SP|BP|RF|LT|GT|LP|RP|C|u[0-9a-f]{2})\$/g, (_, code: string) => (code.startsWith("u") ? String.fromCharCode(parseInt(code.slice(1), 16)) : (escapes[code] ?? code)))
    .replace(/\.\./g, "::");
}

function stripTrailingParameters(text: string): string {
  const qualified = /\)(\s*(const|volatile|&&|&|noexcept))*\s*$/.exec(text);
  if (!qualified) return text;
  let depth = 0;
  for (let index = qualified.index; index >= 0; index--) {
    if (text[index] === ")") depth++;
    else if (text[index] === "(") {
      depth--;
      // A leading `(anonymous namespace)` is part of the name, not a parameter list.
      if (depth === 0) return index === 0 ? text : text.slice(0, index);
    }
  }
  return text;
}

/** Removes `<...>` groups that follow a name; keeps a leading Rust `<T as Trait>` qualifier's text. */
function stripTemplateArguments(text: string): string {
  let out = "";
  let depth = 0;
  for (let index = 0; index < text.length; index++) {
    const ch = text[index];
    const startsGroup = ch === "<" && (depth > 0 || /[\w)\]]$/.test(out));
    if (startsGroup) depth++;
    else if (ch === ">" && depth > 0) depth--;
    else if (depth === 0) out += ch;
  }
  return out;
}

/**
 * `kind | f1 | f2 | f3` over the first three own-code frames from the culprit outwards. An
 * unnamed frame past the culprit ends it: past a smashed return address a debugger unwinds garbage.
 * An unnamed frame in the code of a runtime whose frames were read into the stack (a stripped
 * interpreter's, between a C extension and its Python caller) is that runtime's code, not garbage.
 */
export function crashSignature(kind: string, frames: PlacedFrame[], from: number | null): string {
  const names: string[] = [];
  const own = ownCode(frames);
  const vm = virtualMachineCode(frames);
  for (const frame of from === null ? [] : frames.slice(from)) {
    if (names.length === 3 || (names.length > 0 && frame.function === null && !vm(frame))) break;
    // A Rust program's own code ends where the standard library's start-up calls its main.
    if (/^std::rt::lang_start/.test(normalizeFunctionName(frame.function ?? ""))) break;
    if (own(frame)) names.push(frame.function ? normalizeFunctionName(frame.function) : `??@${frame.module?.split(/[\\/]/).at(-1) ?? ""}`);
  }
  return [kind, ...names].join(" | ");
}
