/**
 * The crashing thread's frames from its stack memory, where the debugger's unwind is lost or went
 * astray: words above the stack pointer that point into the program's own code right after a call,
 * chained so that each caller called the function below it, as Breakpad's stack walker scans.
 */
import type { ImportLookup } from "../../debuggers/dump.js";
import { hex } from "../../debuggers/dumpfile/file.js";
import type { Inspector } from "../../debuggers/inspector.js";
import { toBigInt, type Platform, type Register, type SymbolAt } from "../../debuggers/model.js";
import { culpritIndex, isRuntimeFrame, normalizeFunctionName, type ModuleLocator, type PlacedFrame } from "../culprit.js";
import { foreignAt, type ForeignLibrary } from "../libraries.js";
import {
  bytesOf,
  callTarget,
  endsWithCall,
  MAX_SCAN_CANDIDATES,
  MAX_SCAN_STARTS,
  MAX_SCANNED_FRAMES,
  returnCandidates,
  SCAN_PIECE_WORDS,
  SCAN_WORDS,
  thunkSlot,
  type CallTarget,
  type ReturnCandidate,
} from "../stack-scan.js";

/** Reads a line of a source file on this machine, where the debugger cannot list it. */
export type LineReader = (file: string, line: number) => string | null;

/** What the scan knows of the process's code: the program's own, each address's module, its imports, its source. */
export interface CodeMap {
  isOwnCode: (address: bigint) => boolean;
  /** The program's own code in modules the dump maps and this machine lacks: no instruction of it can be read. */
  isAbsentOwnCode: (address: bigint) => boolean;
  /** Libraries of the process missing here or here in another build. */
  foreign: ForeignLibrary[];
  moduleAt: ModuleLocator;
  imports: ImportLookup | null;
  readLine: LineReader | null;
  /** The processor: how a call instruction is told before a return address. */
  arch?: Platform["arch"] | undefined;
  /** The thread's registers: on AArch64 the link register x30 holds a leaf function's return address, on no stack. */
  registers?: Register[];
}

/** Frames past the culprit whose return addresses are checked on Windows. */
const UNWIND_CHECKS = 4;

/**
 * The thread's frames from its stack memory: its innermost frame as the debugger has it, then each
 * word above the stack pointer that points into the program's own code right after a call, named
 * by the debugger's symbols. Null when the scan finds none.
 */
