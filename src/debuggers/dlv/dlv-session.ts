/**
 * A persistent Delve session on a Go program's core, through Delve's DAP server: a `launch` with
 * `mode: "core"` loads it, and a Go program's threads are its goroutines. Delve's DAP REPL runs
 * none of Delve's terminal commands (only `dlv help`, `dlv config`, `dlv sources`), so a command
 * typed in Delve's syntax (`goroutine 5 stack 40`, `locals`, `print c.items`, `regs`, `x`) is
 * answered here with the DAP requests that hold the same facts (`threads`, `stackTrace`, `scopes`,
 * `variables`, `evaluate`, `disassemble`) and printed the way Delve's terminal prints it. DAP
 * cannot interrupt a request: one past its timeout costs the server, which is killed and reopened.
 */
import type { DebugProtocol } from "@vscode/debugprotocol";
import { CommandRunner } from "../command-runner.js";
import { hasDwarf } from "../dumpfile/index.js";
import { DebuggerError, SessionDead } from "../errors.js";
import { leaveWithin } from "../process.js";
import type { Vocabulary } from "../probe.js";
import { emptyContext, type CommandResult, type DebuggerSession, type RunOptions, type SessionContext, type ReadAheadOptions } from "../session.js";
import { parseDelveCommand, type DelveAsk } from "./commands.js";
import { crashingThreadRegisters } from "./core-thread.js";
import { readProgram, type GoProgram } from "./program.js";
import { startDelve, type DelveServer } from "./server.js";
import { printDisassembly, printGoroutines, printMemory, printRegisters, printStack, printThreads, printVariables, type GoFrame, type Goroutine, type GoInstruction } from "./text/print.js";
import { AROUND_PC, dlvVocabularyFor } from "./vocabulary.js";

export interface DlvSessionOptions {
  dump: string;
  /** The Go program that crashed: Delve needs it to read the core. */
  executable: string | null;
  /** The dlv binary. */
  binary?: string;
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
const OPEN_TIMEOUT_MS = 120_000;
const CLOSE_GRACE_MS = 1_000;
/** Goroutines listed with their status and frames; a program with more is listed this far, and says so. */
const MAX_GOROUTINES = 1_000;
/** Frames looked through for a goroutine's user frame. */
const USER_FRAME_SEARCH = 50;
/** Delve prints at most this many elements of an array in one value. */
const ARRAY_CHUNK = 64;
/** x86-64's longest instruction: an address inside one is at most this far past its start. */
const MAX_INSTRUCTION_BYTES = 15;
/** The runtime's `g.atomicstatus` values, as Delve's `goroutines` names them. */
const G_STATUS: Record<number, string> = { 0: "idle", 1: "runnable", 2: "running", 3: "syscall", 4: "waiting", 6: "dead", 8: "copystack", 9: "preempted" };

interface Reply {
  output: string;
  error: string | null;
}

const failed = (error: string): Reply => ({ output: "", error });

export class DlvSession implements DebuggerSession {
  readonly backend = "dlv" as const;
  readonly vocabulary: Vocabulary;
  loadWarnings: string[] = [];
  private server: DelveServer | null = null;
  private readonly runner: CommandRunner;
  private ctx: SessionContext = emptyContext("dlv");
  private goroutineIds: number[] = [];
  /** The goroutine list, read once: a core does not change. */
  private goroutines: Goroutine[] | null = null;
  /** DAP frame ids by goroutine and level; valid as long as the server is. */
  private frames = new Map<string, DebugProtocol.StackFrame>();
  private loading: string[] | null = null;
  private delveVersion: string | null = null;
  /** The program's sections and function symbols, read once from its file (Delve's DAP gives neither). */
  private programFile: GoProgram | null = null;
  /** Whether the goroutine Delve selected on loading the core was running on an OS thread. */
  private selectedRunsOnThread = true;

