/** Parser for `x/i`, `x/Ni` and `disassemble` (x86-64, AT&T syntax: gdb's default). */
import type { Disassembly, Instruction } from "../../model.js";
import { lines, normalizeAddress } from "./common.js";
import { splitOperands } from "../../att-text.js";

export function parseDisassembly(output: string): Disassembly {
  const instructions: Instruction[] = [];
  let fn: string | null = null;
  let unreadable = false;
  for (const line of lines(output)) {
    const header = /^Dump of assembler code for function (.*):$/.exec(line);
    if (header) fn = header[1] ?? null;
    if (/Cannot access memory at address/.test(line)) unreadable = true;
    const row = /^(=>)?\s*(0x[0-9a-f]+)(?: <([^>]*)>)?:\t(.*)$/.exec(line);
    if (!row) continue;
    const text = (row[4] ?? "").trim();
    // Through MI the error goes to the result record and the console keeps only `=> 0x0:\t`.
    if (text === "" || /^Cannot access memory/.test(text)) {
      unreadable = true;
      continue;
    }
    const comment = /\s+# (0x[0-9a-f]+)(?: <(.*)>)?$/.exec(text);
    const code = comment ? text.slice(0, comment.index) : text;
    const words = code.trim().split(/\s+/);
    while (words.length > 1 && PREFIXES.has(words[0] ?? "")) words.shift();
    const [mnemonic = "", ...rest] = words;
    instructions.push({
      address: normalizeAddress(row[2] ?? "0"),
      location: row[3] ?? null,
      mnemonic,
      operands: splitOperands(rest.join(" ")),
      reference: comment ? { address: normalizeAddress(comment[1] ?? "0"), symbol: comment[2] ?? null } : null,
      current: row[1] === "=>",
    });
  }
  return { function: fn, instructions, unreadable };
}

const PREFIXES = new Set(["rep", "repz", "repe", "repnz", "repne", "lock", "notrack", "bnd", "data16", "addr32", "cs", "ds"]);
