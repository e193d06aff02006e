/**
 * A persistent LLDB session on one dump, through LLVM's Debug Adapter Protocol server (lldb-vscode
 * in LLVM 16, lldb-dap since). The dump is loaded by an `attach` with `program` and `coreFile`; a
 * command is an `evaluate` in the REPL context behind the adapter's command escape, and its output
 * is the response's `result`. One command runs at a time. DAP cannot interrupt a command, so one
 * past its timeout costs the adapter: it is killed and the same dump reopened, which the result says.
 */
import type { DebugProtocol } from "@vscode/debugprotocol";
import { closeSync, readSync } from "node:fs";
import { basename, dirname } from "node:path";
import { openRegularFile } from "../dumpfile/index.js";
import { CommandRunner, type Queued } from "../command-runner.js";
import { checkCommand } from "../policy/index.js";
import { SentAhead } from "../sent-ahead.js";
import { codeCacheDir } from "../../cache-dir.js";
import { CommandTimeout, DebuggerError, DebuggerMissing, SessionDead } from "../errors.js";
import { takeEarly } from "../early-start.js";
import { spawnDebugger, type DebuggerProcess } from "../process.js";
import type { Vocabulary } from "../probe.js";
import { emptyContext, type CloseOptions, type CommandResult, type DebuggerSession, type RunOptions, type SessionContext, type ReadAheadOptions } from "../session.js";
import { resolveAdapter } from "./adapter.js";
import { DapClient } from "../dap.js";
import { lldbMinidumpVocabulary, lldbVocabulary } from "./vocabulary.js";
import { withFrameNames, type NamedModule } from "../symbols/frame-names.js";
import { parsePlaced, type CommandPlace } from "../place-text.js";
import { parseFrameText } from "./text/frames.js";
import { FILL_TIMEOUT_MS, fillCommand, keepFilled, pythonCacheStart, type PythonCache } from "./python-cache.js";

export interface LldbSessionOptions {
  dump: string;
  /** The program that crashed; null for a minidump, whose module list names it. */
  executable: string | null;
  /** The DAP server, or the lldb it is installed beside; the default adapter on PATH when omitted. */
  binary?: string;
  /** Default per-command timeout in milliseconds. */
  timeoutMs?: number;
  sysroot?: string;
  debugFileDirectory?: string;
  /** Folders holding the dump's modules (a minidump's DLLs), searched by file name. */
  modulesPath?: string[];
  /** Breakpad `.sym` files and PDBs for the dump's modules, added once the dump is loaded. */
  symbolFiles?: string[];
  /** Modules whose Breakpad symbols dumpdbg read, to name the frames lldb does not. */
  frameNames?: NamedModule[];
}

export const DEFAULT_TIMEOUT_MS = 30_000;
/** How long loading a dump may take (symbols of a big program, a core of many threads). */
const OPEN_TIMEOUT_MS = 120_000;
/** How long a program gets to answer `initialize` before it is taken for something else than an adapter. */
const INITIALIZE_TIMEOUT_MS = 30_000;
/** lldb-vscode runs REPL input that starts with this as an lldb command, not as an expression. */
const COMMAND_ESCAPE = "`";

/**
 * Load-time lines that say nothing to a user: lldb's complaints about debug information it cannot
 * read (it falls back to the symbol table), and a minidump's modules that are not on this machine
 * (dumpdbg lists them from the dump itself).
 */
const LOAD_NOISE = /\bDWARF\b|unsupported DW_FORM|Unable to locate module/;

/**
 * lldb's own frame and thread formats, without colour, with a source file's full path (the default
 * shows its base name) and a thread's tid in a backtrace's header: what `lldb/text/frames.ts` reads.
 */
const FRAME = "{ ${module.file.basename}{\\`${function.name-with-args}{${frame.no-debug}${function.pc-offset}}}}{ at ${line.file.fullpath}:${line.number}{:${line.column}}}";
const FORMATS = [
  `settings set frame-format "frame #\${frame.index}: \${frame.pc}${FRAME}{\${function.is-optimized} [opt]}{\${frame.is-artificial} [artificial]}\\n"`,
  `settings set thread-format "thread #\${thread.index}: tid = \${thread.id%tid}{, \${frame.pc}}${FRAME}{, name = '\${thread.name}'}{, stop reason = \${thread.stop-reason}}\\n"`,
  "settings set thread-stop-format \"thread #${thread.index}: tid = ${thread.id%tid}{, name = '${thread.name}'}{, stop reason = ${thread.stop-reason}}\\n\"",
];

