/**
 * The tail of gdb's MI log file (debuggers/gdb/mi-log.ts): complete lines handed over in order as
 * gdb appends them, a character split across two writes kept whole, and how much was read (a kept
 * gdb's log is bounded by it).
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MiLogTail } from "../../src/debuggers/gdb/mi-log.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tailOf(): { file: string; tail: MiLogTail; lines: string[] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-mi-log-"));
  dirs.push(dir);
  const file = path.join(dir, "mi.log");
  const lines: string[] = [];
  return { file, tail: new MiLogTail(file, (line) => lines.push(line)), lines };
}

describe("the MI log's tail", () => {
  it("hands over each complete line once, in order, and counts the bytes read", () => {
    const { file, tail, lines } = tailOf();
    try {
      appendFileSync(file, '7^done,value="0x0"\n(gdb) \n~"#0  send_to');
      tail.drain();
      expect(lines).toEqual(['7^done,value="0x0"', "(gdb) "]);
      appendFileSync(file, '_client"\n');
      tail.drain();
      tail.drain();
      expect(lines).toEqual(['7^done,value="0x0"', "(gdb) ", '~"#0  send_to_client"']);
      expect(tail.length).toBe(Buffer.byteLength('7^done,value="0x0"\n(gdb) \n~"#0  send_to_client"\n'));
    } finally {
      tail.close();
    }
  });

  it("keeps a character split across two writes whole, and starts over when gdb truncates the file", () => {
    const { file, tail, lines } = tailOf();
    try {
      const text = Buffer.from('~"naïve"\n');
      const split = text.indexOf(0xc3) + 1;
      appendFileSync(file, text.subarray(0, split));
      tail.drain();
      appendFileSync(file, text.subarray(split));
      tail.drain();
      expect(lines).toEqual(['~"naïve"']);
      writeFileSync(file, "1^done\n");
      tail.drain();
      expect(lines).toEqual(['~"naïve"', "1^done"]);
      expect(tail.length).toBe(7);
    } finally {
      tail.close();
    }
  });
});
