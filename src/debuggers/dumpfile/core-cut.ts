/**
 * A core cut short: the kernel stops writing at RLIMIT_CORE, and systemd-coredump at its
 * ProcessSizeMax, leaving program headers that describe more than the file holds. The notes come
 * first in the file and the memory after them, so such a core usually keeps the threads'
 * registers, the signal and the file mappings, and loses memory from some segment on. What it
 * lost is unknown, never zeros, and never the bytes of the mapped file on disk (a written page
 * differed from them).
 */
import type { Address } from "../model.js";
import { PT_LOAD, PT_NOTE, type ProgramHeader } from "./elf.js";
import { hex, SortedRanges } from "./file.js";

/** A PT_LOAD segment whose bytes run past the end of the file, and what it held. */
export interface LostSegment {
  start: Address;
  end: Address;
  /** `rw-`, `r-x`. */
  permissions: string;
  /** The bytes of it past the end of the file. */
  lostBytes: number;
  /** None of it is in the file (else its first part is). */
  whole: boolean;
  /** The file mapped there, or `the stack of LWP N` for memory a thread's stack pointer points into; null for other anonymous memory. */
  holds: string | null;
}

export interface CoreCut {
  /** Where the file ends: the bytes it holds. */
  fileBytes: number;
  /** The bytes its program headers describe. */
  expectedBytes: number;
  /** A note segment runs past the end: the registers, the signal and the mappings are gone with it. */
  notesLost: boolean;
  /** Where the notes end in the file (the furthest end of a PT_NOTE segment); 0 without notes. */
  notesEnd: number;
  /** Every segment the cut took, in the file's order. */
  lost: LostSegment[];
  /** Address ranges of the lost bytes, adjacent ones merged where no readable memory lies between them, sorted. */
  unreadable: { start: bigint; end: bigint }[];
}

/** Any more and the rest is merged into the last range: what it covers is then unknown too, never wrongly read. */
const MAX_UNREADABLE_RANGES = 65_536;

/** The registers that hold a thread's stack pointer, by gdb's names, on each architecture. */
const STACK_POINTERS = ["rsp", "esp", "sp"];

/**
 * What a core whose file holds `fileBytes` lost of what its `segments` describe; null for a whole
 * core. `mappings` (NT_FILE) and the threads' registers name what each lost segment held.
 */
export function coreCut(
  segments: ProgramHeader[],
  fileBytes: number,
  mappings: { start: bigint; end: bigint; path: string }[],
  threads: { lwp: number; registers: Record<string, Address> }[],
): CoreCut | null {
  const expectedBytes = segments.reduce((max, s) => Math.max(max, s.offset + s.filesz), 0);
  if (expectedBytes <= fileBytes) return null;
  const notes = segments.filter((s) => s.type === PT_NOTE);
  const files = new SortedRanges(mappings, (m) => m.start, (m) => m.end);
  const stacks = threads.flatMap((thread) => {
    const name = STACK_POINTERS.find((register) => thread.registers[register] !== undefined);
    const sp = name === undefined ? null : safeBigInt(thread.registers[name] ?? "");
    return sp === null ? [] : [{ lwp: thread.lwp, sp }];
  });
  const loads = segments.filter((s) => s.type === PT_LOAD && s.filesz > 0);
  const lost = loads.filter((s) => s.offset + s.filesz > fileBytes).map((segment) => lostSegment(segment, fileBytes, files, stacks));
  return {
    fileBytes,
    expectedBytes,
    notesLost: notes.some((s) => s.offset + s.filesz > fileBytes),
    notesEnd: notes.reduce((max, s) => Math.max(max, s.offset + s.filesz), 0),
    lost,
    unreadable: unreadableRanges(segments.filter((s) => s.type === PT_LOAD), fileBytes),
  };
}

function lostSegment(segment: ProgramHeader, fileBytes: number, files: SortedRanges<{ start: bigint; end: bigint; path: string }>, stacks: { lwp: number; sp: bigint }[]): LostSegment {
  const kept = Math.max(0, fileBytes - segment.offset);
  const end = segment.vaddr + BigInt(segment.filesz);
  const inFile = files.at(segment.vaddr)?.path ?? null;
  const stack = stacks.filter((s) => s.sp >= segment.vaddr && s.sp < end).map((s) => s.lwp);
  return {
    start: hex(segment.vaddr),
    end: hex(end),
    permissions: `${segment.flags & 4 ? "r" : "-"}${segment.flags & 2 ? "w" : "-"}${segment.flags & 1 ? "x" : "-"}`,
    lostBytes: segment.filesz - kept,
    whole: kept === 0,
    holds: inFile ?? (stack.length === 1 ? `the stack of LWP ${stack[0]}` : stack.length > 1 ? `the stacks of LWPs ${stack.join(", ")}` : null),
  };
}

/**
 * The lost bytes' addresses, merged across gaps that hold no readable memory: a debugger told they
 * are none reads nothing in their place (gdb would read the mapped file's bytes from disk).
 */
function unreadableRanges(loads: ProgramHeader[], fileBytes: number): { start: bigint; end: bigint }[] {
  const sorted = [...loads].sort((a, b) => (a.vaddr < b.vaddr ? -1 : a.vaddr > b.vaddr ? 1 : 0));
  const ranges: { start: bigint; end: bigint }[] = [];
  // Whether nothing readable lay between the last range and here, so that it may grow.
  let adjoining = false;
  for (const segment of sorted) {
    // A segment the core never held (filesz 0) is read from its file, rightly: it was never written.
    const cut = segment.filesz > 0 && segment.offset + segment.filesz > fileBytes;
    if (!cut) {
      adjoining = false;
      continue;
    }
    const lostFrom = segment.vaddr + BigInt(Math.max(0, fileBytes - segment.offset));
    const end = segment.vaddr + BigInt(segment.filesz);
    const last = ranges.at(-1);
    if (adjoining && last && lostFrom === segment.vaddr) last.end = end;
    else ranges.push({ start: lostFrom, end });
    adjoining = true;
  }
  if (ranges.length <= MAX_UNREADABLE_RANGES) return ranges;
  const kept = ranges.slice(0, MAX_UNREADABLE_RANGES);
  kept[kept.length - 1]!.end = ranges.at(-1)!.end;
  return kept;
}

function safeBigInt(value: string): bigint | null {
  try {
    return BigInt(value);
  } catch {
    return null;
  }
}
