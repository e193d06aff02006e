/** Parser for `register read` (and `register read rip rsp`, `register read pc`). */
import type { Register } from "../../model.js";
import { normalizeAddress } from "../../model.js";

/** `       rip = 0x000055b5780cc1e7  prog\`send_to_client + 25 at f.c:27:9` per register. */
export function parseRegisters(output: string): Register[] {
  const registers: Register[] = [];
  for (const line of output.split("\n")) {
    const match = /^\s+([a-z][a-z0-9_]*) = (0x[0-9a-f]+)(?:\s+(.*))?$/.exec(line);
    if (!match) continue;
    const value = normalizeAddress(match[2] ?? "0x0");
    const symbol = match[3]?.trim();
    registers.push({ name: match[1] ?? "", value, natural: symbol ? `${value} <${symbolOf(symbol)}>` : BigInt(value).toString() });
  }
  return registers;
}

/** `prog\`send_to_client + 25 at f.c:27:9` → `send_to_client+25`. */
function symbolOf(text: string): string {
  const match = /^(?:\S+?`)?(.*?)(?: \+ (\d+))?(?: at \S+)?$/.exec(text);
  return match ? `${match[1] ?? ""}${match[2] ? `+${match[2]}` : ""}` : text;
}
