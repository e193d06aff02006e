/**
 * Frames named from Breakpad `.sym` files by dumpdbg itself, whatever the debugger made of the file
 * (gdb cannot read one; LLDB refuses some, a macOS module's among them): a frame the debugger left
 * without a function gets the `.sym`'s function, file and line, and the functions inlined at its
 * pc. The debugger's frame numbers are kept, so every probe still lands in the frame it names.
 */
import type { Frame } from "../model.js";
import { toBigInt } from "../model.js";
import type { Probe, Reading, Vocabulary } from "../probe.js";
import type { BreakpadSymbols } from "./breakpad-sym.js";

/** A module of the dump with the symbols dumpdbg read for it. */
export interface NamedModule {
  /** Its file name, as a frame's `from` gives it. */
  name: string;
  /** Its load address and end in the dump; null when the dump does not say. */
  start: bigint | null;
  end: bigint | null;
  symbols: BreakpadSymbols;
}

/** The debugger's vocabulary, with unnamed frames of every backtrace it reads named from `modules`. */
export function withFrameNames(vocabulary: Vocabulary, modules: NamedModule[]): Vocabulary {
  if (modules.length === 0) return vocabulary;
  return {
    debugger: vocabulary.debugger,
    syntax: vocabulary.syntax,
    render: (probe) => vocabulary.render(probe),
    recognise: (command) => vocabulary.recognise(command),
    movesSelection: (command) => vocabulary.movesSelection(command),
    read<P extends Probe>(probe: P, output: string): Reading<P> {
      const reading = vocabulary.read(probe, output);
      if (probe.kind === "backtrace") nameFrames((reading as Reading<Extract<Probe, { kind: "backtrace" }>>).frames, modules);
      if (probe.kind === "thread-backtraces") for (const thread of reading as Reading<Extract<Probe, { kind: "thread-backtraces" }>>) nameFrames(thread.frames, modules);
      return reading;
    },
  };
}

/** Names the frames the debugger could not, in place. */
export function nameFrames(frames: Frame[], modules: NamedModule[]): void {
  for (const [index, frame] of frames.entries()) {
    if (frame.function !== null && frame.function !== "??") continue;
    const pc = toBigInt(frame.address);
    if (pc === null) continue;
    const module = moduleAt(pc, frame.from, modules);
    if (!module || module.start === null) continue;
    // A caller's pc is the return address, just past its call: the call's own line is one byte back.
    const rva = pc - module.start - (index > 0 && frame.found !== "scan" ? 1n : 0n);
    if (rva < 0n) continue;
    const named = module.symbols.lookup(rva);
    const innermost = named?.[0];
    if (!named || !innermost) continue;
    frame.function = innermost.function;
    frame.file = innermost.file;
    frame.line = innermost.line;
    frame.from ??= module.name;
    if (named.length > 1) frame.inlinedInto = named.slice(1).map((outer) => ({ function: outer.function, file: outer.file, line: outer.line }));
  }
}

function moduleAt(pc: bigint, from: string | null, modules: NamedModule[]): NamedModule | null {
  const within = modules.find((m) => m.start !== null && m.end !== null && m.start <= pc && pc < m.end);
  if (within) return within;
  const name = from?.split(/[\\/]/).at(-1)?.toLowerCase();
  return name ? (modules.find((m) => m.name.toLowerCase() === name) ?? null) : null;
}

/**
 * The `.sym` files found for the dump's modules, read: a file that cannot be read is a note, and
 * its module keeps what the debugger gives.
 */
export async function readNamedModules(rows: { path: string; module: string; file: string | null }[], modules: { path: string; start: string | null; end: string | null }[]): Promise<{ named: NamedModule[]; notes: string[] }> {
  const { loadBreakpadSymbols } = await import("./breakpad-sym.js");
  const named: NamedModule[] = [];
  const notes: string[] = [];
  for (const row of rows) {
    if (!row.file?.endsWith(".sym")) continue;
    const module = modules.find((m) => m.path === row.path);
    try {
      named.push({ name: row.module, start: toBigInt(module?.start ?? null), end: toBigInt(module?.end ?? null), symbols: await loadBreakpadSymbols(row.file) });
    } catch (error) {
      notes.push(`${row.file} could not be read: ${(error as Error).message}`);
    }
  }
  return { named, notes };
}
