/** Reading the values a debugger printed (C-like value text), for the playbooks' rules. */
import { unquoteCString } from "../../debuggers/c-text.js";
import { toBigInt, type Register, type SourceLine, type Variable } from "../../debuggers/model.js";
import type { Found } from "../evidence.js";

/** The value an evaluation or a register read printed; null when it failed or printed none. */
export function printed(found: Found | null): string | null {
  if (!found?.ok || (found.probe.kind !== "evaluate" && found.probe.kind !== "register")) return null;
  return typeof found.reading === "string" ? found.reading : null;
}

/** A pointer value, with or without a type prefix and symbol suffix: `(T *) 0x0`, `0x5555 <sym>`. */
export function pointerOf(value: string | null): bigint | null {
  if (value === null) return null;
  const match = /^(?:@0x[0-9a-f]+:\s*)?(?:\([^()]*(?:\([^()]*\)[^()]*)*\)\s*)?(0x[0-9a-f]+)\b/.exec(value.trim());
  return match ? toBigInt(match[1] ?? null) : null;
}

/** An integer value (`64`, `-1`, `0x40`), or null when the value is not one. */
export function integerOf(value: string | null): bigint | null {
  if (value === null) return null;
  const match = /^(?:\([^)]*\)\s*)?(-?(?:0x[0-9a-f]+|\d+))(?:\s+'.*')?$/.exec(value.trim());
  if (!match) return null;
  const text = match[1] ?? "";
  return text.startsWith("-") ? -BigInt(text.slice(1)) : BigInt(text);
}

/** The text of a C string gdb printed (`0x55 "text"`, `"text"`), or a C++ std::string's `_M_p` text. */
export function stringOf(value: string | null): string | null {
  if (value === null) return null;
  const stdString = /_M_p = 0x[0-9a-f]+ ("(?:[^"\\]|\\.)*")/.exec(value);
  if (stdString) return unquoteCString(stdString[1] ?? "");
  const quoted = /^(?:0x[0-9a-f]+\s+)?("(?:[^"\\]|\\.)*".*)$/.exec(value.trim());
  return quoted ? unquoteCString(quoted[1] ?? "") : null;
}

/** The value of one field of a struct gdb printed (`{id = 1, client = 0x0}` → client: `0x0`). */
export function fieldOf(value: string | null, field: string): string | null {
  if (value === null) return null;
  const at = new RegExp(`[{,]\\s*${field.replace(/[$.]/g, "\\$&")} = `).exec(value);
  if (!at) return null;
  let depth = 0;
  let quote = false;
  const start = at.index + at[0].length;
  for (let i = start; i < value.length; i++) {
    const ch = value[i];
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === '"') quote = false;
    } else if (ch === '"') quote = true;
    else if (ch === "{" || ch === "(") depth++;
    else if ((ch === "}" || ch === ")") && depth === 0) return value.slice(start, i).trim();
    else if (ch === "}" || ch === ")") depth--;
    else if (ch === "," && depth === 0) return value.slice(start, i).trim();
  }
  return value.slice(start).trim();
}

/** The variables a locals or arguments probe read; none when it failed. */
export function variablesOf(found: Found | null): Variable[] {
  if (!found?.ok || (found.probe.kind !== "locals" && found.probe.kind !== "arguments")) return [];
  return (found.reading as Variable[] | null) ?? [];
}

/** Those variables as one line of prose: `a = 1, b = 0x0`; null when there are none. */
export function variablesText(found: Found | null): string | null {
  const variables = variablesOf(found);
  return variables.length ? variables.map((v) => `${v.name} = ${v.value}`).join(", ") : null;
}

/** The text of the source lines a source probe listed, one per line; null when it failed. */
export function sourceTextOf(found: Found | null): string | null {
  if (!found?.ok || found.probe.kind !== "source") return null;
  return ((found.reading as SourceLine[] | null) ?? []).map((row) => row.text).join("\n");
}

/** The registers a registers probe read, by name. */
export function registersOf(found: Found | null): Map<string, bigint> {
  const registers = new Map<string, bigint>();
  if (!found?.ok || found.probe.kind !== "registers") return registers;
  for (const register of found.reading as Register[]) {
    const value = toBigInt(register.value);
    if (value !== null) registers.set(register.name, value);
  }
  return registers;
}


export function hex(value: bigint): string {
  return `0x${value.toString(16)}`;
}

/** Bytes of a 64-bit little-endian word as text, when every byte is printable ASCII. */
export function asciiOfWord(word: bigint): string | null {
  let text = "";
  for (let i = 0n; i < 8n; i++) {
    const byte = Number((word >> (i * 8n)) & 0xffn);
    if (byte < 0x20 || byte > 0x7e) return null;
    text += String.fromCharCode(byte);
  }
  return text;
}

/** Fill patterns of allocators, debuggers and sanitizers, and the classic sentinel values. */
export function looksPoisoned(value: bigint): boolean {
  const text = value.toString(16);
  return /deadbeef|baadf00d|feeefeee|cdcdcdcd|abababab|cccccccc|41414141|a5a5a5a5|5a5a5a5a|fdfdfdfd|dddddddd/.test(text);
}
