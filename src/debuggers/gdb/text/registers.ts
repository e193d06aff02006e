/** Parser for `info registers` (and `info registers rip rsp ...`, `info all-registers`). */
import type { Register } from "../../model.js";
import { lines } from "./common.js";


export function parseRegisters(output: string): Register[] {
  const registers: Register[] = [];
  for (const line of lines(output)) {
    const match = /^([a-z][a-z0-9_.]*)\s+(0x[0-9a-f]+|-?\d+)\s+(.*)$/.exec(line);
    if (match) registers.push({ name: match[1] ?? "", value: match[2] ?? "", natural: (match[3] ?? "").trim() });
  }
  return registers;
}