interface Adapter {
  proc: DebuggerProcess;
  client: DapClient;
}

/** What lldb printed for one command, and its error when it reported one. */
interface Reply {
  output: string;
  error: string | null;
}

export class LldbSession implements DebuggerSession {
  readonly backend = "lldb" as const;
  readonly vocabulary: Vocabulary;
  /** What lldb warned about while loading the dump (a missing .dwo, a setting it refused). */
  loadWarnings: string[] = [];
  private adapter: Adapter | null = null;
  /** Closed by its owner: never reopened. */
  private closed = false;
  /** Commands of the runner's queue sent before their turn, oldest first, each with its answer to come. */
  private readonly ahead = new SentAhead<Reply>();
  /** Commands wait here and are answered in their order (some sent ahead: see reply). */
  private readonly runner: CommandRunner;
  private ctx: SessionContext = emptyContext("lldb");
  /** Thread names by OS thread id: the adapter's ids are lldb's tids, and a dump's threads never change. */
  private threadNames = new Map<number, string | null>();
  private lldbVersion: string | null = null;
  /** The adapter's output events while the dump loads; null once it is loaded. */
  private loading: string[] | null = null;
  private stderrTail = "";
  /** The bytecode folder of LLDB's Python to fill as the session closes: LLDB was started without it. */
  private pythonCacheToFill: PythonCache | null = null;

