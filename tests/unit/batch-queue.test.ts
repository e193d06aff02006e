/** The pure parts of the batch queue: the address it accepts and prints, and how a job is named. */
import { utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { connectionOf, displayed, jobIdOf, QueueError } from "../../src/batch/queue.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

describe("the queue's address", () => {
  it("takes redis:// and rediss:// with a password and a database, and nothing else", () => {
    expect(connectionOf("redis://127.0.0.1:6379")).toEqual({ url: "redis://127.0.0.1:6379", maxRetriesPerRequest: null });
    expect(connectionOf("rediss://user:secret@queue.internal:6380/2").url).toBe("rediss://user:secret@queue.internal:6380/2");
    expect(() => connectionOf("http://127.0.0.1:6379")).toThrow(QueueError);
    expect(() => connectionOf("127.0.0.1:6379")).toThrow(/--queue must be a redis:\/\/HOST:PORT address, got "127\.0\.0\.1:6379"/);
    expect(() => connectionOf("")).toThrow(QueueError);
  });

  it("never prints the password", () => {
    expect(displayed("redis://user:secret@queue.internal:6380/2")).toBe("redis://user:***@queue.internal:6380/2");
    expect(displayed("redis://127.0.0.1:6379")).toBe("redis://127.0.0.1:6379");
  });
});

describe("a job's name", () => {
  const dir = tempDir("dumpdbg-jobid-");
  const dump = path.join(dir, "a.core");
  writeFileSync(dump, "core bytes");

  it("is the same for the same dump, unchanged, with the same settings", () => {
    const data = { dump, open: { timeoutMs: 30_000 } };
    expect(jobIdOf("triage", data)).toBe(jobIdOf("triage", { dump, open: { timeoutMs: 30_000 } }));
    expect(jobIdOf("triage", data)).toMatch(/^triage-[0-9a-f]{32}$/);
  });

  it("changes with the work, the settings, or the file", () => {
    const data = { dump, open: { timeoutMs: 30_000 } };
    const before = jobIdOf("triage", data);
    expect(jobIdOf("analyze", data)).not.toBe(before);
    expect(jobIdOf("triage", { dump, open: { timeoutMs: 60_000 } })).not.toBe(before);
    utimesSync(dump, new Date(2020, 0, 1), new Date(2020, 0, 1));
    expect(jobIdOf("triage", data)).not.toBe(before);
  });

  it("holds no colon (BullMQ refuses custom ids with one)", () => {
    expect(jobIdOf("triage", { dump: "/no/such:file", open: {} })).not.toContain(":");
  });
});
