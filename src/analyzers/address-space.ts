/** Where an address lies in the process: code of a module, or a dumped segment such as a stack. */
import type { TargetFiles, TargetSection } from "../debuggers/probe.js";

const CODE_SECTIONS = new Set([".text", ".plt", ".plt.got", ".plt.sec", ".init", ".fini", ".iplt"]);

/** Whether an address lies in a code section of the program, a library, or the vDSO. */
export function isCodeAddress(files: TargetFiles, address: bigint): boolean {
  return files.sections.some(
    (section) => CODE_SECTIONS.has(section.name) && BigInt(section.start) <= address && address < BigInt(section.end),
  );
}

/** The core segment that holds an address (e.g. the stack of the crashing thread). */
export function coreSegmentAt(files: TargetFiles, address: bigint): TargetSection | null {
  return (
    files.sections.find(
      (section) => section.source === "core" && BigInt(section.start) <= address && address < BigInt(section.end),
    ) ?? null
  );
}