  constructor(private readonly options: LldbSessionOptions) {
    this.vocabulary = withFrameNames(isMinidump(options.dump) ? lldbMinidumpVocabulary : lldbVocabulary, options.frameNames ?? []);
    this.runner = new CommandRunner(
      {
        running: () => this.adapter !== null,
        reopen: () => this.reopen(),
        exchange: (command, timeoutMs, queued) => this.reply(command, timeoutMs, queued),
        // DAP has no way to interrupt a command in lldb.
        recover: async () => {
          await this.reopen();
          return { interrupted: false, why: "DAP cannot interrupt lldb" };
        },
        context: () => this.context(),
      },
      options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
  }

  version(): string | null {
    return this.lldbVersion;
  }

  context(): SessionContext {
    return structuredClone(this.ctx);
  }

  async open(): Promise<void> {
    const binary = resolveAdapter(this.options.binary);
    this.loading = [];
    this.adapter = await this.start(binary);
    const { client } = this.adapter;
    try {
      await this.initialize(client, binary);
      // Sent together, answered in order: the settings, then the dump's load.
      const settings = this.settings().map((setting) => ({ setting, reply: this.command(setting, OPEN_TIMEOUT_MS) }));
      const attaching = client.request(
        "attach",
        { ...(this.options.executable ? { program: this.options.executable } : {}), coreFile: this.options.dump },
        OPEN_TIMEOUT_MS,
      );
      // One that fails while an earlier one is awaited is reported by that await, not as unhandled.
      for (const pending of [...settings.map((s) => s.reply), attaching]) pending.catch(() => undefined);
      for (const { setting, reply } of settings) {
        const answered = await reply;
        if (answered.error) throw new DebuggerError(`lldb refused "${setting}": ${answered.error}`);
      }
      const attach = await attaching;
      if (!attach.success) throw new DebuggerError(`lldb could not load ${this.options.dump}: ${attach.message}`);
      // For a core, lldb-vscode answers the attach first and sends its stopped events (one per
      // thread with a stop reason) right after answering configurationDone, from the same handler:
      // they are all in by the time `threads` is answered.
      await client.request("configurationDone", {}, OPEN_TIMEOUT_MS);
      for (const file of this.options.symbolFiles ?? []) {
        const added = await this.command(`target symbols add ${lldbQuote(file)}`, OPEN_TIMEOUT_MS);
        if (added.error) this.loading?.push(`warning: lldb did not take the symbols in ${file}: ${added.error}`);
      }
      const threads = await client.request("threads", undefined, OPEN_TIMEOUT_MS);
      const list = threads.success ? threads.body.threads : [];
      this.threadNames = new Map(list.map((thread) => [thread.id, threadName(thread)]));
      this.ctx = { ...emptyContext("lldb"), targetLoaded: true, threadCount: list.length };
      const version = await this.command("version", OPEN_TIMEOUT_MS);
      this.lldbVersion = version.output.trim().split("\n")[0] || null;
      await this.refreshSelection(OPEN_TIMEOUT_MS);
      this.loadWarnings = [...new Set(this.loading.flatMap(warningsIn))];
    } catch (error) {
      await this.end();
      if (error instanceof DebuggerError) throw error;
      throw new DebuggerError(`lldb failed while opening ${this.options.dump}: ${(error as Error).message}`);
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

  /** Ends the adapter; the session is not reopened after (a command still queued is answered `session_dead`). */
  async close(options: CloseOptions = {}): Promise<void> {
    this.closed = true;
    await this.fillPythonCache();
    await this.end(options);
  }

  /**
   * Compiles what LLDB's Python imported into the bytecode folder, once, so that the next LLDB
   * starts without compiling it (python-cache.ts). A fill that fails leaves the folder unused.
   */
  private async fillPythonCache(): Promise<void> {
    const cache = this.pythonCacheToFill;
    this.pythonCacheToFill = null;
    // Not behind a command still running, or sent ahead and never taken: closing waits for nothing of theirs.
    if (cache === null || this.adapter === null || this.adapter.client.busy) return;
    try {
      const filled = await this.command(fillCommand(cache.folder), FILL_TIMEOUT_MS);
      if (filled.error === null) keepFilled(cache, filled.output);
    } catch {
      // No folder this time: LLDB compiles its Python as it always did.
    }
  }

  /** Ends the adapter and fails the requests it has not answered (their timers go with them). */
  private async end({ wait = true }: CloseOptions = {}): Promise<void> {
    const adapter = this.adapter;
    this.adapter = null;
    this.ahead.clear();
    if (!adapter) return;
    adapter.client.close(new SessionDead("the session was closed"));
    // The adapter holds nothing worth a polite `disconnect` (the dump is read-only): answering it and
    // tearing LLDB down took about 100 ms of every run. Ended at once, as gdb is.
    if (!wait) return adapter.proc.release();
    adapter.proc.kill();
    await adapter.proc.exited;
  }

  /** One command through the adapter's REPL: placed ones in their thread and frame, the selection read back after one that moves it. */
  private async reply(command: string, timeoutMs: number, queued: readonly Queued[] = []): Promise<{ output: string; error: string | null }> {
    const { place, command: inner } = parsePlaced(command);
    const here = place.thread === null && place.frame === null;
    const answer = here ? (this.takeAhead(command, timeoutMs) ?? this.command(command, timeoutMs)) : null;
    // The next commands are sent while lldb works on this one (lldb answers requests in order; see
    // sent-ahead.ts), each taken in its turn with its timeout running from then. None goes past a
    // placed command, one that moves the selection, or one the safety policy would refuse (run
    // under --unsafe, it may read lldb's input). The adapter's own clock for a request sent ahead
    // also counts the timeouts of the commands before it: a bound, never the one that cuts it.
    const mayGo = (next: string) => {
      const placed = parsePlaced(next);
      return placed.place.thread === null && placed.place.frame === null && !this.vocabulary.movesSelection(placed.command) && checkCommand("lldb", next).allowed;
    };
    if (mayGo(command)) this.ahead.send(queued, timeoutMs, mayGo, (next, nextTimeoutMs, before) => this.command(next, before + nextTimeoutMs));
    const reply = answer ? await answer : await this.placed(place, inner, timeoutMs);
    if (this.vocabulary.movesSelection(inner)) await this.refreshSelection(timeoutMs);
    return { output: reply.output, error: reply.error };
  }

  /** The answer to come of a command sent ahead, when it was, within `timeoutMs` from now: its turn. */
  private takeAhead(command: string, timeoutMs: number): Promise<Reply> | null {
    const answer = this.ahead.take(command);
    if (!answer) return null;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new CommandTimeout(`evaluate got no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  }

  private async start(binary: string): Promise<Adapter> {
    let proc: DebuggerProcess | null = null;
    const client = new DapClient({
      write: (bytes) => proc?.write(bytes) ?? false,
      onEvent: (event) => this.onEvent(event),
      onBroken: () => proc?.kill(),
    });
    const onData = (chunk: Buffer) => client.receive(chunk);
    const onStderr = (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-2000);
    };
    const { env, toFill } = pythonCacheStart(binary);
    this.pythonCacheToFill = toFill;
    const taken = await takeEarly(binary, [], [], env);
    taken?.connect({ onData }, onStderr);
    proc = taken?.proc ?? (await spawnDebugger(binary, [], { onData, onStderr, env }));
    const adapter = { proc, client };
    void proc.exited.then((how) => {
      const stderr = this.stderrTail.trim().split("\n").pop();
      client.close(new SessionDead(`${basename(binary)} ${how}${stderr ? ` (${stderr})` : ""}`));
      if (this.adapter === adapter) {
        this.adapter = null;
        // What was sent ahead is sent again, in its turn, to the reopened dump.
        this.ahead.clear();
      }
    });
    return adapter;
  }

  private async initialize(client: DapClient, binary: string): Promise<void> {
    let response: DebugProtocol.InitializeResponse;
    try {
      response = await client.request(
        "initialize",
        { clientID: "dumpdbg", clientName: "dumpdbg", adapterID: "lldb", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true },
        INITIALIZE_TIMEOUT_MS,
      );
    } catch (error) {
      throw new DebuggerMissing(`${binary} does not answer as a Debug Adapter Protocol server (${(error as Error).message})`);
    }
    if (!response.success) throw new DebuggerMissing(`${binary} refused to start a debug session: ${response.message}`);
  }

  /** Commands lldb runs before it loads the dump. */
  private settings(): string[] {
    const settings = [
      // Dump contents are untrusted: no script that a symbol file brings along is run.
      "settings set target.load-script-from-symbol-file false",
      // The model's instructions are in AT&T syntax, and its frames name a source file by its path.
      "settings set target.x86-disassembly-flavor att",
      ...FORMATS,
    ];
    // LLDB's index of each module's symbols and debug information, kept between runs (an ELF core
    // with glibc's debug information: ~290 ms to ~210 ms under lldb --batch here).
    const cache = codeCacheDir("lldb-index");
    if (cache !== null) settings.push(`settings set symbols.lldb-index-cache-path ${lldbQuote(cache)}`, "settings set symbols.enable-lldb-index-cache true");
    // A sysroot is a platform's: remote-linux looks up a core's shared libraries under it, host does not.
    if (this.options.sysroot) settings.push(`platform select --sysroot ${lldbQuote(this.options.sysroot)} remote-linux`);
    // A minidump names its modules by their paths on the machine it came from: lldb looks them up by
    // file name in these folders; the dump's and the program's own folders come last.
    const searched = [...(this.options.modulesPath ?? []), dirname(this.options.dump), ...(this.options.executable ? [dirname(this.options.executable)] : [])];
    settings.push(`settings set target.exec-search-paths ${[...new Set(searched)].map(lldbQuote).join(" ")}`);
    if (this.options.debugFileDirectory) {
      settings.push(`settings set target.debug-file-search-paths ${this.options.debugFileDirectory.split(":").filter(Boolean).map(lldbQuote).join(" ")}`);
    }
    return settings;
  }

  private async reopen(): Promise<void> {
    if (this.closed) throw new SessionDead("the session was closed");
    const old = this.adapter;
    this.adapter = null;
    this.ahead.clear();
    if (old) {
      old.proc.kill();
      await old.proc.exited;
    }
    await this.open();
  }

  /**
   * Runs a command in another thread or frame: selects them, runs it, and puts the selection back,
   * as gdb's `thread apply N frame apply level F` leaves gdb's. A thread without a frame means its
   * innermost frame.
   */
  private async placed(place: CommandPlace, command: string, timeoutMs: number): Promise<Reply> {
    const home = { thread: this.ctx.selectedThread?.id ?? null, frame: this.ctx.selectedFrame?.level ?? 0 };
    const moves = [
      ...(place.thread !== null ? [`thread select ${place.thread}`] : []),
      ...(place.thread !== null || place.frame !== null ? [`frame select ${place.frame ?? 0}`] : []),
    ];
    try {
      for (const move of moves) {
        const moved = await this.command(move, timeoutMs);
        if (moved.error !== null) return { output: "", error: moved.error };
      }
      return await this.command(command, timeoutMs);
    } finally {
      if (this.adapter) {
        if (place.thread !== null && home.thread !== null) await this.command(`thread select ${home.thread}`, timeoutMs);
        await this.command(`frame select ${home.frame}`, timeoutMs);
      }
    }
  }

  /** Runs one lldb command at the adapter's REPL. */
  private async command(command: string, timeoutMs: number): Promise<Reply> {
    const adapter = this.adapter;
    if (!adapter) throw new SessionDead("lldb is not running");
    const response = await adapter.client.request("evaluate", { expression: `${COMMAND_ESCAPE}${command}`, context: "repl" }, timeoutMs);
    return replyOf(command, response);
  }

  /**
   * Asks lldb where it stands: its selected thread and that thread's selected frame. `frame info`
   * rather than DAP's `stackTrace`, whose answer counts every frame of the thread (seconds on a
   * stack overflow's hundred thousand frames).
   */
  private async refreshSelection(timeoutMs: number): Promise<void> {
    const [thread, frame] = await Promise.all([this.command("thread info", timeoutMs), this.command("frame info", timeoutMs)]);
    const selected = /^thread #(\d+): tid = (0x[0-9a-f]+|\d+)/m.exec(thread.output);
    this.ctx.selectedThread = selected
      ? { id: Number(selected[1]), lwp: Number(selected[2]), name: this.threadNames.get(Number(selected[2])) ?? null }
      : null;
    this.ctx.selectedFrame = selected ? frameOf(frame.output) : null;
  }

  private onEvent(event: DebugProtocol.Event): void {
    if (event.event !== "output" || !this.loading) return;
    // After the load, output events are not a command's output: lldb-vscode puts that in the
    // evaluate response, and copies what lldb writes to its stdout and stderr into output events
    // from a thread of its own, late and out of step with the responses.
    const { category, output } = (event as DebugProtocol.OutputEvent).body;
    if (category === undefined || category === "console" || category === "stderr" || category === "important") {
      this.loading.push(output);
    }
  }
}

/**
 * lldb-vscode 16 answers a REPL command with `(lldb) COMMAND`, then what the command printed, then
 * its error text, and `success: true` even when the command failed: the error is the text from the
 * first `error:` line on.
 */
function replyOf(command: string, response: DebugProtocol.EvaluateResponse): Reply {
  if (!response.success) return { output: "", error: response.message ?? "lldb reported an error" };
  const result = response.body?.result ?? "";
  // lldb-dap from LLVM 21 no longer echoes the command.
  const echo = `(lldb) ${command}\n`;
  const text = withoutDwarfComplaints(result.startsWith(echo) ? result.slice(echo.length) : result);
  const error = /^error: /m.exec(text);
  if (!error) return { output: text, error: null };
  return { output: text.slice(0, error.index), error: text.slice(error.index + error[0].length).trimEnd() };
}

/**
 * lldb reports debug information it cannot read (a mingw build's range lists, say) as `error:`
 * lines in the middle of a command's output, once per module; the command itself worked.
 */
const DWARF_COMPLAINT = /^(?:error|warning): .*(?:\bDIE\b|\bDWARF\b|\bDW_(?:AT|FORM|TAG)_|please file a bug).*\n?/gm;

function withoutDwarfComplaints(text: string): string {
  return text.replace(DWARF_COMPLAINT, "");
}

/** The adapter names a thread `Thread #2` or `Thread #1 worker`: the name is what follows the number. */
function threadName(thread: DebugProtocol.Thread): string | null {
  return /^Thread #?\d+:?\s+(.+)$/.exec(thread.name)?.[1] ?? null;
}

/** The selected frame from `frame info`: `frame #1: 0x000055cda876425e prog`worker_main(arg=0x0) at /src/thread-crash.c:48:5`. */
function frameOf(text: string): SessionContext["selectedFrame"] {
  const line = /^frame #(\d+): (.*)$/m.exec(text);
  const frame = line ? parseFrameText(line[2] ?? "") : null;
  if (!line || !frame) return null;
  return { level: Number(line[1]), function: frame.function, file: frame.file, line: frame.line, address: frame.address };
}

/** The lines of a load-time output event worth a user's attention. */
function warningsIn(output: string): string[] {
  return output
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !LOAD_NOISE.test(line));
}

/** Whether a dump file is a minidump ("MDMP"), by its first bytes; a file that cannot be read is left to `open` to report. */
function isMinidump(path: string): boolean {
  try {
    const fd = openRegularFile(path);
    try {
      const head = Buffer.alloc(4);
      return readSync(fd, head, 0, 4, 0) === 4 && head.toString("latin1") === "MDMP";
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** Quotes an argument of an lldb command. */
function lldbQuote(text: string): string {
  return `"${text.replace(/[\\"]/g, "\\$&")}"`;
}
