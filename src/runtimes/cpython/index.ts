/**
 * A CPython process in a core, read from its memory the way py-spy and pystack read one, with no
 * debug information (a stripped interpreter will do): `_PyRuntime` found among the interpreter's
 * dynamic symbols, its version from `Py_Version`, and the threads' Python frames walked by the
 * layout of that version. A version without a layout is refused, with why; what could not be read
 * is said, never guessed.
 */
import path from "node:path";

import { DumpFile, DumpFileError, dynamicSymbols, isElf, mappedBias, programBuildId, readElfCore, coreMemory, type ElfCoreFacts } from "../../debuggers/dumpfile/index.js";
import { layoutFor, versionText } from "./layouts.js";
import { CoreProcessMemory, type ProcessMemory } from "./memory.js";
import { walkThreads, type PythonThread } from "./walk.js";

export { AUTO_LOAD_DIRS, extensionCommand, extensionFor, hasScript, readExtensionOutput, type ExtensionReading, type GdbExtension } from "./gdb-extension.js";
export { lineAt, lineRanges, type LineRange } from "./line-table.js";
export { PYTHON_3_11, layoutFor, versionText, type PythonLayout } from "./layouts.js";
export { type ProcessMemory } from "./memory.js";
export { readString, type Read, type TypeAddresses } from "./objects.js";
export { handlerRanges, liveDepthAt, type HandlerRange } from "./exception-table.js";
export { PythonObjects, type PythonLock, type ValueAddresses } from "./values.js";
export { MAX_LOCALS, walkThreads, type NamedLock, type PythonFrame, type PythonLocal, type PythonThread, type PythonWalk } from "./walk.js";

export interface PythonReading {
  /** The interpreter's version (`3.11.2`), where `Py_Version` could be read. */
  version: string | null;
  /** Each thread the interpreter knows, with its Python frames; empty where they could not be read (`notes` say why). */
  threads: PythonThread[];
  /** The kernel's id of the thread that held the GIL; null where none did or it was not read. */
  gilHolder?: number | null;
  notes: string[];
}

/** The interpreter's program or library: `python3.11`, `libpython3.11.so.1.0`, `libpython3.12d.so`. */
const INTERPRETER_FILE = /^(lib)?python\d+\.\d+[a-z]*(\.so(\.[\d.]+)?)?$/;

/** The runtime, the version, and the interpreter's own objects each value is checked against. */
const SYMBOLS = ["_PyRuntime", "Py_Version", "PyCode_Type", "PyUnicode_Type", "PyBytes_Type"] as const;
const VALUE_SYMBOLS = {
  tuple: "PyTuple_Type",
  list: "PyList_Type",
  dict: "PyDict_Type",
  long: "PyLong_Type",
  float: "PyFloat_Type",
  builtinMethod: "PyCFunction_Type",
  boundMethod: "PyMethod_Type",
  none: "_Py_NoneStruct",
  true: "_Py_TrueStruct",
  false: "_Py_FalseStruct",
} as const;

/** Whether a process that mapped these files ran CPython: its interpreter or its library is among them. */
export function isCPython(files: readonly { path: string }[]): boolean {
  return files.some((file) => INTERPRETER_FILE.test(path.basename(file.path)));
}

/**
 * The Python threads of the process a core is of, with their frames; null when the core is of no
 * CPython process (or no ELF core at all).
 */
export async function readPythonThreads(core: string): Promise<PythonReading | null> {
  const file = DumpFile.open(core);
  try {
    if (!isElf(file.read(0, Math.min(64, file.size), "the file's header"))) return null;
    const facts = readElfCore(file);
    if (!isCPython(facts.modules)) return null;
    if (facts.platform.arch !== "x86_64") return refused(`the core is of ${facts.platform.arch}: CPython's layouts here are those of x86-64 builds`);
    const memory = new CoreProcessMemory(coreMemory(file), facts.mappedFiles, facts.modules);
    try {
      const reading = readInterpreter(facts, memory);
      return { ...reading, notes: [...reading.notes, ...memory.notes] };
    } finally {
      memory.close();
    }
  } finally {
    file.close();
  }
}