  constructor(private readonly options: DlvSessionOptions) {
    this.vocabulary = dlvVocabularyFor(options.executable, () => this.program().sections);
    this.runner = new CommandRunner(
      {
        running: () => this.server !== null,
        reopen: () => this.reopen(),
        exchange: (command, timeoutMs) => this.reply(command, timeoutMs),
        recover: async () => {
          await this.reopen();
          return { interrupted: false, why: "DAP cannot interrupt Delve" };
        },
        context: () => this.context(),
      },
      options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
  }

  version(): string | null {
    return this.delveVersion;
  }

  context(): SessionContext {
    return structuredClone(this.ctx);
  }

  async open(): Promise<void> {
    if (!this.options.executable) throw new DebuggerError(`Delve reads a core only with its program: pass --exe for ${this.options.dump}`);
    const binary = this.options.binary ?? "dlv";
    this.loading = [];
    this.frames.clear();
    this.goroutines = null;
    try {
      const server = await startDelve(binary, (event) => this.onEvent(event));
      this.server = server;
      // A Delve that dies is noticed by the next command, which reopens the core first.
      void server.proc.exited.then(() => {
        if (this.server === server) this.server = null;
      });
      const { client } = server;
      const init = await client.request(
        "initialize",
        { clientID: "dumpdbg", clientName: "dumpdbg", adapterID: "go", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true },
        OPEN_TIMEOUT_MS,
      );
      if (!init.success) throw new DebuggerError(`${binary} refused to start a debug session: ${init.message}`);
      const launch = await client.request(
        "launch",
        { mode: "core", program: this.options.executable, coreFilePath: this.options.dump, showRegisters: true, stackTraceDepth: USER_FRAME_SEARCH },
        OPEN_TIMEOUT_MS,
      );
      if (!launch.success) {
        // Delve reads a program's DWARF to load its core at all; `-ldflags=-s -w` leaves none.
        if (/could not open debug info/.test(messageOf(launch)) && !hasDwarf(this.options.executable)) {
          throw new DebuggerError(`Delve cannot read ${this.options.dump}: ${this.options.executable} has no DWARF debug information (built with -ldflags=-w, or stripped), which Delve needs; read it with --debugger gdb`);
        }
        throw new DebuggerError(`Delve could not load ${this.options.dump}: ${messageOf(launch)}`);
      }
      await client.request("configurationDone", {}, OPEN_TIMEOUT_MS);
      const threads = await client.request("threads", undefined, OPEN_TIMEOUT_MS);
      const list = threads.success ? threads.body.threads : [];
      this.goroutineIds = list.map((t) => t.id);
      const current = list.find((t) => t.name.startsWith("*")) ?? list[0];
      this.selectedRunsOnThread = current === undefined || /\(Thread \d+\)\s*$/.test(current.name);
      this.ctx = { ...emptyContext("dlv"), targetLoaded: true, threadCount: list.length, selectedThread: null, selectedFrame: null };
      if (current) await this.select(current.id, 0, OPEN_TIMEOUT_MS);
      this.delveVersion = await this.readVersion();
      this.loadWarnings = [...new Set(this.loading.map((line) => line.trim()).filter((line) => line !== "" && !/^Type 'dlv help'/.test(line)))];
    } catch (error) {
      await this.close();
      if (error instanceof DebuggerError) throw error;
      throw new DebuggerError(`Delve failed while opening ${this.options.dump}: ${(error as Error).message}`);
    } finally {
      this.loading = null;
    }
  }

  run(command: string, options: RunOptions = {}): Promise<CommandResult> {
    return this.runner.run(command, options);
  }

  readAhead(commands: readonly string[], options: ReadAheadOptions = {}): Promise<void> {
    return this.runner.readAhead(commands, options);
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    await server.client.request("disconnect", {}, CLOSE_GRACE_MS).catch(() => undefined);
    server.socket.destroy();
    await leaveWithin(server.proc, CLOSE_GRACE_MS);
  }

  private async reopen(): Promise<void> {
    const old = this.server;
    this.server = null;
    if (old) {
      old.proc.kill();
      await old.proc.exited;
    }
    const selection = { goroutine: this.ctx.selectedThread?.id ?? null, frame: this.ctx.selectedFrame?.level ?? 0 };
    await this.open();
    if (selection.goroutine !== null) await this.select(selection.goroutine, selection.frame, OPEN_TIMEOUT_MS).catch(() => undefined);
  }

  /** Delve's version: the REPL's `dlv help` does not say it, so it is the binary's name. */
  private async readVersion(): Promise<string> {
    return `Delve (${this.options.binary ?? "dlv"}) over DAP`;
  }

  private async reply(command: string, timeoutMs: number): Promise<Reply> {
    const parsed = parseDelveCommand(command);
    if ("error" in parsed) return failed(parsed.error);
    const selected = this.ctx.selectedThread?.id ?? null;
    const goroutine = parsed.goroutine ?? selected;
    const frame = parsed.frame ?? (parsed.goroutine !== null ? 0 : (this.ctx.selectedFrame?.level ?? 0));
    if (goroutine === null) return failed("the core has no goroutine to run this in");
    if (parsed.ask.verb === "select") {
      const moved = await this.select(goroutine, frame, timeoutMs);
      return moved ? { output: `Goroutine ${goroutine} frame ${frame}: ${frameLine(moved)}\n`, error: null } : failed(`goroutine ${goroutine} has no frame ${frame}`);
    }
    // Delve's terminal prints the current thread's registers for a bare `regs`: in a core, the thread
    // that received the signal. When no goroutine ran on it (the scheduler threw on its own stack),
    // DAP has no goroutine to ask, and the registers are the ones Delve reads, the core's own.
    if (parsed.ask.verb === "regs" && parsed.goroutine === null && parsed.frame === null && frame === 0 && !this.selectedRunsOnThread) {
      const registers = crashingThreadRegisters(this.options.dump);
      if (registers.length) return { output: printRegisters(registers), error: null };
    }
    return this.answer(parsed.ask, goroutine, frame, timeoutMs);
  }

  private async answer(ask: DelveAsk, goroutine: number, level: number, timeoutMs: number): Promise<Reply> {
    switch (ask.verb) {
      case "goroutines": {
        const goroutines = await this.listGoroutines(timeoutMs);
        const more = this.goroutineIds.length > goroutines.length ? `(${this.goroutineIds.length - goroutines.length} more goroutines not listed)\n` : "";
        if (ask.stacks === null) return { output: printGoroutines(goroutines) + more, error: null };
        const stacks = new Map<number, GoFrame[]>();
        for (const g of goroutines) stacks.set(g.id, (await this.stack(g.id, ask.stacks, timeoutMs)).frames);
        return { output: printGoroutines(goroutines, stacks) + more, error: null };
      }
      case "threads":
        return { output: printThreads(await this.listGoroutines(timeoutMs)), error: null };
      case "where": {
        const frame = await this.frame(goroutine, level, timeoutMs);
        return { output: `Goroutine ${goroutine} frame ${level}: ${frame ? frameLine(frame) : "?"}\n`, error: null };
      }
      case "stack": {
        const { frames, truncated } = await this.stack(goroutine, ask.depth, timeoutMs);
        return frames.length ? { output: printStack(frames, truncated), error: null } : failed(`goroutine ${goroutine} has no stack Delve can read`);
      }
      case "locals":
      case "regs": {
        const frame = await this.frame(goroutine, level, timeoutMs);
        if (!frame) return failed(`goroutine ${goroutine} has no frame ${level}`);
        const scope = await this.scope(frame.id, ask.verb === "locals" ? "Locals" : "Registers", timeoutMs);
        if (!scope) return failed(`Delve shows no ${ask.verb === "locals" ? "locals" : "registers"} for frame ${level} of goroutine ${goroutine}`);
        return { output: ask.verb === "locals" ? printVariables(scope) : printRegisters(scope), error: null };
      }
      case "args":
        return failed("Delve's DAP server lists a function's arguments among its locals, without telling them apart: use `locals`");
      case "print": {
        const value = await this.evaluate(ask.expression, goroutine, level, timeoutMs, ask.hex);
        return "error" in value ? failed(value.error) : { output: `${value.result}\n`, error: null };
      }
      case "examinemem":
        return this.examine(ask, goroutine, level, timeoutMs);
      case "disassemble":
        return this.disassemble(ask, goroutine, level, timeoutMs);
      case "sources": {
        const listed = await this.evaluateTop(`dlv sources${ask.filter ? ` ${ask.filter}` : ""}`, timeoutMs);
        return listed === null ? failed("Delve could not list the sources") : { output: `${listed}\n`, error: null };
      }
      case "unavailable":
        return failed(`Delve's DAP server cannot answer \`${ask.name}\`: its REPL offers only help, config and sources, and DAP has no request for it`);
      case "select":
        return failed("nothing to run");
    }
  }

  private async stackTrace(goroutine: number, start: number, levels: number, timeoutMs: number): Promise<DebugProtocol.StackFrame[]> {
    const server = this.server;
    if (!server) throw new SessionDead("Delve is not running");
    const response = await server.client.request("stackTrace", { threadId: goroutine, startFrame: start, levels }, timeoutMs);
    const frames = response.success ? response.body.stackFrames : [];
    frames.forEach((frame, i) => this.frames.set(`${goroutine}/${start + i}`, frame));
    return frames;
  }

  private async frame(goroutine: number, level: number, timeoutMs: number): Promise<DebugProtocol.StackFrame | null> {
    const known = this.frames.get(`${goroutine}/${level}`);
    if (known) return known;
    return (await this.stackTrace(goroutine, level, 1, timeoutMs))[0] ?? null;
  }

  /** `depth` frames, and whether more follow (one more is asked for to know). */
  private async stack(goroutine: number, depth: number, timeoutMs: number): Promise<{ frames: GoFrame[]; truncated: boolean }> {
    const frames = await this.stackTrace(goroutine, 0, depth + 1, timeoutMs);
    return { frames: frames.slice(0, depth).map(goFrame), truncated: frames.length > depth };
  }

  private async scope(frameId: number, name: string, timeoutMs: number): Promise<{ name: string; value: string }[] | null> {
    const server = this.server;
    if (!server) throw new SessionDead("Delve is not running");
    const scopes = await server.client.request("scopes", { frameId }, timeoutMs);
    // "Locals (warning: optimized function)" is still the locals.
    const scope = scopes.success ? scopes.body.scopes.find((s) => s.name === name || s.name.startsWith(`${name} `)) : undefined;
    if (!scope) return null;
    const variables = await server.client.request("variables", { variablesReference: scope.variablesReference }, timeoutMs);
    return variables.success ? variables.body.variables.map((v) => ({ name: v.name.trim(), value: v.value })) : null;
  }

  private async evaluate(expression: string, goroutine: number, level: number, timeoutMs: number, hex = false): Promise<{ result: string; children: number } | { error: string }> {
    const server = this.server;
    if (!server) throw new SessionDead("Delve is not running");
    const frame = await this.frame(goroutine, level, timeoutMs);
    const response = await server.client.request(
      "evaluate",
      { expression, context: "repl", ...(frame ? { frameId: frame.id } : {}), ...(hex ? { format: { hex: true } } : {}) },
      timeoutMs,
    );
    return response.success ? { result: response.body.result, children: response.body.variablesReference } : { error: messageOf(response) };
  }

  /** A compound value's elements, each as Delve prints it (`16`), through DAP's `variables`. */
  private async elements(reference: number, timeoutMs: number): Promise<string[]> {
    const server = this.server;
    if (!server) throw new SessionDead("Delve is not running");
    const response = await server.client.request("variables", { variablesReference: reference }, timeoutMs);
    return response.success ? response.body.variables.map((v) => v.value) : [];
  }

  /** The address a `x` names: a number as it is, else the pointer or integer an expression gives. */
  private async address(text: string, goroutine: number, level: number, timeoutMs: number): Promise<bigint | { error: string }> {
    if (/^(?:0x[0-9a-f]+|\d+)$/i.test(text)) return BigInt(text);
    for (const expression of [`uintptr(unsafe.Pointer(${text}))`, `uintptr(${text})`]) {
      const value = await this.evaluate(expression, goroutine, level, timeoutMs);
      const number = "result" in value ? /^(\d+)(?: = 0x[0-9a-f]+)?$/.exec(value.result.trim()) : null;
      if (number?.[1]) return BigInt(number[1]);
    }
    return { error: `Delve could not read ${JSON.stringify(text)} as an address` };
  }

  /** `x`: Delve evaluates `*(*[N]uintS)(ADDR)` and prints the array; read 64 elements at a time. */
  private async examine(ask: Extract<DelveAsk, { verb: "examinemem" }>, goroutine: number, level: number, timeoutMs: number): Promise<Reply> {
    const start = await this.address(ask.address, goroutine, level, timeoutMs);
    if (typeof start !== "bigint") return failed(start.error);
    const values: bigint[] = [];
    for (let done = 0; done < ask.count; done += ARRAY_CHUNK) {
      const n = Math.min(ARRAY_CHUNK, ask.count - done);
      const at = start + BigInt(done * ask.size);
      const value = await this.evaluate(`*(*[${n}]uint${ask.size * 8})(0x${at.toString(16)})`, goroutine, level, timeoutMs);
      if ("error" in value) {
        if (values.length === 0) return failed(value.error);
        break;
      }
      // Delve cuts a long value's text short (`[7956016061200598784,…...`): the elements are then asked for one by one.
      const printed = /\[([\d,\s]*)\]\s*$/.exec(value.result)?.[1]?.split(",").filter((e) => e.trim() !== "") ?? [];
      const elements = printed.length === n ? printed : value.children > 0 ? await this.elements(value.children, timeoutMs) : [];
      const words = elements.map((e) => /^\s*(\d+)/.exec(e)?.[1]).filter((e): e is string => e !== undefined);
      if (words.length !== n) {
        if (values.length === 0) return failed(`Delve printed ${words.length} of the ${n} values at 0x${at.toString(16)}`);
        break;
      }
      values.push(...words.map((e) => BigInt(e)));
    }
    return { output: printMemory(start, ask.size, values), error: null };
  }

  private program(): GoProgram {
    this.programFile ??= readProgram(this.options.executable ?? "", this.options.dump);
    return this.programFile;
  }

  private async disassemble(ask: Extract<DelveAsk, { verb: "disassemble" }>, goroutine: number, level: number, timeoutMs: number): Promise<Reply> {
    const frame = await this.frame(goroutine, level, timeoutMs);
    const pc = frame?.instructionPointerReference ?? null;
    if (ask.start !== null && ask.end !== null) {
      if (!/^0x[0-9a-f]+$/i.test(ask.start) || !/^0x[0-9a-f]+$/i.test(ask.end)) return failed("disassemble -a takes two addresses");
      const start = BigInt(ask.start);
      const end = BigInt(ask.end);
      const count = Math.min(4096, Math.max(1, Number(end - start)));
      const found = await this.instructionsFrom(start, count, timeoutMs);
      if ("error" in found) return failed(found.error);
      const instructions = found.instructions.filter((i) => BigInt(i.address) < end).map((i) => goInstruction(i, pc));
      // Delve's terminal heads a listing with the function it is in (`TEXT main.f(SB)`); mid-function, Go's `sym+off(SB)` says where.
      const fn = this.program().functionAt(start);
      const name = fn ? (fn.offset === 0 ? fn.name : `${fn.name}+${fn.offset}`) : null;
      return instructions.length ? { output: printDisassembly(name, instructions), error: null } : failed(`Delve could not disassemble at ${ask.start}`);
    }
    if (!pc) return failed(`frame ${level} of goroutine ${goroutine} has no pc`);
    const response = await this.disassembleRequest(pc, -AROUND_PC / 2, AROUND_PC, timeoutMs);
    if (!response.success || !response.body) return failed(messageOf(response));
    const instructions = response.body.instructions.filter((i) => !/^invalid instruction|^\?/.test(i.instruction)).map((i) => goInstruction(i, pc));
    return instructions.length ? { output: printDisassembly(frame?.name ?? null, instructions), error: null } : failed(`Delve could not disassemble at ${pc}`);
  }

  /**
   * `count` instructions from the one holding `address`. Delve's DAP `disassemble` answers only for
   * an address where an instruction starts (a return address less one, where a call's line is
   * looked up, is inside the call): the start is found by stepping back, at most one instruction's
   * length, and never before the function's entry.
   */
  private async instructionsFrom(address: bigint, count: number, timeoutMs: number): Promise<{ instructions: DebugProtocol.DisassembledInstruction[] } | { error: string }> {
    const entry = this.program().functionAt(address);
    const lowest = entry ? address - BigInt(entry.offset) : address - BigInt(MAX_INSTRUCTION_BYTES - 1);
    let error = `Delve could not disassemble at 0x${address.toString(16)}`;
    for (let at = address; at >= lowest && at > 0n && address - at < BigInt(MAX_INSTRUCTION_BYTES); at--) {
      const response = await this.disassembleRequest(`0x${at.toString(16)}`, 0, count, timeoutMs);
      const instructions = response.success && response.body ? response.body.instructions.filter((i) => !/^invalid instruction|^\?/.test(i.instruction)) : [];
      // The instruction found must reach the address asked for: one that ends before it is another's.
      const first = instructions[0];
      if (first && BigInt(first.address) + BigInt((first.instructionBytes ?? "").length / 2 || 1) > address) return { instructions };
      if (!response.success) error = messageOf(response);
    }
    return { error };
  }

  private async disassembleRequest(from: string, offset: number, count: number, timeoutMs: number): Promise<DebugProtocol.DisassembleResponse> {
    const server = this.server;
    if (!server) throw new SessionDead("Delve is not running");
    return server.client.request("disassemble", { memoryReference: from, instructionOffset: offset, instructionCount: count, resolveSymbols: true }, timeoutMs);
  }

  /** Every goroutine with its status, user frame and thread. */
  private async listGoroutines(timeoutMs: number): Promise<Goroutine[]> {
    if (this.goroutines) return this.goroutines;
    const server = this.server;
    if (!server) throw new SessionDead("Delve is not running");
    const threads = await server.client.request("threads", undefined, timeoutMs);
    const list = (threads.success ? threads.body.threads : []).slice(0, MAX_GOROUTINES);
    const statuses = await this.statuses(list.length, timeoutMs);
    const goroutines: Goroutine[] = [];
    for (const thread of list) {
      const frames = (await this.stackTrace(thread.id, 0, USER_FRAME_SEARCH, timeoutMs)).map(goFrame);
      const user = frames.find((f) => f.function !== null && !f.function.startsWith("runtime.")) ?? frames[0] ?? null;
      goroutines.push({
        id: thread.id,
        current: thread.name.startsWith("*"),
        thread: Number(/\(Thread (\d+)\)\s*$/.exec(thread.name)?.[1] ?? Number.NaN) || null,
        status: statuses.get(thread.id) ?? null,
        user,
        top: frames[0] ?? null,
      });
    }
    this.goroutines = goroutines;
    return goroutines;
  }

  /**
   * Each goroutine's status from the runtime's own list (`runtime.allgs`): Delve names a waiting
   * one's reason (`waitReasonChanReceive (14)`). A program whose runtime cannot be read gets none.
   */
  private async statuses(count: number, timeoutMs: number): Promise<Map<number, string>> {
    const statuses = new Map<number, string>();
    const all = await this.evaluateTop("len(runtime.allgs)", timeoutMs);
    const n = Math.min(Number(/^\d+/.exec(all ?? "")?.[0] ?? 0), count * 2, MAX_GOROUTINES * 2);
    for (let i = 0; i < n; i++) {
      const [id, status, reason] = await Promise.all([
        this.evaluateTop(`runtime.allgs[${i}].goid`, timeoutMs),
        this.evaluateTop(`runtime.allgs[${i}].atomicstatus`, timeoutMs),
        this.evaluateTop(`runtime.allgs[${i}].waitreason`, timeoutMs),
      ]);
      const goid = Number(/^\d+/.exec(id ?? "")?.[0] ?? Number.NaN);
      const code = Number(/^\d+/.exec(status ?? "")?.[0] ?? Number.NaN);
      if (!Number.isFinite(goid) || !Number.isFinite(code)) continue;
      const name = G_STATUS[code] ?? `status ${code}`;
      const why = /^(waitReason\w+)/.exec(reason ?? "")?.[1];
      statuses.set(goid, name === "waiting" && why ? `waiting: ${why}` : name);
    }
    return statuses;
  }

  private async evaluateTop(expression: string, timeoutMs: number): Promise<string | null> {
    const server = this.server;
    if (!server) throw new SessionDead("Delve is not running");
    const response = await server.client.request("evaluate", { expression, context: "repl" }, timeoutMs);
    return response.success ? response.body.result : null;
  }

  /** Selects a goroutine's frame, when it has one, and says so in the context. */
  private async select(goroutine: number, level: number, timeoutMs: number): Promise<DebugProtocol.StackFrame | null> {
    const frame = await this.frame(goroutine, level, timeoutMs);
    if (!frame) return null;
    const thread = this.goroutines?.find((g) => g.id === goroutine)?.thread ?? null;
    this.ctx.selectedThread = { id: goroutine, lwp: thread, name: null };
    this.ctx.selectedFrame = {
      level,
      function: frame.name || null,
      file: frame.source?.path ?? null,
      line: frame.line || null,
      address: frame.instructionPointerReference ?? null,
    };
    return frame;
  }

  private onEvent(event: DebugProtocol.Event): void {
    if (event.event !== "output" || !this.loading) return;
    const { category, output } = (event as DebugProtocol.OutputEvent).body;
    if (category === undefined || category === "console" || category === "stderr" || category === "important") this.loading.push(output);
  }
}

function goFrame(frame: DebugProtocol.StackFrame, index: number): GoFrame {
  return {
    level: index,
    pc: frame.instructionPointerReference ?? null,
    function: frame.name || null,
    file: frame.source?.path ?? null,
    line: frame.line || null,
  };
}

function goInstruction(i: DebugProtocol.DisassembledInstruction, pc: string | null): GoInstruction {
  return {
    address: i.address,
    bytes: i.instructionBytes ?? null,
    text: i.instruction,
    file: i.location?.path ?? null,
    line: i.line ?? null,
    current: pc !== null && BigInt(i.address) === BigInt(pc),
  };
}

function frameLine(frame: DebugProtocol.StackFrame): string {
  return `${frame.name} at ${frame.source?.path ?? "?"}:${frame.line} (${frame.instructionPointerReference ?? "0x?"})`;
}

/** Delve's reason for a failed request: `Unable to evaluate expression: …` in the body's error. */
function messageOf(response: DebugProtocol.Response): string {
  const body = response.body as { error?: { format?: string } } | undefined;
  return body?.error?.format ?? response.message ?? "Delve reported an error";
}
