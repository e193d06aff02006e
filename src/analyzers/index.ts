/** The analyzers' public surface: the registry, crash triage and its formatter, and the knowledge they apply to the model. */
export { analyzeOutput, type Analysis } from "./registry.js";
export { keyRegisters } from "./registers.js";
export { signalName, signalCodeName } from "./signals.js";
export { codeAt, coreSegmentAt, fileSectionAt, holds, mappingAt } from "./address-space.js";
export { memoryAccess, callArgumentAddress, ARGUMENT_REGISTERS } from "./x86-64.js";
export { memoryOperand, fullRegister, type MemoryOperand } from "./operands.js";
export { mutexOwnerExpression, MAIN_ARENA_TOP, HEAP_START, chunkHeaderAddress, chunkSize, CHUNK_HEADER_WORDS, AMBIGUOUS_FREE_MESSAGE, freedExpression, inUseBitOverwritten, nextChunkHeaderAddress, plausibleChunkSize } from "./glibc.js";
export { classifyCrash, type Symptoms } from "./triage/classify.js";
export { culpritIndex, crashSignature, normalizeFunctionName, isRuntimeFrame, placeFrames, moduleLocator, type PlacedFrame, type ModuleLocator } from "./culprit.js";
export { lockWait, type LockWait } from "./deadlock.js";
export { repeatingCycle, recursionOf, type Recursion, type Cycle } from "./recursion.js";
export { ALL_STACKS, readAheadTriage, triage, triageOptionsOf, type TriageOptions, type TriageResult, type ThreadGroup, type GoReading, type GoroutineSummary, type JvmFacts, type NodeFacts, type PythonFacts } from "./triage/index.js";
export { formatTriage } from "./format.js";
export { readEnvironment } from "./environment.js";
export { CLR_EXCEPTION } from "./windows.js";
