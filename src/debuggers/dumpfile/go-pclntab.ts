/**
 * A Go program's own pc-line table (`.gopclntab`), read from its file: the table the runtime prints
 * its tracebacks from, which `-ldflags=-s -w` keeps when it strips the symbol table and DWARF. For
 * a pc: the function it is compiled in, its file and line, and the calls inlined at it (the
 * runtime's inline tree), innermost first, as Go's own traceback names them; and the size of the
 * function's frame there (its pc-SP table), by which that traceback unwinds. Pure over bounded
 * reads: every offset is checked against the table it points into, every walk has a step limit,
 * and a table this reader does not know reads as none.
 *
 * Layout (go1.18–go1.20 on 64-bit): the pcHeader (magic, quantum, pointer size, function count,
 * then the offsets of the name, compilation-unit, file, pc-value and function tables), `ftab`'s
 * (entry, _func) offset pairs sorted by entry, and each `_func` with its pc-value tables' offsets
 * (pc-SP at 16, pc-file at 20, pc-line at 24).
 * The inline tree is a funcdata, an offset from `moduledata.gofunc`: go1.19's moduledata is found
 * in `.noptrdata` as the word that points at the table (in a PIE, the relocation that writes it).
 */
import { cString, DumpFile, Fields } from "./file.js";
import { elfSections, loadBias, readElfHeader, type ElfSection } from "./elf.js";

/** One frame at a pc: a function (inlined or not) and its position there. */
export interface GoPosition {
  function: string;
  file: string | null;
  line: number | null;
}

export interface GoLineTable {
  /** The frames at a pc, innermost first (the calls inlined there, then the function they are compiled in); null for a pc outside Go's code. */
  framesAt(pc: bigint): GoPosition[] | null;
  /**
   * The bytes the frame of the function compiled at `pc` holds there below the return address its
   * caller pushed (its pc-SP table's value): the caller's stack pointer is the frame's plus this
   * plus 8. Null for a pc outside Go's code or a function the table gives no size at that pc.
   */
  frameSize(pc: bigint): number | null;
}

const MAGIC_118 = 0xfffffff0;
const MAGIC_120 = 0xfffffff1;
const SHT_RELA = 4;
const R_X86_64_RELATIVE = 8n;
const PCDATA_INL_TREE_INDEX = 2;
const FUNCDATA_INL_TREE = 3;
const INLINED_CALL_BYTES = 20;
/** go1.19's moduledata: `rodata` and `gofunc`, the base funcdata offsets count from. */
const MODULEDATA_RODATA = 296;
const MODULEDATA_GOFUNC = 304;
/** Bounds on what a damaged table can make this read. */
const MAX_PC_STEPS = 1 << 20;
const MAX_INLINE_DEPTH = 64;
const MAX_NAME = 4096;
const MAX_FUNCS = 4_000_000;
const MAX_RELOCATIONS = 4_000_000;

/**
 * The program's table at the addresses of the process the kernel entered at `processEntry` (a PIE
 * is moved by its load base); null for a program without one this reader knows, or a PIE whose entry is not known.
 */
export function readGoLineTable(path: string, processEntry: bigint | null): GoLineTable | null {
  let file: DumpFile | null = null;
  try {
    file = DumpFile.open(path);
    const header = readElfHeader(file.read(0, Math.min(64, file.size), "the ELF header"));
    const bias = loadBias(header, processEntry);
    if (!header.is64 || !header.little || bias === null) return null;
    const sections = elfSections(file);
    const table = sections.find((s) => s.name === ".gopclntab" || s.name === ".data.rel.ro.gopclntab");
    const text = sections.find((s) => s.name === ".text");
    if (!table || !text) return null;
    const bytes = file.read(table.offset, table.size, "the Go pc-line table");
    const inline = inlineTrees(file, sections, table.address);
    return parse(bytes, text.address, inline, bias);
  } catch {
    return null;
  } finally {
    file?.close();
  }
}

/** Where funcdata lives: the bytes of the section holding `moduledata.gofunc`, from gofunc on. */
interface FuncData {
  bytes: Buffer;
}

