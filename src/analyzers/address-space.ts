/** Where an address lies in the process: code of a module, or a dumped segment such as a stack. */
import type { MemoryRegion } from "../debuggers/model.js";
import type { Mapping, TargetFiles, TargetSection } from "../debuggers/probe.js";
import type { FaultPlace, Stretch } from "../report/document.js";

export type { FaultPlace } from "../report/document.js";

/** The first page(s) are never mapped: an access there came from a NULL pointer (plus offset). */
export const NULL_PAGE_LIMIT = 0x10000n;

const CODE_SECTIONS = new Set([".text", ".plt", ".plt.got", ".plt.sec", ".init", ".fini", ".iplt"]);

/** Whether a range of addresses (`start` included, `end` not) holds an address. */
export function holds(range: { start: string; end: string }, address: bigint): boolean {
  return BigInt(range.start) <= address && address < BigInt(range.end);
}

/** What the dump shows of the process's memory: the debugger's sections, the file's regions, the libraries not here. */
export interface AddressSpace {
  files: TargetFiles;
  /** The regions the dump file records (a core's segments, a minidump's memory info or Linux maps). */
  regions: MemoryRegion[];
  /** Images of modules whose files are not here, or not in the build the process ran. */
  absentImages: { start: bigint; end: bigint }[];
}

/**
 * Whether an address is code, as far as the dump shows: true where an executable mapping or a code
 * section of a file here holds it, false where the dump shows something else there (memory without
 * execute permission, a file's data, no mapping at all), and null where it cannot tell (the image
 * of a module whose file is not here, a dump that records no mappings). The dump's own mappings
 * come first: they are the process's, the files here may be another build. A missing file is
 * never evidence that an address is not code.
 */
export function codeAt(space: AddressSpace, address: bigint): boolean | null {
  if (address < NULL_PAGE_LIMIT) return false;
  const { files, regions } = space;
  const region = regions.find((r) => r.permissions !== null && holds(r, address));
  if (region?.permissions) return region.permissions.includes("x");
  if (space.absentImages.some((image) => image.start <= address && address < image.end)) return null;
  const fileSections = files.sections.filter((section) => section.source !== "core" && section.loaded !== false);
  const inFile = fileSections.filter((section) => holds(section, address));
  if (inFile.length > 0) return inFile.some((section) => CODE_SECTIONS.has(section.name));
  if (files.sections.some((section) => section.loaded === false && holds(section, address))) return null;
  // No mapping, file or image holds it: that shows it is no code only where the dump records its mappings.
  return regions.some((r) => r.permissions !== null) || fileSections.length > 0 ? false : null;
}

/** The core segment that holds an address (e.g. the stack of the crashing thread). */
export function coreSegmentAt(files: TargetFiles, address: bigint): TargetSection | null {
  return files.sections.find((section) => section.source === "core" && holds(section, address)) ?? null;
}

/** The section of a loaded file (the program, a library, the vDSO) that holds an address. */
export function fileSectionAt(files: TargetFiles, address: bigint): TargetSection | null {
  return files.sections.find((section) => section.source !== "core" && holds(section, address)) ?? null;
}

/** The process's mapping that holds an address. */
export function mappingAt(mappings: Mapping[], address: bigint): Mapping | null {
  return mappings.find((mapping) => holds(mapping, address)) ?? null;
}


const NULL_PAGE = 0x1000n;
/** How far below its stack a thread's stack pointer can have gone: a huge frame of up to 256 MiB. */
const STACK_REACH = 256n << 20n;
const hex = (n: bigint) => `0x${n.toString(16)}`;

/**
 * Places a fault address among what the dump maps: the null page below 4 KiB, the crashing thread's
 * stack (the dumped segment holding its stack pointer), a file's section, another dumped segment,
 * or the unmapped gap between the nearest of them.
 */
export function placeFault(files: TargetFiles, address: bigint, sp: bigint | null): FaultPlace {
  const stretches: Stretch[] = files.sections.map((section) => ({
    label: labelOf(section, sp),
    start: section.start,
    end: section.end,
  }));
  if (address < NULL_PAGE) return { address: hex(address), within: { label: "the null page (never mapped)", start: "0x0", end: hex(NULL_PAGE) }, below: null, above: null };
  const within = stretches.filter((s) => holds(s, address)).sort((a, b) => Number(BigInt(a.end) - BigInt(a.start) - (BigInt(b.end) - BigInt(b.start))))[0];
  if (within) return { address: hex(address), within, below: null, above: null };
  const below = stretches.filter((s) => BigInt(s.end) <= address).sort((a, b) => (BigInt(b.end) > BigInt(a.end) ? 1 : -1))[0] ?? null;
  const above = stretches.filter((s) => BigInt(s.start) > address).sort((a, b) => (BigInt(a.start) > BigInt(b.start) ? 1 : -1))[0] ?? null;
  return { address: hex(address), within: null, below, above };
}

function labelOf(section: TargetSection, sp: bigint | null): string {
  if (section.source === "core") {
    // The stack holds the stack pointer, or lies just above it when a frame too large for the
    // stack moved the pointer past its end (a stack overflow by a huge frame).
    const start = BigInt(section.start);
    const holdsSp = sp !== null && (holds(section, sp) || (sp < start && start - sp <= STACK_REACH));
    return holdsSp ? "the crashing thread's stack" : "memory of the process (a dumped segment)";
  }
  const file = section.source === "exec" ? "the program" : (section.source.split("/").pop() ?? section.source);
  return `${file} ${section.name}`;
}