export async function scanStack(q: Inspector, frames: PlacedFrame[], sp: bigint | null, program: CodeMap): Promise<PlacedFrame[] | null> {
  const { isOwnCode, isAbsentOwnCode, moduleAt, imports, readLine } = program;
  const top = frames[0];
  if (!top || sp === null) return null;
  // In pieces: the read ends where the stack does.
  const words: bigint[] = [];
  while (words.length < SCAN_WORDS) {
    const piece = await q.readMemory(hex(sp + BigInt(words.length * 8)), SCAN_PIECE_WORDS);
    words.push(...piece);
    if (piece.length < SCAN_PIECE_WORDS) break;
  }
  const calls: ScannedCall[] = [];
  // A leaf function (frame 0, which calls nothing) keeps its return address in the link register only:
  // it comes first, as if just below the stack pointer.
  const link = program.arch === "arm64" ? toBigInt(program.registers?.find((r) => r.name === "x30" || r.name === "lr")?.value ?? null) : null;
  const linked = link !== null && (isOwnCode(link) || isAbsentOwnCode(link)) && !words.includes(link) ? [{ address: link, slot: sp - 8n }] : [];
  const candidates = [...linked, ...returnCandidates(sp, words, (address) => isOwnCode(address) || isAbsentOwnCode(address))].slice(0, MAX_SCAN_CANDIDATES);
  // The 16 bytes before each return address hold the call that returns there, if it is one. Asked
  // together: the session may hand the debugger the next read while it answers one.
  const codes = await Promise.all(candidates.map((candidate) => q.readMemory(hex(candidate.address - 16n), 2)));
  for (const [i, candidate] of candidates.entries()) {
    const code = bytesOf(codes[i] ?? []);
    if (code.length === 16) {
      if (endsWithCall(code, program.arch)) calls.push({ ...candidate, call: await classifyCall(q, callTarget(code, candidate.address, program.arch), isOwnCode) });
      continue;
    }
    // The module's code is neither in the dump nor here (a minidump read with its symbol files only):
    // as Breakpad's stack scan does, a word inside a function the symbols know is taken as a return address;
    // and so is a word into the code of a module of the program's the dump maps and this machine lacks
    // (`_ctypes….so`): the frame is named by its module, as the debugger's unwind shows it.
    if (isAbsentOwnCode(candidate.address) || (await q.symbolAt(hex(candidate.address - 1n)))?.symbol) calls.push({ ...candidate, call: { kind: "unverified" } });
  }
  const symbols = new Map<bigint, SymbolAt | null>();
  const symbolOf = async (address: bigint) => {
    if (!symbols.has(address)) symbols.set(address, await q.symbolAt(hex(address - 1n)));
    return symbols.get(address) ?? null;
  };
  const chainFrom = async (start: ScannedCall) => {
    const chain = [start];
    for (const next of calls) {
      if (chain.length === MAX_SCANNED_FRAMES) break;
      const callee = chain[chain.length - 1];
      if (!callee || next.slot <= callee.slot) continue;
      const symbol = await symbolOf(callee.address);
      const calleeStart = symbol ? callee.address - 1n - BigInt(symbol.offset) : null;
      const called = next.call.kind === "unverified" ? await lineCalls(q, next.address, symbol?.symbol ?? null, readLine) : callsInto(next.call, calleeStart);
      if (called) chain.push(next);
    }
    return chain;
  };
  // The innermost caller called out of the program, into the module the thread stopped in. Stale
  // return addresses of calls that have returned lie around on the stack too: of the chains that
  // start with a call out, the longest whose every caller called the function below it wins.
  // Frame 0 in a library whose code here is not the one that ran (a core from another machine), the
  // debugger may still have found its caller (a leaf function's return address at the stack
  // pointer): a return address it shows as frame 1 is the innermost caller, even through a tail
  // call from the program's own code, and wins over a longer chain.
  const library = foreignAt(program.foreign, toBigInt(top.address));
  const shown = library ? toBigInt(frames[1]?.address ?? null) : null;
  const unwound = shown === null ? undefined : calls.find((call) => call.address === shown);
  let best: ScannedCall[] = unwound ? await chainFrom(unwound) : [];
  for (const start of unwound ? [] : calls.filter((c) => c.call.kind !== "direct" || !isOwnCode(c.call.target)).slice(0, MAX_SCAN_STARTS)) {
    const chain = await chainFrom(start);
    if (chain.length > best.length) best = chain;
  }
  if (best.length === 0) return null;
  const found: PlacedFrame[] = [];
  // The innermost caller called out through an import: its slot names the function it called
  // (`__imp__assert`), another module's code the dump does not unwind.
  const first = best[0]?.call;
  const imported = first?.kind === "import" && first.slot !== null ? (imports?.(first.slot) ?? null) : first?.kind === "import" && first.target !== undefined ? await pltImport(q, first.target) : null;
  if (imported) {
    found.push({ level: 1, address: null, function: imported.name, args: "", file: null, line: null, from: imported.dll, found: "scan", module: imported.dll });
  }
  // Where the debugger's own unwind reached a scanned frame, its number there places probes in it.
  let unwoundFrom = 1;
  for (const call of best) {
    const unwound = frames.find((frame) => frame.level >= unwoundFrom && frame.found === undefined && toBigInt(frame.address) === call.address)?.level ?? null;
    if (unwound !== null) unwoundFrom = unwound + 1;
    // The call itself, one byte back, is on the caller's line.
    const symbol = await symbolOf(call.address);
    const line = symbol && !symbol.line ? await q.sourceLine(hex(call.address - 1n)) : null;
    // In code inlined into the caller, the frame is the innermost inlined function's; but not a
    // runtime's inlined from its header (glibc's fortified strcpy): the debugger's unwind shows the
    // program's function it was inlined into as a frame of its own, and the culprit is that one.
    const module = moduleAt(call.address);
    const chain = symbol?.inlined ?? [];
    const own = Math.max(0, chain.findIndex((f) => !isRuntimeFrame({ level: 0, address: hex(call.address), function: f.function, args: "", file: f.file, line: f.line, from: null, module })));
    const [inlined, ...outer] = chain.slice(own);
    const name = inlined?.function ?? symbol?.symbol ?? null;
    const place = { file: (own > 0 ? inlined?.file : symbol?.file) ?? line?.file ?? null, line: (own > 0 ? inlined?.line : symbol?.line) ?? line?.line ?? null };
    // The program's function whose call's line is a system header's, inlined with no chain to say so
    // (gdb names the function, and the line of the fortified strcpy in it): its own line is unknown.
    const headerOnly = place.file !== null && isRuntimeFrame({ level: 0, address: hex(call.address), function: name, args: "", ...place, from: null, module }) && !isRuntimeFrame({ level: 0, address: hex(call.address), function: name, args: "", file: null, line: null, from: null, module });
    found.push({
      level: found.length + 1,
      address: hex(call.address),
      function: name,
      args: "",
      file: headerOnly ? null : place.file,
      line: headerOnly ? null : place.line,
      from: null,
      found: "scan",
      unwound,
      module,
      ...(outer.length > 0 ? { inlinedInto: outer } : {}),
    });
  }
  const scanned = [{ ...top, level: 0 }, ...found];
  // A chain whose first call is not shown to go into a library this machine cannot unwind (frame 0's,
  // or one that called it, as libstdc++ calls libc's abort) may start at a stale return address: its
  // function is no culprit to put in place of what the unwind showed (a frame named by its module
  // only is kept: the module is what the unwind shows there too).
  const own = culpritIndex(scanned);
  const start = best[0];
  if (library && start && start !== unwound && own !== null && scanned[own]?.function !== null && !(await callsForeign(q, start, program.foreign))) return null;
  return scanned;
}

