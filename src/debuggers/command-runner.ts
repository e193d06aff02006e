/**
 * Running one command, the same for every debugger: one at a time, in the order asked; a command
 * holding a newline or a control character refused before it reaches the debugger (it would run
 * a second command past whatever checked this one); a debugger that is gone reopened first; a
 * timeout recovered the backend's way (interrupted, or killed and the dump reopened); a debugger
 * that dies mid-command reopened and asked the command once more (killed from outside, it answers
 * now; one that dies on it again has its result say so). A debugger that cannot even reopen the dump
 * ends the run: a DebuggerError naming what it was doing. A backend only exchanges one command and
 * says how it recovers.
 */
import { CommandTimeout, DebuggerError, SessionDead } from "./errors.js";
import type { CommandResult, RunOptions, SessionContext, ReadAheadOptions } from "./session.js";

const CONTROL = /[\u0000-\u001f\u007f]/;

/** What a backend does for the runner. */
export interface CommandLine {
  /** Whether the debugger is running; a command to one that is not reopens the dump first. */
  running(): boolean;
  reopen(): Promise<void>;
  /**
   * One command's reply: what the debugger printed, and its error message (null when the command
   * succeeded). Throws CommandTimeout past `timeoutMs`, SessionDead when the debugger went away.
   * `queued` are the commands asked after this one, in order: a backend may send some of them
   * ahead, so that the debugger has the next command when it finishes this one; each is still
   * exchanged (and answered) in its turn.
   */
  exchange(command: string, timeoutMs: number, queued: readonly Queued[]): Promise<{ output: string; error: string | null }>;
  /**
   * After `exchange` timed out: whether the debugger answered an interrupt and is still open, or
   * why it could not be interrupted, once it has been killed and the dump reopened.
   */
  recover(timeout: CommandTimeout): Promise<{ interrupted: true } | { interrupted: false; why: string }>;
  context(): SessionContext;
}

/** A command waiting for its turn. */
export interface Queued {
  command: string;
  timeoutMs: number;
}

export class CommandRunner {
  private queue: Promise<unknown> = Promise.resolve();
  /** The commands asked and not yet started, in order. */
  private readonly waiting: Queued[] = [];
  /** Commands asked ahead of whoever will ask them (`readAhead`), in order, each with its result to come. */
  private readingAhead: (Queued & { result: Promise<CommandResult> })[] = [];
  /** Commands that may be asked among those read ahead without ending the reading ahead. */
  private among: ReadonlySet<string> = new Set();

  constructor(
    private readonly line: CommandLine,
    /** The timeout of a command whose options set none. */
    private readonly timeoutMs: number,
  ) {}

  /**
   * Runs these commands now, for whoever asks them next: a caller that knows what it will ask
   * first has the debugger work through it while it does something else. `run` takes a command's
   * result when it is the next of these, asked with the same timeout. A command of `among` runs in
   * its turn, after those already read ahead; any other ends the reading ahead (what was read and
   * not asked is dropped). So none of these may move the selection or change what another answers,
   * and none of `among` what these answer: each answer is the one it would have had in its turn.
   * Resolves once the debugger has been handed them: a caller about to work synchronously awaits it.
   */
  readAhead(commands: readonly string[], options: ReadAheadOptions = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    this.among = new Set(options.among ?? []);
    return new Promise<void>((handed) => {
      if (commands.length === 0) handed();
      for (const [i, command] of commands.entries()) {
        const result = this.enqueue(command, timeoutMs, i === 0 ? handed : undefined);
        // Its turn may never come (another command was asked instead): its failure is then nobody's.
        result.catch(() => undefined);
        this.readingAhead.push({ command, timeoutMs, result });
      }
    });
  }

  /** Runs one command after those asked before it. Never throws for a failing command: the failure is in the result. */
  run(command: string, options: RunOptions = {}): Promise<CommandResult> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const next = this.readingAhead[0];
    if (next?.command === command && next.timeoutMs === timeoutMs) {
      this.readingAhead.shift();
      return next.result;
    }
    if (!this.among.has(command)) this.readingAhead = [];
    return this.enqueue(command, timeoutMs);
  }

  /** `started`: called once the debugger has been handed the command (and those sent ahead of their turn with it). */
  private enqueue(command: string, timeoutMs: number, started?: () => void): Promise<CommandResult> {
    const queued: Queued = { command, timeoutMs };
    this.waiting.push(queued);
    const next = this.queue.then(() => {
      this.waiting.splice(this.waiting.indexOf(queued), 1);
      // runNow hands the command over before its first wait, unless the dump must be reopened first.
      const running = this.runNow(command, queued.timeoutMs);
      started?.();
      return running;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async runNow(command: string, timeoutMs: number): Promise<CommandResult> {
    const started = performance.now();
    const result = (fields: Partial<CommandResult> & { ok: boolean; output: string }): CommandResult => ({
      command,
      ...fields,
      ms: Math.round(performance.now() - started),
      context: this.line.context(),
    });

    if (CONTROL.test(command)) {
      return result({ ok: false, output: "", errorType: "debugger_error", error: "a command cannot contain newlines or control characters" });
    }

    let reopened = false;
    if (!this.line.running()) {
      await this.reopen(command, null);
      reopened = true;
    }
    let died: SessionDead | null = null;

    for (;;) {
      try {
        // Commands holding a control character are refused in their turn, and never sent ahead.
        const stop = this.waiting.findIndex((next) => CONTROL.test(next.command));
        const reply = await this.line.exchange(command, timeoutMs, stop === -1 ? this.waiting : this.waiting.slice(0, stop));
        return result({
          ok: reply.error === null,
          output: reply.output,
          ...(reply.error === null ? {} : { errorType: "debugger_error" as const, error: reply.error }),
          ...(reopened ? { reopened } : {}),
        });
      } catch (error) {
        if (error instanceof CommandTimeout) {
          const recovered = await this.line.recover(error);
          const seconds = (timeoutMs / 1000).toFixed(timeoutMs < 1000 ? 1 : 0);
          return result({
            ok: false,
            output: error.partial,
            errorType: "timeout",
            error: recovered.interrupted
              ? `command timed out after ${seconds}s and was interrupted`
              : `command timed out after ${seconds}s; ${recovered.why}, so it was killed and the dump reopened`,
            ...(reopened || !recovered.interrupted ? { reopened: true } : {}),
          });
        }
        if (error instanceof SessionDead) {
          await this.reopen(command, error);
          reopened = true;
          if (died) {
            return result({
              ok: false,
              output: "",
              errorType: "session_dead",
              error: `${died.message}, and again when asked once more (${error.message}): it may crash on this command every time; the dump was reopened`,
              reopened: true,
            });
          }
          died = error;
          continue;
        }
        throw error;
      }
    }
  }

  /** The dump reopened after `died` (or a debugger found gone); a debugger that dies reopening it ends the run. */
  private async reopen(command: string, died: SessionDead | null): Promise<void> {
    try {
      await this.line.reopen();
    } catch (error) {
      if (!(error instanceof SessionDead)) throw error;
      const before = died ? `${died.message} running "${command}", then ` : "";
      throw new DebuggerError(`the debugger could not be started again: ${before}${error.message}`);
    }
  }
}