/** go1.19's inline trees, when the program's moduledata can be found and says where they are. */
function inlineTrees(file: DumpFile, sections: ElfSection[], pclntab: bigint): FuncData | null {
  const noptrdata = sections.find((s) => s.name === ".noptrdata");
  if (!noptrdata) return null;
  const words = moduledataWords(file, sections, noptrdata, pclntab);
  if (!words) return null;
  const { rodata, gofunc } = words;
  const holder = sections.find((s) => s.address !== 0n && gofunc >= s.address && gofunc < s.address + BigInt(s.size));
  const rodataSection = sections.find((s) => s.name === ".rodata");
  // Another release keeps other fields there: the start of .rodata is what go1.19's `rodata` holds.
  if (!holder || !rodataSection || rodata !== rodataSection.address) return null;
  const at = Number(gofunc - holder.address);
  return { bytes: file.read(holder.offset + at, holder.size - at, "the Go function data") };
}

/** moduledata's `rodata` and `gofunc`: read where the data holds pointers, or from the relocations a PIE's loader applies. */
function moduledataWords(file: DumpFile, sections: ElfSection[], noptrdata: ElfSection, pclntab: bigint): { rodata: bigint; gofunc: bigint } | null {
  const relocations = sections.find((s) => s.type === SHT_RELA && s.name === ".rela.dyn");
  if (relocations) {
    const count = Math.floor(relocations.size / 24);
    if (count > MAX_RELOCATIONS) return null;
    const rela = new Fields(file.read(relocations.offset, count * 24, "the relocations"), "the relocations");
    const addendAt = new Map<bigint, bigint>();
    let moduledata: bigint | null = null;
    for (let i = 0; i < count; i++) {
      if ((rela.u64(i * 24 + 8) & 0xffffffffn) !== R_X86_64_RELATIVE) continue;
      const where = rela.u64(i * 24);
      const addend = rela.u64(i * 24 + 16);
      addendAt.set(where, addend);
      if (addend === pclntab && where >= noptrdata.address && where < noptrdata.address + BigInt(noptrdata.size)) moduledata = where;
    }
    if (moduledata === null) return null;
    const rodata = addendAt.get(moduledata + BigInt(MODULEDATA_RODATA));
    const gofunc = addendAt.get(moduledata + BigInt(MODULEDATA_GOFUNC));
    return rodata === undefined || gofunc === undefined ? null : { rodata, gofunc };
  }
  const data = new Fields(file.read(noptrdata.offset, noptrdata.size, "the Go program's data"), "the Go program's data");
  for (let at = 0; at + MODULEDATA_GOFUNC + 8 <= noptrdata.size; at += 8) {
    if (data.u64(at) !== pclntab) continue;
    return { rodata: data.u64(at + MODULEDATA_RODATA), gofunc: data.u64(at + MODULEDATA_GOFUNC) };
  }
  return null;
}