/** Whether a scanned call is shown to go into a foreign library: through a PLT stub or a slot that holds an address in one. */
async function callsForeign(q: Inspector, call: ScannedCall, foreign: ForeignLibrary[]): Promise<boolean> {
  if (call.call.kind !== "import" || call.call.target === undefined) return false;
  return foreignAt(foreign, await importedAddress(q, call.call.target)) !== null;
}

/** Where a call out of the program went: the address itself, or where the PLT stub it called jumps (the slot's value). */
async function importedAddress(q: Inspector, target: bigint): Promise<bigint | null> {
  const slot = thunkSlot(bytesOf(await q.readMemory(hex(target), 2)), target);
  if (slot === null) return target;
  return (await q.readMemory(hex(slot), 1))[0] ?? null;
}

/**
 * Checks the frames just past the culprit: each return address must follow a call. At the first
 * that does not, the debugger's unwind has gone wrong; the stack scan's frames replace it from the
 * culprit on when they include the culprit's own return address, else the frames stop there.
 */
export async function repairUnwind(q: Inspector, frames: PlacedFrame[], sp: bigint | null, program: CodeMap): Promise<{ frames: PlacedFrame[]; note: string } | null> {
  const culprit = culpritIndex(frames);
  if (culprit === null) {
    // Not one frame of the program's own: the unwind jumped from a system function straight to the
    // runtime's startup (LLDB through Wine's RaiseException). The stack may still hold the program's calls.
    const scanned = await scanStack(q, frames, sp, program);
    if (!scanned || culpritIndex(scanned) === null) return null;
    return { frames: scanned, note: "the debugger's unwind found none of the program's frames past frame 0: frames 1 and up were found by scanning the stack for return addresses into the program's code" };
  }
  let broken: number | null = null;
  for (let i = culprit + 1; i < Math.min(frames.length, culprit + UNWIND_CHECKS + 1); i++) {
    const address = toBigInt(frames[i]?.address ?? null);
    if (address === null || frames[i - 1]?.function === "<signal handler called>") continue;
    const code = bytesOf(await q.readMemory(hex(address - 16n), 2));
    if (code.length === 16 && !endsWithCall(code)) {
      broken = i;
      break;
    }
  }
  if (broken === null) return null;
  const culpritAddress = frames[culprit]?.address ?? null;
  const scanned = await scanStack(q, frames, sp, program);
  const from = scanned?.findIndex((frame) => frame.address !== null && frame.address === culpritAddress) ?? -1;
  if (scanned && from > 0) {
    const rest = scanned.slice(from + 1).map((frame, i) => ({ ...frame, level: culprit + 1 + i }));
    return { frames: [...frames.slice(0, culprit + 1), ...rest], note: `the debugger's unwind went astray past frame ${culprit} (frame ${broken}'s return address follows no call): the frames after it were found by scanning the stack` };
  }
  return { frames: frames.slice(0, broken), note: `the debugger's unwind went astray at frame ${broken} (its return address follows no call): the stack is shown up to it` };
}

