/**
 * Reader of `r`: `name=value` pairs, several to a line (`rax=0000000000000000 rbx=...`), the flags
 * line (`iopl=0  nv up ei pl zr na po nc`), the segment line with `efl=`, then the symbol and the
 * instruction at the pc, which give the pc its natural rendering (`0x... <prog!f+0x12>`).
 */
import type { Register } from "../../model.js";
import { bounded, cdbAddress, lines } from "./common.js";

const PAIR = /(?:^|\s)(\$?[a-z][a-z0-9]*)=([0-9a-f`]+)(?=\s|$)/gi;
/** Registers an `r` listing holds at most (x64 with segments and flags). */
const MAX_REGISTERS = 256;

export function parseRegisters(output: string): Register[] {
  const registers: Register[] = [];
  let symbol: string | null = null;
  for (const line of lines(output)) {
    const label = /^(\S+!\S+|\S+\+0x[0-9a-f]+):$/i.exec(line.trim());
    if (label) {
      symbol = bounded(label[1] ?? "");
      continue;
    }
    for (const pair of line.matchAll(PAIR)) {
      if (registers.length >= MAX_REGISTERS) break;
      const value = cdbAddress(pair[2]);
      const name = (pair[1] ?? "").toLowerCase();
      // `iopl=0` is a field of the flags, not a register.
      if (value === null || name === "iopl") continue;
      registers.push({ name, value, natural: value });
    }
  }
  // The pc's symbol, as gdb prints it next to the value.
  const pc = registers.find((register) => /^(?:rip|eip|\$ip)$/.test(register.name));
  if (pc && symbol) pc.natural = `${pc.value} <${symbol}>`;
  return registers;
}