function refused(why: string, version: string | null = null): PythonReading {
  return { version, threads: [], notes: [why] };
}

function readInterpreter(facts: ElfCoreFacts, memory: ProcessMemory): PythonReading {
  const found = interpreterSymbols(facts);
  if ("why" in found) return refused(found.why);
  const { symbols, bias, file } = found;
  const at = (name: string) => {
    const value = symbols.get(name);
    return value === undefined ? null : value + bias;
  };
  const versionAt = at("Py_Version");
  if (versionAt === null) return refused(`${file} has no Py_Version: an interpreter older than 3.11, whose layout is not known here`);
  const versionBytes = memory.read(versionAt, 4);
  if (versionBytes === null) return refused(`Py_Version of ${file} is neither in the core nor in the file here: the version, and so the layout, is unknown`);
  const hex = versionBytes.readUInt32LE(0);
  const version = versionText(hex);
  const layout = layoutFor(hex);
  if (layout === null) return refused(`CPython ${version}: its structures' layout is not known here (3.11 is), so its frames are not read`, version);
  const [runtime, code, str, bytes] = [at("_PyRuntime"), at("PyCode_Type"), at("PyUnicode_Type"), at("PyBytes_Type")];
  if (runtime === null || code === null || str === null || bytes === null) return refused(`${file} lacks one of ${SYMBOLS.join(", ")}`, version);
  const values = Object.entries(VALUE_SYMBOLS).map(([key, name]) => [key, at(name)] as const);
  const missing = values.filter(([, address]) => address === null).map(([key]) => VALUE_SYMBOLS[key as keyof typeof VALUE_SYMBOLS]);
  if (missing.length > 0) return refused(`${file} lacks ${missing.join(", ")}`, version);
  const walk = walkThreads(memory, layout, { code, str, bytes, ...(Object.fromEntries(values) as Record<keyof typeof VALUE_SYMBOLS, bigint>) }, runtime);
  return { version, threads: walk.threads, gilHolder: walk.gilHolder ?? null, notes: walk.notes };
}

/** The interpreter's symbols, from the first of the core's interpreter files here that defines `_PyRuntime`, and how far it was moved. */
function interpreterSymbols(facts: ElfCoreFacts): { symbols: Map<string, bigint>; bias: bigint; file: string } | { why: string } {
  const problems: string[] = [];
  for (const module of facts.modules.filter((m) => INTERPRETER_FILE.test(path.basename(m.path)))) {
    const start = facts.mappedFiles.filter((m) => m.path === module.path && m.fileOffset === 0n).reduce<bigint | null>((min, m) => (min === null || m.start < min ? m.start : min), null);
    if (start === null) continue;
    let file: DumpFile;
    try {
      file = DumpFile.open(module.path);
    } catch (error) {
      problems.push(`${module.path} could not be opened here (${(error as Error).message})`);
      continue;
    }
    try {
      const here = programBuildId(file);
      if (module.buildId === null || here !== module.buildId) {
        problems.push(`${module.path} here is not the build the process ran (build id ${here ?? "none"} here, ${module.buildId ?? "unknown"} in the core)`);
        continue;
      }
      const symbols = dynamicSymbols(file, [...SYMBOLS, ...Object.values(VALUE_SYMBOLS)]);
      if (!symbols.has("_PyRuntime")) continue;
      const bias = mappedBias(file, start);
      if (bias === null) {
        problems.push(`${module.path} has no loadable segments`);
        continue;
      }
      return { symbols, bias, file: module.path };
    } catch (error) {
      if (!(error instanceof DumpFileError)) throw error;
      problems.push(`${module.path} could not be read: ${error.message}`);
    } finally {
      file.close();
    }
  }
  const tried = problems.length > 0 ? `: ${problems.join("; ")}` : "";
  return { why: `no interpreter file of the process defines _PyRuntime here, so its Python threads cannot be found${tried}` };
}
