/**
 * What a run has opened, closed in reverse order when its owner is done: the job of
 * AsyncDisposableStack, which Node 20 does not have. Held with `await using`; `move()` hands what it
 * holds to the next owner (a function that goes on with it, a session returned to its caller).
 */
export class Resources implements AsyncDisposable {
  #closes: Array<() => unknown> = [];

  /** Something just opened, closed with its own `close()`. */
  use<T extends { close(): unknown }>(thing: T): T {
    this.#closes.push(() => thing.close());
    return thing;
  }

  /** How to close, or release, something just opened. */
  defer(close: () => unknown): void {
    this.#closes.push(close);
  }

  /** Everything held so far, now owned by the returned stack; this one is left empty. */
  move(): Resources {
    const next = new Resources();
    next.#closes = this.#closes;
    this.#closes = [];
    return next;
  }

  /** Closes everything, last opened first; one failing close does not keep the others open. */
  async [Symbol.asyncDispose](): Promise<void> {
    const closes = this.#closes.reverse();
    this.#closes = [];
    const failures: unknown[] = [];
    for (const close of closes) {
      try {
        await close();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
  }
}
