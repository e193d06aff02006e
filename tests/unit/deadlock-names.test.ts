/** Naming the lock a deadlocked thread waits for: pure parts. */
import { describe, expect, it } from "vitest";
import { globalName, lockExpressionIn, locksHeldBefore, lockText, unlockExpressionIn } from "../../src/analyzers/deadlock.js";

describe("the lock a source line passes to a locking call", () => {
  it.each([
    ["    pthread_mutex_lock(&to->lock); // CULPRIT", "to->lock"],
    ["  pthread_mutex_lock(&stage->next->lock);", "stage->next->lock"],
    ["\tpthread_mutex_lock(&audit_log);", "audit_log"],
    ["  if (pthread_mutex_timedlock(&table[i].lock, &deadline) != 0)", "table[i].lock"],
    ["    std::lock_guard<std::mutex> guard(registry_mutex);", "registry_mutex"],
    ["    std::unique_lock<std::mutex> lk{queue.mutex};", "queue.mutex"],
    ["    EnterCriticalSection(&g_state.cs);", "g_state.cs"],
    ["    mtx_lock(&jobs_lock);", "jobs_lock"],
  ])("%s → %s", (line, expression) => {
    expect(lockExpressionIn(line)).toBe(expression);
  });

  it("finds none where no lock is taken", () => {
    expect(lockExpressionIn("    pthread_mutex_unlock(&to->lock);")).toBeNull();
    expect(lockExpressionIn("    balance -= amount;")).toBeNull();
    expect(lockExpressionIn("")).toBeNull();
  });
});

describe("a global's name", () => {
  it("is the symbol of data, with its offset inside an array or struct", () => {
    expect(globalName({ symbol: "audit_log", offset: 0, section: ".bss" })).toBe("audit_log");
    expect(globalName({ symbol: "accounts", offset: 40, section: ".data" })).toBe("accounts+40");
  });

  it("is not a function's symbol, a stack or heap address, or unknown", () => {
    expect(globalName({ symbol: "main", offset: 12, section: ".text" })).toBeNull();
    expect(globalName({ symbol: "x", offset: 0, section: null })).toBeNull();
    expect(globalName(null)).toBeNull();
  });
});

describe("a lock as people say it", () => {
  it("gives the name and the address, or the address alone", () => {
    expect(lockText({ lock: "0x7ffd10", lockName: "to->lock" })).toBe("to->lock (0x7ffd10)");
    expect(lockText({ lock: "0x7ffd10", lockName: null })).toBe("0x7ffd10");
    expect(lockText({ lock: null })).toBe("an unknown lock");
  });
});

describe("the locks a function still holds at its waiting line, from its code", () => {
  it("takes each lock call before the line whose lock no later call released", () => {
    const lines = [
      "{",
      "    EnterCriticalSection(&config_lock);",
      "    EnterCriticalSection(&stats->lock);",
      "    LeaveCriticalSection(&stats->lock);",
      "    pthread_mutex_lock(&queue.mutex);",
      "    meet_the_other_thread();",
      "    EnterCriticalSection(&cache_lock); // waits here",
    ].map((text, i) => ({ line: 26 + i, text }));
    expect(locksHeldBefore(lines, 32)).toEqual([
      { expression: "config_lock", line: 27 },
      { expression: "queue.mutex", line: 30 },
    ]);
    expect(unlockExpressionIn("    LeaveCriticalSection(&to->lock);")).toBe("to->lock");
    expect(unlockExpressionIn("    pthread_mutex_unlock(&cache_lock);")).toBe("cache_lock");
    expect(unlockExpressionIn("    cached = 0;")).toBeNull();
  });
});

describe("a PE's section symbol", () => {
  it("is no variable's name: `.bss` at the first global's address names nothing", () => {
    expect(globalName({ symbol: ".bss", offset: 0, section: ".bss" })).toBeNull();
    expect(globalName({ symbol: "config_lock", offset: 0, section: ".bss" })).toBe("config_lock");
  });
});
