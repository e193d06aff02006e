/**
 * A persistent cdb session on one dump: `cdb -z DUMP -lines`, commands on stdin. cdb answers with
 * no framing of its own, only a `0:000> ` prompt, so every command is followed by `.echo` of a
 * marker that carries this session's nonce and a counter: a command's output is what came before
 * its own marker, and the late output of an interrupted command is never taken for the next one's.
 * One command runs at a time. A command past its timeout gets a break (what Ctrl+Break is at cdb's
 * console; SIGINT here); if cdb does not come back it is killed and the same dump reopened.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { CommandRunner } from "../command-runner.js";
import { CommandTimeout, DebuggerError, SessionDead } from "../errors.js";
import { leaveWithin, spawnDebugger, type DebuggerProcess } from "../process.js";
import type { Vocabulary } from "../probe.js";
import { emptyContext, type CommandResult, type DebuggerSession, type RunOptions, type SessionContext, type ReadAheadOptions } from "../session.js";
import { parsePlaced, type CdbPlace } from "./place.js";
import { clrModule, parseModuleList } from "./text/modules.js";
import { parseSelectedFrame, parseThreads } from "./text/stack.js";
import { cdbManagedVocabulary, cdbVocabulary } from "./vocabulary.js";

export interface CdbSessionOptions {
  dump: string;
  /** The program that crashed; its folder is searched for its image and symbols. */
  executable: string | null;
  /** The cdb binary; `cdb` on PATH when omitted. */
  binary?: string;
  /** Default per-command timeout in milliseconds. */
  timeoutMs?: number;
  /** cdb's symbol path (`--symbol-path`); else `_NT_SYMBOL_PATH`; else the dump's and the program's folders, offline. */
  symbolPath?: string;
  /** Folders holding the dump's modules: cdb's image path. */
  modulesPath?: string[];
}

export const DEFAULT_TIMEOUT_MS = 30_000;
/** How long loading a dump may take (symbols of a big program). */
const OPEN_TIMEOUT_MS = 120_000;
/** How long cdb gets to come back after a break before it is killed. */
const INTERRUPT_GRACE_MS = 2_000;
/** How long cdb gets to leave after `q` before it is killed. */
const CLOSE_GRACE_MS = 1_000;
/** What is kept of one command's output: a dump can make a debugger print without end. */
const MAX_OUTPUT = 64 * 1024 * 1024;

/** The prompt cdb prints before reading each line: `0:000> `, `0:003:x86> ` under WOW64. */
const PROMPT = /^(?:\d+:\d+(?::\w+)?> )+/gm;
/** The thread a prompt names: `0:003> ` is process 0, thread 3. */
const PROMPT_THREAD = /(\d+):(\d+)(?::\w+)?> $/;

/**
 * How cdb says a command failed. It has no error channel: the text is the output. Only errors of
 * the command itself count (syntax, unknown symbols, a missing extension command), not what a
 * command reports about the dump (`????????` memory).
 */