function parse(bytes: Buffer, textStart: bigint, inline: FuncData | null, bias: bigint): GoLineTable | null {
  const t = new Fields(bytes, "the Go pc-line table");
  const magic = t.u32(0);
  if ((magic !== MAGIC_118 && magic !== MAGIC_120) || t.u8(7) !== 8) return null;
  const quantum = BigInt(t.u8(6));
  const nfunc = Number(t.u64(8));
  if (nfunc <= 0 || nfunc > MAX_FUNCS) return null;
  const offset = (at: number) => Number(t.u64(at));
  const [funcnames, cutab, filetab, pctab, functab] = [offset(32), offset(40), offset(48), offset(56), offset(64)];
  // go1.20 added the function's start line to _func, before its flags and counts.
  const countsAt = magic === MAGIC_120 ? 40 : 36;
  const inlineKnown = magic === MAGIC_118 && inline !== null;
  const entryOf = (i: number) => t.u32(functab + i * 8);

  const nameAt = (off: number): string | null => {
    if (off < 0 || funcnames + off >= bytes.length) return null;
    const name = cString(bytes.subarray(funcnames + off, Math.min(bytes.length, funcnames + off + MAX_NAME)));
    return name === "" ? null : name;
  };

  /** The value a pc-value table gives at `target` (an offset from the function's entry); -1 where it has none. */
  const pcValue = (tableOff: number, target: bigint): number => {
    if (tableOff === 0) return -1;
    let p = pctab + tableOff;
    let pc = 0n;
    let value = -1;
    for (let step = 0; step < MAX_PC_STEPS && p < bytes.length; step++) {
      const delta = varint(bytes, p);
      if (!delta || (delta.value === 0 && step > 0)) return -1;
      value += delta.value & 1 ? -((delta.value + 1) >>> 1) : delta.value >>> 1;
      const pcDelta = varint(bytes, delta.next);
      if (!pcDelta) return -1;
      pc += BigInt(pcDelta.value) * quantum;
      p = pcDelta.next;
      if (target < pc) return value;
    }
    return -1;
  };

  return {
    framesAt(runtimePc) {
      try {
        return framesAt(runtimePc);
      } catch {
        // A table damaged past this pc's entries names nothing there.
        return null;
      }
    },
    frameSize(runtimePc) {
      try {
        const found = funcAt(runtimePc);
        if (found === null) return null;
        const size = pcValue(t.u32(found.func + 16), found.pc - found.entry);
        return size >= 0 ? size : null;
      } catch {
        return null;
      }
    },
  };

  /** The `_func` of the function compiled at a pc, its entry and the pc, as offsets in the text; null outside Go's code. */
  function funcAt(runtimePc: bigint): { func: number; entry: bigint; pc: bigint } | null {
    const pc = runtimePc - bias - textStart;
    if (pc < 0n || pc > 0xffffffffn) return null;
    // The last function whose entry is at or below the pc; the table's last entry is the text's end.
    let lo = 0;
    let hi = nfunc - 1;
    if (pc >= BigInt(entryOf(nfunc))) return null;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (BigInt(entryOf(mid)) <= pc) lo = mid;
      else hi = mid - 1;
    }
    const func = functab + t.u32(functab + lo * 8 + 4);
    return { func, entry: BigInt(t.u32(func)), pc };
  }

  function framesAt(runtimePc: bigint): GoPosition[] | null {
    const found = funcAt(runtimePc);
    if (found === null) return null;
    const { func, entry, pc } = found;
    const name = nameAt(t.u32(func + 4) | 0);
    if (name === null) return null;
    const [pcfile, pcln, npcdata, cuOffset] = [t.u32(func + 20), t.u32(func + 24), t.u32(func + 28), t.u32(func + 32)];
    const nfuncdata = t.u8(func + countsAt + 3);
    const position = (offsetInFunc: bigint, fn: string): GoPosition => {
      const fileno = pcValue(pcfile, offsetInFunc);
      const line = pcValue(pcln, offsetInFunc);
      const fileOff = fileno < 0 ? -1 : t.u32(cutab + (cuOffset + fileno) * 4);
      const file = fileOff < 0 || fileOff === 0xffffffff || filetab + fileOff >= bytes.length ? null : cString(bytes.subarray(filetab + fileOff, Math.min(bytes.length, filetab + fileOff + MAX_NAME)));
      return { function: fn, file: file || null, line: line > 0 ? line : null };
    };
    const frames: GoPosition[] = [];
    let at = pc - entry;
    const pcdata = func + countsAt + 4;
    const inlineOff = inlineKnown && npcdata > PCDATA_INL_TREE_INDEX && nfuncdata > FUNCDATA_INL_TREE ? t.u32(pcdata + npcdata * 4 + FUNCDATA_INL_TREE * 4) : 0xffffffff;
    if (inline && inlineOff !== 0xffffffff) {
      const tree = new Fields(inline.bytes, "the Go inline tree");
      const indexTable = t.u32(pcdata + PCDATA_INL_TREE_INDEX * 4);
      for (let depth = 0; depth < MAX_INLINE_DEPTH; depth++) {
        const index = pcValue(indexTable, at);
        if (index < 0) break;
        const call = inlineOff + index * INLINED_CALL_BYTES;
        if (call + INLINED_CALL_BYTES > inline.bytes.length) break;
        frames.push(position(at, nameAt(tree.i32(call + 12)) ?? "?"));
        // The caller's position is that of an instruction the compiler marked at the call site.
        at = BigInt(tree.i32(call + 16));
      }
    }
    frames.push(position(at, name));
    return frames;
  }
}

function varint(bytes: Buffer, at: number): { value: number; next: number } | null {
  let value = 0;
  for (let i = 0; i < 5 && at + i < bytes.length; i++) {
    const byte = bytes[at + i] ?? 0;
    value += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) return { value: value >>> 0, next: at + i + 1 };
  }
  return null;
}
