/** The registers that locate a crash, by architecture-neutral role, from any backend's register list. */
import type { KeyRegisters, Register } from "../debuggers/model.js";

export function keyRegisters(registers: Register[]): KeyRegisters {
  const value = (...names: string[]) => registers.find((r) => names.includes(r.name))?.value ?? null;
  return { pc: value("rip", "pc", "eip"), sp: value("rsp", "sp", "esp"), fp: value("rbp", "x29", "fp", "ebp") };
}