const COMMAND_ERROR =
  /^(?:Couldn't resolve error at .*|\s*\^ (?:Syntax|Extra character|Bad register|Illegal value|Illegal thread|Operator expected|Range|Numeric expression missing|Unknown) error in .*|No export \S+ found|The call to LoadLibrary\(.*\) failed.*|Unable to find module '.*'|Invalid parameter .*|Memory access error at .*)$/m;

/** Load-time lines worth a user's attention: missing images and symbols, mismatches. */
const LOAD_WARNING = /^\*\*\* (?:WARNING|ERROR)|^WARNING: |^Unable to load image|^Unable to verify|^\*\*\* Unable to/;

/** A command past its timeout that a break ended: cdb is still there, and its marker came. */
class InterruptedCommand extends CommandTimeout {}

interface Running {
  proc: DebuggerProcess;
  /** Everything cdb wrote that no command has taken yet. */
  buffer: string;
  /** Characters dropped from the front of the buffer so far. */
  dropped: number;
  /** Called whenever output arrives, so a waiting command can look for its marker. */
  wake: (() => void) | null;
  exited: string | null;
}

export class CdbSession implements DebuggerSession {
  readonly backend = "cdb" as const;
  loadWarnings: string[] = [];
  private running: Running | null = null;
  /** Commands wait here so that exactly one is in flight. */
  private readonly runner: CommandRunner;
  private ctx: SessionContext = emptyContext("cdb");
  private counter = 0;
  /** A marker a dump cannot print by accident or on purpose: its nonce is this session's secret. */
  private readonly nonce = `dumpdbg-${randomBytes(8).toString("hex")}`;
  private cdbVersion: string | null = null;
  /** Thread numbers to OS thread ids and names; a dump's threads never change. */
  private threads = new Map<number, { lwp: number | null; name: string | null }>();
  /** The thread whose exception context `.ecxr` set on opening, to set again on coming back to it. */
  private exceptionThread: number | null = null;
  /** Whether SOS answered, for .NET dumps; null when the process ran no CLR. */
  private sosLoaded: boolean | null = null;
  /** The number of the thread the last prompt named: cdb's selected thread. */
  private promptThread: number | null = null;
  private stderrTail = "";

  constructor(private readonly options: CdbSessionOptions) {
    this.runner = new CommandRunner(
      {
        running: () => this.running !== null,
        reopen: () => this.reopen(),
        exchange: (command, timeoutMs) => this.reply(command, timeoutMs),
        // The command was broken into already (see exchange); if cdb did not answer the break, it is killed.
        recover: async (timeout) => {
          if (timeout instanceof InterruptedCommand) return { interrupted: true };
          await this.reopen();
          return { interrupted: false, why: "cdb did not answer a break" };
        },
        context: () => this.context(),
      },
      options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
  }

  version(): string | null {
    return this.cdbVersion;
  }

  context(): SessionContext {
    return structuredClone(this.ctx);
  }

  /** Whether SOS is loaded for a .NET dump (null: the process ran no CLR). */
  get managed(): boolean | null {
    return this.sosLoaded;
  }

  get vocabulary(): Vocabulary {
    return this.sosLoaded ? cdbManagedVocabulary : cdbVocabulary;
  }

  /** cdb's arguments: the dump, source lines, no `.shell`, the symbol and image paths. */
  arguments(env: NodeJS.ProcessEnv = process.env): string[] {
    const { dump, executable, symbolPath, modulesPath = [] } = this.options;
    const local = [...new Set([dirname(dump), ...(executable ? [dirname(executable)] : [])])];
    // No symbol server unless the user names one: dumps are often analysed offline.
    const symbols = symbolPath ?? (env._NT_SYMBOL_PATH ? null : local.join(";"));
    const images = [...new Set([...modulesPath, ...local])].join(";");
    return ["-z", dump, "-lines", "-noshell", ...(symbols ? ["-y", symbols] : []), "-i", images];
  }

  async open(): Promise<void> {
    const binary = this.options.binary ?? "cdb";
    this.running = await this.start(binary);
    try {
      const banner = await this.exchange(null, OPEN_TIMEOUT_MS);
      const failed = /^(?:Could not open dump file|Failed to open|ERROR: Unable to open|.*\bis not a valid dump file\b).*$/im.exec(banner);
      if (failed) throw new DebuggerError(`cdb could not load ${this.options.dump}: ${failed[0].trim()}`);
      this.cdbVersion = /^Microsoft \(R\) Windows Debugger Version .*$/m.exec(banner)?.[0].trim() ?? null;
      const warnings = banner.split(/\r?\n/).map((line) => line.trim()).filter((line) => LOAD_WARNING.test(line));
      // A crash dump's thread stopped in the crash reporter: `.ecxr` shows the registers and stack of the exception.
      if (/exception of interest stored in it/i.test(banner)) {
        await this.exchange(".ecxr", OPEN_TIMEOUT_MS);
        this.exceptionThread = this.promptThread;
      }
      const threads = parseThreads(await this.exchange("~", OPEN_TIMEOUT_MS));
      this.threads = new Map(threads.map((thread) => [thread.id, { lwp: thread.lwp, name: thread.name }]));
      this.ctx = { ...emptyContext("cdb"), targetLoaded: true, threadCount: threads.length };
      const sos = await this.loadSos();
      if (sos) warnings.push(sos);
      await this.refreshSelection(OPEN_TIMEOUT_MS);
      this.loadWarnings = [...new Set(warnings)];
    } catch (error) {
      await this.close();
      if (error instanceof CommandTimeout) throw new DebuggerError(`cdb did not finish loading ${this.options.dump} within ${OPEN_TIMEOUT_MS / 1000}s`);
      if (error instanceof DebuggerError) throw error;
      throw new DebuggerError(`cdb failed while opening ${this.options.dump}: ${(error as Error).message}`);
    }
  }

  run(command: string, options: RunOptions = {}): Promise<CommandResult> {
    return this.runner.run(command, options);
  }

  readAhead(commands: readonly string[], options: ReadAheadOptions = {}): Promise<void> {
    return this.runner.readAhead(commands, options);
  }

  async close(): Promise<void> {
    const running = this.running;
    this.running = null;
    if (!running) return;
    running.proc.writeLine("q");
    await leaveWithin(running.proc, CLOSE_GRACE_MS);
  }

  /**
   * SOS for a .NET dump: beside the CLR the process ran (.NET Framework, older .NET Core), else
   * wherever cdb's extension path finds it (`dotnet-sos install`). Says why it is missing, if it is.
   */
  private async loadSos(): Promise<string | null> {
    const clr = clrModule(parseModuleList(await this.exchange("lm", OPEN_TIMEOUT_MS)));
    if (clr === null) return null;
    // `dotnet-sos install` puts it in the user's profile, which cdb does not search.
    const installed = join(homedir(), ".dotnet", "sos", "sos.dll");
    for (const load of [`.loadby sos ${clr}`, ".load sos", ...(existsSync(installed) ? [`.load ${installed}`] : [])]) {
      const output = await this.exchange(load, OPEN_TIMEOUT_MS);
      if (!COMMAND_ERROR.test(output) && !/failed|not found|cannot/i.test(output)) {
        this.sosLoaded = true;
        return null;
      }
    }
    this.sosLoaded = false;
    return `the process ran .NET (${clr}.dll) but cdb could not load SOS: managed threads, stacks and exceptions are not readable (install it with dotnet-sos)`;
  }

  /** One command: placed ones in their thread, frame or source, the selection read back after one that moves it. */
  private async reply(command: string, timeoutMs: number): Promise<{ output: string; error: string | null }> {
    const { place, command: inner } = parsePlaced(command);
    const output = place.thread === null && place.frame === null && place.source === null ? await this.exchange(command, timeoutMs) : await this.placed(place, inner, timeoutMs);
    if (this.vocabulary.movesSelection(inner)) await this.refreshSelection(timeoutMs);
    return { output, error: COMMAND_ERROR.exec(output)?.[0].trim() ?? null };
  }

  private async start(binary: string): Promise<Running> {
    const running: Running = { proc: undefined as unknown as DebuggerProcess, buffer: "", dropped: 0, wake: null, exited: null };
    running.proc = await spawnDebugger(binary, this.arguments(), {
      onData: (chunk) => {
        running.buffer += chunk.toString("utf8");
        // Output nobody asks for is dropped from the front rather than held without bound.
        if (running.buffer.length > MAX_OUTPUT) {
          running.dropped += running.buffer.length - MAX_OUTPUT;
          running.buffer = running.buffer.slice(-MAX_OUTPUT);
        }
        running.wake?.();
      },
      onStderr: (text) => {
        this.stderrTail = (this.stderrTail + text).slice(-2000);
      },
    });
    void running.proc.exited.then((how) => {
      running.exited = how;
      running.wake?.();
      if (this.running === running) this.running = null;
    });
    return running;
  }

  private async reopen(): Promise<void> {
    const old = this.running;
    this.running = null;
    if (old) {
      old.proc.kill();
      await old.proc.exited;
    }
    await this.open();
  }

  /**
   * Sends a command (none: only the marker, for the banner) and its marker, and returns what cdb
   * printed before the marker, prompts removed. Past the timeout cdb gets a break: a CommandTimeout
   * "recovered" when its marker still comes, else cdb is killed and the CommandTimeout says so.
   */
  private async exchange(command: string | null, timeoutMs: number): Promise<string> {
    const running = this.running;
    if (!running) throw new SessionDead("cdb is not running");
    const marker = `${this.nonce}-${++this.counter}`;
    if (command !== null) running.proc.writeLine(command);
    running.proc.writeLine(`.echo ${marker}`);
    const found = await this.waitFor(running, marker, timeoutMs);
    if (found === null) {
      running.proc.interrupt();
      const late = await this.waitFor(running, marker, INTERRUPT_GRACE_MS);
      if (late !== null) throw new InterruptedCommand("cdb answered the break");
      running.proc.kill();
      if (this.running === running) this.running = null;
      throw new CommandTimeout("cdb did not answer the break");
    }
    // The prompt cdb printed before reading the marker says which thread is selected now.
    const thread = PROMPT_THREAD.exec(found.prompt);
    if (thread) this.promptThread = Number(thread[2]);
    return found.output.replace(PROMPT, "").replace(/\s+$/, "");
  }

  /** What came before the marker's line, and the prompt on that line, once it comes; null past the time given. */
  private waitFor(running: Running, marker: string, timeoutMs: number): Promise<{ output: string; prompt: string } | null> {
    // Output that does not end its last line (`.printf "x"`) puts the prompt and the marker after it.
    const line = new RegExp(`((?:\\d+:\\d+(?::\\w+)?> )*)${marker}\\r?\\n`, "g");
    return new Promise<{ output: string; prompt: string } | null>((resolve, reject) => {
      const timer = setTimeout(() => finish(() => resolve(null)), timeoutMs);
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        running.wake = null;
        settle();
      };
      // Each look starts a little before where the last ended: long output is not searched again and again.
      let searched = running.dropped;
      const check = () => {
        line.lastIndex = Math.max(0, searched - running.dropped - marker.length - 64);
        const match = line.exec(running.buffer);
        searched = running.dropped + running.buffer.length;
        if (match) {
          const before = running.buffer.slice(0, match.index);
          running.dropped += match.index + match[0].length;
          running.buffer = running.buffer.slice(match.index + match[0].length);
          finish(() => resolve({ output: before, prompt: match[1] ?? "" }));
          return;
        }
        if (running.exited !== null) {
          // cdb says why it gave up on stdout (`Could not open dump file [...]`), other programs on stderr.
          const said = [this.stderrTail, running.buffer.replace(PROMPT, "")].flatMap((text) => text.trim().split(/\r?\n/)).filter((l) => l.trim() !== "").pop();
          finish(() => reject(new SessionDead(`cdb ${running.exited}${said ? ` (${said.trim().slice(0, 300)})` : ""}`)));
        }
      };
      running.wake = check;
      check();
    });
  }

  /**
   * Runs a command in another thread or frame, or over a source file: selects them, runs it, and
   * puts the selection back, with the exception context when the thread is the exception's.
   */
  private async placed(place: CdbPlace, command: string, timeoutMs: number): Promise<string> {
    if (place.source !== null) {
      const loaded = await this.exchange(`lsf "${place.source}"`, timeoutMs);
      if (COMMAND_ERROR.test(loaded) || /^Couldn't load/m.test(loaded)) return loaded;
      return this.exchange(command, timeoutMs);
    }
    const home = { thread: this.ctx.selectedThread?.id ?? null, frame: this.ctx.selectedFrame?.level ?? 0 };
    const thread = place.thread ?? home.thread;
    try {
      if (place.thread !== null && place.thread !== home.thread) {
        const moved = await this.exchange(`~${place.thread}s`, timeoutMs);
        if (COMMAND_ERROR.test(moved) || /^Illegal thread|^\^ /m.test(moved)) return moved;
        if (place.thread === this.exceptionThread) await this.exchange(".ecxr", timeoutMs);
      }
      await this.exchange(`.frame 0x${(place.frame ?? 0).toString(16)}`, timeoutMs);
      return await this.exchange(command, timeoutMs);
    } finally {
      if (this.running) {
        if (home.thread !== null && thread !== home.thread) {
          await this.exchange(`~${home.thread}s`, timeoutMs);
          if (home.thread === this.exceptionThread) await this.exchange(".ecxr", timeoutMs);
        }
        await this.exchange(`.frame 0x${home.frame.toString(16)}`, timeoutMs);
      }
    }
  }

  /** Where cdb stands: the prompt's thread and `.frame`'s row. */
  private async refreshSelection(timeoutMs: number): Promise<void> {
    const frame = parseSelectedFrame(await this.exchange(".frame", timeoutMs));
    const id = this.promptThread;
    const thread = id === null ? null : this.threads.get(id);
    this.ctx.selectedThread = id === null ? null : { id, lwp: thread?.lwp ?? null, name: thread?.name ?? null };
    this.ctx.selectedFrame = frame ? { ...frame, address: null } : null;
  }
}
