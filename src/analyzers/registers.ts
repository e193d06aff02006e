/** Parser for `info registers` (and `info registers rip rsp ...`, `info all-registers`). */
import { lines } from "./gdb-text.js";

export interface Register {
  name: string;
  /** The raw value, as gdb prints it in hex. */
  value: string;
  /** gdb's natural rendering: decimal, a symbol (`0x... <leaf+12>`) or flag names. */
  natural: string;
}

export function parseRegisters(output: string): Register[] {
  const registers: Register[] = [];
  for (const line of lines(output)) {
    const match = /^([a-z][a-z0-9_.]*)\s+(0x[0-9a-f]+|-?\d+)\s+(.*)$/.exec(line);
    if (match) registers.push({ name: match[1] ?? "", value: match[2] ?? "", natural: (match[3] ?? "").trim() });
  }
  return registers;
}

/** The registers that locate a crash, by architecture-neutral role. */
export function keyRegisters(registers: Register[]): { pc: string | null; sp: string | null; fp: string | null } {
  const value = (...names: string[]) => registers.find((r) => names.includes(r.name))?.value ?? null;
  return { pc: value("rip", "pc", "eip"), sp: value("rsp", "sp", "esp"), fp: value("rbp", "x29", "fp", "ebp") };
}
