/**
 * Readers of cdb's values, written into the model in gdb's one-line C form that the analyzers read
 * for every backend: `0n42` → `42`, a pointer `struct config * 0x00000000`00000000` → `(struct
 * config *) 0x0`, a string pointer keeps its text, a structure's `+0x008 port : 0n80` members →
 * `{port = 80}`.
 */
import type { Variable } from "../../model.js";
import { bounded, cdbAddress, lines } from "./common.js";

/** Variables read from one listing. */
const MAX_VARIABLES = 10_000;

/** A scalar as cdb prints it, in C's spelling; the text itself when it is not one. */
function scalar(text: string, hex = false): string {
  const trimmed = text.trim();
  const decimal = /^0n(-?\d+)(\s+.*)?$/.exec(trimmed);
  if (decimal) {
    const value = BigInt(decimal[1] ?? "0");
    const shown = hex && value >= 0n ? `0x${value.toString(16)}` : value.toString();
    return `${shown}${decimal[2] ?? ""}`;
  }
  const address = /^((?:0x)?[0-9a-f]{8}`[0-9a-f]{8}|0x[0-9a-f]+)(\s+.*)?$/i.exec(trimmed);
  if (address) return `${cdbAddress(address[1]) ?? address[1]}${address[2] ? ` ${address[2].trim()}` : ""}`;
  return trimmed;
}

/** A typed value: pointers carry their type as gdb prints them, `(struct config *) 0x0`. */
function typed(type: string, value: string, hex = false): string {
  const text = scalar(value, hex);
  return /\*\s*$/.test(type) && /^0x[0-9a-f]+$/.test(text) ? `(${type.trim()}) ${text}` : text;
}

/**
 * `dv /i /t /v`: `prv param  @rcx  struct config * cfg = 0x00000000`00000000`, `prv local
 * 00000000`0014f9f0 int port = 0n0`. `which` keeps the parameters or the locals.
 */
export function parseVariables(output: string, which: "locals" | "arguments"): Variable[] {
  const variables: Variable[] = [];
  for (const line of lines(output)) {
    if (variables.length >= MAX_VARIABLES) break;
    const kind = /^\s*(?:prv|pub)\s+(param|local|global|function|unknown)\s+/i.exec(line);
    if (!kind) continue;
    if ((kind[1]?.toLowerCase() === "param") !== (which === "arguments")) continue;
    let rest = line.slice(kind[0].length);
    let location: RegExpExecArray | null;
    while ((location = /^(?:[0-9a-f]{8}`?[0-9a-f]{0,8}|@\w+(?:[+-]0x[0-9a-f]+)?)\s+/i.exec(rest))) rest = rest.slice(location[0].length);
    const equals = rest.indexOf(" = ");
    if (equals < 0) continue;
    const declaration = rest.slice(0, equals).trim();
    const name = /([A-Za-z_$<>][\w$<>.]*)$/.exec(declaration)?.[1];
    if (!name) continue;
    const type = declaration.slice(0, declaration.length - name.length);
    variables.push({ name: bounded(name), value: bounded(typed(type, rest.slice(equals + 3))) });
  }
  return variables;
}

/**
 * `?? EXPR`: `int 0n8080`, `struct session * 0x000001f2`a3b4c5d0`, or a structure's type line and
 * its members; null when cdb printed no value.
 */
export function parseEvaluation(output: string, hex = false): string | null {
  const all = lines(output).filter((line) => line.trim() !== "");
  const first = all[0];
  if (first === undefined || /error|Couldn't resolve/i.test(first)) return null;
  const members: string[] = [];
  for (const line of all.slice(1)) {
    const member = /^\s*\+0x[0-9a-f]+\s+(\S+)\s+:\s?(.*)$/i.exec(line);
    if (member) members.push(`${member[1]} = ${scalar(member[2] ?? "", hex)}`);
  }
  if (members.length > 0) return bounded(`{${members.join(", ")}}`);
  const value = /^(.*?)\s*((?:0x)?[0-9a-f]{8}`[0-9a-f]{8}|0x[0-9a-f]+|0n-?\d+)(\s+.*)?$/i.exec(first.trim());
  if (!value) return bounded(first.trim());
  return bounded(typed(value[1] ?? "", `${value[2]}${value[3] ?? ""}`, hex));
}
