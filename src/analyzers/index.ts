/** The analyzers' public surface: the registry, the typed parsers, triage and its formatter. */
export { analyzeOutput, ANALYZERS, type Analysis, type Analyzer } from "./registry.js";
export { parseBacktrace, parseThreadBacktraces, parseFrameLine, type Frame, type Backtrace, type ThreadBacktrace, type Variable } from "./backtrace.js";
export { parseRegisters, keyRegisters, type Register } from "./registers.js";
export { parseSiginfo, parseExitSignal, signalName, signalCodeName, type Siginfo } from "./siginfo.js";
export { parseThreads, type ThreadInfo } from "./threads.js";
export { parseMappings, parseTargetFiles, type Mapping, type TargetFiles, type TargetSection } from "./mappings.js";
export { parseSharedLibraries, type SharedLibrary } from "./shared-libraries.js";
export { parseDisassembly, memoryAccess, callArgumentAddress, type Disassembly, type Instruction } from "./disassembly.js";
export { parseLocals } from "./variables.js";
export { parseAbortMessage, ABORT_MESSAGE_COMMAND } from "./abort-message.js";
export { parseMemoryWords, parseMemoryString } from "./memory.js";
export { classifyCrash, type CrashFacts } from "./classify.js";
export { culpritIndex, crashSignature, normalizeFunctionName, isRuntimeFrame, placeFrames, moduleLocator, type PlacedFrame, type ModuleLocator } from "./culprit.js";
export { repeatingCycle, recursionOf, type Recursion, type Cycle } from "./recursion.js";
export { triage, type CommandRunner, type TriageOptions, type TriageResult, type ThreadGroup } from "./triage.js";
export { formatTriage } from "./format.js";
export { normalizeAddress, printedValue, unquoteGdbString, toBigInt } from "./gdb-text.js";
export { readEnvironment } from "./environment.js";
