/**
 * Commands of the runner's queue sent to a debugger before their turn (CommandLine.exchange's
 * `queued`), so that it has the next as soon as it has answered one: a pipe's round trip and our
 * reading of each answer are then spent while it works. A backend sends up to AHEAD of those queued
 * behind the current command, stopping at the first it may not send, and takes each answer in its
 * command's turn. The debuggers answer in order, so those sent are always the first of the queue.
 */
import type { Queued } from "./command-runner.js";

/** How many commands may wait in a debugger's input: enough that it never waits for the next, few enough to stay well inside a pipe's buffer. */
const AHEAD = 16;

export class SentAhead<Answer> {
  private sent: { command: string; timeoutMs: number; answer: Promise<Answer> }[] = [];

  /** Whether commands sent ahead are still waiting in the debugger's input. */
  get waiting(): boolean {
    return this.sent.length > 0;
  }

  /**
   * Sends those of `queued` not sent yet, in order, until `mayGo` refuses one or AHEAD are out.
   * `send` is told how long the commands before it may take (the current one's timeout and those
   * sent ahead of it), for a backend whose clock runs from the moment a request is sent.
   */
  send(queued: readonly Queued[], currentTimeoutMs: number, mayGo: (command: string) => boolean, send: (command: string, timeoutMs: number, before: number) => Promise<Answer>): void {
    if (this.sent.some((sent, i) => queued[i]?.command !== sent.command)) return;
    let before = currentTimeoutMs + this.sent.reduce((sum, sent) => sum + sent.timeoutMs, 0);
    for (const next of queued.slice(this.sent.length, AHEAD)) {
      if (!mayGo(next.command)) return;
      const answer = send(next.command, next.timeoutMs, before);
      // Its turn may never come (the session is closed first): its failure is then nobody's.
      answer.catch(() => undefined);
      this.sent.push({ command: next.command, timeoutMs: next.timeoutMs, answer });
      before += next.timeoutMs;
    }
  }

  /** The answer to come of `command`, when it is the next one sent ahead; null when it was not sent. */
  take(command: string): Promise<Answer> | null {
    const first = this.sent[0];
    if (first?.command !== command) return null;
    this.sent.shift();
    return first.answer;
  }

  /** Forgets them: the debugger they were sent to is gone, and each is sent again in its turn. */
  clear(): void {
    this.sent = [];
  }
}