export function scanNote(frames: PlacedFrame[], foreign: ForeignLibrary | null): string {
  const module = foreign?.path ?? frames[0]?.module ?? null;
  return `the debugger could not unwind past frame 0 (${module?.split(/[\\/]/).at(-1) ?? "a system module"}, whose unwind information this machine lacks): frames 1–${frames.length - 1} were found by scanning the stack for return addresses into the program's code; ${foreign ? "--solib-search-path DIR with that machine's libraries" : "--modules-path DIR with the dump's system modules"} gives the exact stack`;
}

/** The function an ELF program called through its PLT (`strlen@plt`): the library is not known from the stub. */
async function pltImport(q: Inspector, stub: bigint): Promise<{ dll: string | null; name: string } | null> {
  const name = /^(.+)@plt$/.exec((await q.symbolAt(hex(stub)))?.symbol ?? "")?.[1];
  return name ? { dll: null, name } : null;
}

interface ScannedCall extends ReturnCandidate {
  call: CallKind;
}

/**
 * What a call instruction calls: a known function, a function in another module (an import), or a
 * pointer it held; `unverified` when the code is not there to read and only the symbols place it.
 */
type CallKind = { kind: "direct"; target: bigint } | { kind: "import"; slot: bigint | null; target?: bigint } | { kind: "indirect" } | { kind: "unverified" };

/**
 * Without the code, whether the caller's source line calls the function below it (`validate_config(`):
 * a stale return address left by an earlier call fails it. A line that cannot be read does not decide.
 */
async function lineCalls(q: Inspector, returnAddress: bigint, callee: string | null, readLine: LineReader | null): Promise<boolean> {
  const caller = callee === null ? null : await q.sourceLine(hex(returnAddress - 1n));
  if (!caller || !callee) return true;
  const text = (await q.source(caller.file, caller.line)).find((line) => line.line === caller.line)?.text ?? readLine?.(caller.file, caller.line) ?? undefined;
  if (text === undefined) return true;
  const name = normalizeFunctionName(callee).split("::").at(-1) ?? callee;
  return new RegExp(`\\b${name.replace(/[^\w]/g, "\\$&")}\\s*\\(`).test(text);
}

/** Whether a call could have called the function that starts at `start` (in the program's own code). */
function callsInto(call: CallKind, start: bigint | null): boolean {
  if (call.kind === "indirect" || call.kind === "unverified") return true;
  if (call.kind === "import") return false;
  return start === null || call.target === start;
}

/** A call's target: its direct address, or the pointer in its slot, through an import thunk's jump. */
async function classifyCall(q: Inspector, target: CallTarget, isOwnCode: (address: bigint) => boolean): Promise<CallKind> {
  if (target === null) return { kind: "indirect" };
  const slot = "slot" in target ? target.slot : null;
  let address: bigint | null = "direct" in target ? target.direct : ((await q.readMemory(hex(target.slot), 1))[0] ?? null);
  if (address === null || !isOwnCode(address)) return { kind: "import", slot, ...(address !== null ? { target: address } : {}) };
  const thunk = thunkSlot(bytesOf(await q.readMemory(hex(address), 1)), address);
  if (thunk !== null) {
    // An import thunk (`jmp *__imp_f`): the call goes to another module.
    address = (await q.readMemory(hex(thunk), 1))[0] ?? null;
    if (address === null || !isOwnCode(address)) return { kind: "import", slot: thunk };
  }
  return { kind: "direct", target: address };
}
