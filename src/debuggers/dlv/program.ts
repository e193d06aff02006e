/**
 * The Go program a Delve session was launched with, read by dumpdbg from its ELF file: Delve's DAP
 * server lists no sections and names no function at an arbitrary pc (its `disassemble` answer
 * carries a file and line, never a symbol; `stackTrace` names only the frames Delve unwinds), so
 * the sections and the function symbols come from the program's own headers and `.symtab`, which
 * are what Delve reads too. A program built non-PIE (Go's default on linux/amd64) is loaded at the
 * addresses its file names; a PIE (`-buildmode=pie`) is moved by its load base, which the core's
 * auxiliary vector gives (where the kernel says the program was entered, less the entry its file
 * names). A PIE whose core records no entry is not given sections: they would be guesses.
 */
import { DumpFile, elfSections, Fields, loadBias, readElfCore, readElfHeader, type ElfSection } from "../dumpfile/index.js";
import type { TargetSection } from "../probe.js";

const SHT_SYMTAB = 2;
const STT_FUNC = 2;
const SYMBOL_BYTES = 24;
/** A big Go service has a few hundred thousand symbols; a table claiming more is not read. */
const MAX_SYMBOLS = 2_000_000;

export interface ProgramFunction {
  name: string;
  start: bigint;
  end: bigint;
}

export interface GoProgram {
  sections: TargetSection[];
  /** The function holding `address`, and how far into it. */
  functionAt(address: bigint): { name: string; offset: number } | null;
}

/** The program's loaded sections and functions in the process `core` holds; an unreadable file reads as none, never a guess. */
export function readProgram(path: string, core: string): GoProgram {
  let file: DumpFile | null = null;
  try {
    file = DumpFile.open(path);
    const header = readElfHeader(file.read(0, Math.min(64, file.size), "the ELF header"));
    if (!header.is64 || !header.little) return NO_PROGRAM;
    const base = loadBias(header, processEntry(core));
    if (base === null) return NO_PROGRAM;
    const sections = elfSections(file);
    const functions = readFunctions(file, sections);
    return {
      sections: sections
        .filter((s) => s.address !== 0n && s.size > 0)
        .map((s) => ({ start: hex(base + s.address), end: hex(base + s.address + BigInt(s.size)), name: s.name, source: "exec" })),
      functionAt: (address) => {
        const found = lookup(functions, address - base);
        return found ? { name: found.name, offset: Number(address - base - found.start) } : null;
      },
    };
  } catch {
    return NO_PROGRAM;
  } finally {
    file?.close();
  }
}

const NO_PROGRAM: GoProgram = { sections: [], functionAt: () => null };

/** Where the kernel entered the program (the core's AT_ENTRY); null without it. */
function processEntry(core: string): bigint | null {
  let file: DumpFile | null = null;
  try {
    file = DumpFile.open(core);
    const entry = readElfCore(file).auxv?.entry ?? null;
    return entry === null ? null : BigInt(entry);
  } catch {
    return null;
  } finally {
    file?.close();
  }
}

/** `.symtab`'s functions, sorted by address; each ends where it says, or where the next begins. */
function readFunctions(file: DumpFile, sections: ElfSection[]): ProgramFunction[] {
  const table = sections.find((s) => s.type === SHT_SYMTAB);
  const strings = table ? sections[table.link] : undefined;
  if (!table || !strings || table.entrySize !== SYMBOL_BYTES) return [];
  const count = Math.floor(table.size / SYMBOL_BYTES);
  if (count > MAX_SYMBOLS) return [];
  const symbols = new Fields(file.read(table.offset, count * SYMBOL_BYTES, "the symbol table"), "the symbol table");
  const names = file.read(strings.offset, strings.size, "the symbol names");
  const found: { name: string; start: bigint; size: bigint }[] = [];
  for (let i = 0; i < count; i++) {
    const at = i * SYMBOL_BYTES;
    if ((symbols.u8(at + 4) & 0xf) !== STT_FUNC) continue;
    const start = symbols.u64(at + 8);
    const nameAt = symbols.u32(at);
    if (start === 0n || nameAt >= names.length) continue;
    const end = names.indexOf(0, nameAt);
    found.push({ name: names.subarray(nameAt, end === -1 ? names.length : end).toString("utf8"), start, size: symbols.u64(at + 16) });
  }
  found.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return found.map((f, i) => ({ name: f.name, start: f.start, end: f.size > 0n ? f.start + f.size : (found[i + 1]?.start ?? f.start + 1n) }));
}

function lookup(functions: ProgramFunction[], address: bigint): ProgramFunction | null {
  let lo = 0;
  let hi = functions.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const f = functions[mid];
    if (!f) break;
    if (address < f.start) hi = mid - 1;
    else if (address >= f.end) lo = mid + 1;
    else return f;
  }
  return null;
}

function hex(value: bigint): string {
  return `0x${value.toString(16)}`;
}
