/**
 * What a dump file says about itself, read by dumpdbg without a debugger: the ground truth that
 * no backend may contradict.
 */
import type { ElfCoreFacts } from "./elf-core.js";
import type { MinidumpFacts } from "./minidump.js";

export type DumpFileFacts = ElfCoreFacts | MinidumpFacts;

export type { CoreCut, LostSegment } from "./core-cut.js";
export { coreMemory, findAbortMessage, readElfCore, type Auxv, type CoreMemory, type CoreThread, type ElfCoreFacts, type MappedFile } from "./elf-core.js";
export { dynamicSymbols, elfSections, ET_CORE, hasDwarf, isElf, isGoProgram, loadBias, mappedBias, programBuildId, readElfHeader, type ElfSection } from "./elf.js";
export { readGoLineTable, type GoLineTable, type GoPosition } from "./go-pclntab.js";
export { DumpFile, DumpFileError, Fields, openRegularFile, SortedRanges, specialFileKind } from "./file.js";
export { readMinidump, readMinidumpMemory, type DumpedMemory, type MinidumpFacts, type MinidumpThread } from "./minidump.js";
