/** What each thread of a hung process is blocked on, from its frames: pure. */
import { describe, expect, it } from "vitest";
import { blockedOn, blockedThreads, hangMessage } from "../../src/analyzers/hang.js";

const frame = (level: number, fn: string, module = "/lib/x86_64-linux-gnu/libc.so.6") => ({ level, function: fn, file: null, line: null, address: null, args: "", module });
const own = (level: number, fn: string) => ({ ...frame(level, fn, "/srv/app"), file: "/srv/app.c", line: 10 });

describe("a blocked thread", () => {
  it("is named by the wait call the program made, not the futex under it", () => {
    expect(blockedOn(2, [frame(0, "futex_wait"), frame(1, "__pthread_cond_wait_common"), frame(2, "___pthread_cond_wait"), own(3, "consumer")] as never)).toEqual({ thread: 2, waitsFor: "a condition variable", waiter: "consumer" });
    expect(blockedOn(3, [frame(0, "__futex_abstimed_wait_common64"), frame(1, "__new_sem_wait_slow64"), own(2, "worker")] as never)?.waitsFor).toBe("a semaphore");
    expect(blockedOn(4, [frame(0, "__GI___poll"), own(1, "serve")] as never)?.waitsFor).toBe("I/O");
  });

  it("is not blocked when it runs its own code", () => {
    expect(blockedOn(1, [own(0, "spin")] as never)).toBeNull();
  });
});

describe("a hang", () => {
  it("is every thread blocked; one running thread makes it none", () => {
    const waiting = new Map([
      [1, [frame(0, "__futex_abstimed_wait_common64"), frame(1, "__pthread_clockjoin_ex"), own(2, "main")]],
      [2, [frame(0, "futex_wait"), frame(1, "__new_sem_wait_slow64"), own(2, "worker")]],
    ]) as never;
    expect(hangMessage(blockedThreads(waiting) ?? "")).toBe("hung: all 2 threads are blocked waiting: 1 for another thread to finish (in main), 1 on a semaphore (in worker); no wait records an owner, so who should have woken them is not in the dump");
    const running = new Map([...(waiting as Map<number, unknown>), [3, [own(0, "spin")]]]) as never;
    expect(blockedThreads(running)).toBeNull();
    // A thread in a sleep or waiting for I/O may just be idle: no hang is claimed.
    const sleeping = new Map([[1, [frame(0, "clock_nanosleep"), frame(1, "__GI___nanosleep"), frame(2, "usleep"), own(3, "serve_forever")]]]) as never;
    expect(blockedThreads(sleeping)).toBeNull();
    const polling = new Map([...(waiting as Map<number, unknown>), [3, [frame(0, "__GI___poll"), own(1, "serve")]]]) as never;
    expect(blockedThreads(polling)).toBeNull();
  });
});
