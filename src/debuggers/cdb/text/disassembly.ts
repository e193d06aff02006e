/**
 * Reader of `u` and `uf`: cdb prints Intel syntax (`mov eax,dword ptr [rax+20h]`), the model holds
 * AT&T (`mov 0x20(%rax),%eax`: sources first, registers with `%`, immediates with `$`), which the
 * x86 analyzers read for every backend. Direct targets and rip-relative operands come with their
 * symbol in parentheses (`call prog!helper (00007ff6`1a2b1100)`): that is the instruction's reference.
 */
import { splitOperands } from "../../att-text.js";
import type { Disassembly, Instruction } from "../../model.js";
import { bounded, cdbAddress, cdbNumber, lines, parseLocation } from "./common.js";

/** Instructions read from one listing. */
const MAX_INSTRUCTIONS = 20_000;

/** `   12 00007ff6`1a2b1012 8b4020          mov     eax,dword ptr [rax+20h]`; the line number is there with `-lines`. */
const ROW = /^(?:\s*\d+\s+)?([0-9a-f]{8}`?[0-9a-f]{0,8})\s+([0-9a-f]+|\?\?)\s+(.*)$/i;
/** A label line: `prog!listen_port+0x12 [C:\src\prog.c @ 12]:` or `prog!listen_port:`. */
const LABEL = /^(\S.*?):$/;
const PREFIXES = new Set(["rep", "repe", "repz", "repne", "repnz", "lock", "notrack", "bnd"]);
/** A symbol with its address in parentheses: `prog!helper (00007ff6`1a2b1100)`. */
const SYMBOL_REF = /^(.*?)\s*\(([0-9a-f]{8}`?[0-9a-f]{0,8})\)$/i;

export function parseDisassembly(output: string, firstIsCurrent = false): Disassembly {
  const instructions: Instruction[] = [];
  let fn: string | null = null;
  let location: string | null = null;
  let unreadable = false;
  for (const line of lines(output)) {
    if (instructions.length >= MAX_INSTRUCTIONS) break;
    const label = LABEL.exec(line.trim());
    if (label && !ROW.test(line)) {
      const place = parseLocation(label[1] ?? "");
      if (place.function) {
        fn ??= place.function;
        location = `${place.function}${place.offset ? `+${place.offset}` : ""}`;
      }
      continue;
    }
    const row = ROW.exec(line);
    if (!row) continue;
    const address = cdbAddress(row[1]);
    const text = (row[3] ?? "").trim();
    if (address === null) continue;
    if (row[2] === "??" || /^\?\?\?/.test(text)) {
      unreadable = true;
      continue;
    }
    instructions.push({ address, location, ...toAtt(text), current: firstIsCurrent && instructions.length === 0 });
    location = null;
  }
  // Memory cdb could not read: no instruction, and its `??` bytes.
  if (instructions.length === 0 && /\?\?\?|Memory access error/.test(output)) unreadable = true;
  return { function: fn, instructions, unreadable };
}

/** One instruction's text in the model's AT&T spelling, with the address and symbol it names. */
function toAtt(text: string): Pick<Instruction, "mnemonic" | "operands" | "reference"> {
  const words = bounded(text).split(/\s+/);
  while (words.length > 1 && PREFIXES.has(words[0] ?? "")) words.shift();
  const mnemonic = (words.shift() ?? "").toLowerCase();
  const rest = words.join(" ").replace(/\s+[a-z]s:[0-9a-f`]+=\S*$/i, "");
  let reference: Instruction["reference"] = null;
  const branch = /^(call|j[a-z]*|loop\w*)$/.test(mnemonic);
  const operands = splitOperands(rest).map((operand) => {
    const converted = convertOperand(operand, branch);
    if (converted.reference) reference = converted.reference;
    return converted.text;
  });
  return { mnemonic, operands: operands.reverse(), reference };
}

const REGISTER = /^(?:[re]?[abcd]x|[abcd][lh]|[re]?(?:si|di|sp|bp|ip)|[sd]il|[sb]pl|r(?:[89]|1[0-5])[dwb]?|[c-gs]s|[xyz]mm\d{1,2}|k[0-7]|st(?:\(\d\))?|cr\d|dr\d)$/i;

function hex(value: bigint): string {
  return value < 0n ? `-0x${(-value).toString(16)}` : `0x${value.toString(16)}`;
}

function convertOperand(operand: string, branch: boolean): { text: string; reference: Instruction["reference"] } {
  let text = operand.trim();
  if (REGISTER.test(text)) return { text: `${branch ? "*" : ""}%${text.toLowerCase()}`, reference: null };
  // A direct target: `prog!helper (00007ff6`1a2b1100)`, or a bare address.
  const symbolic = SYMBOL_REF.exec(text);
  if (symbolic && !text.includes("[")) {
    const address = cdbAddress(symbolic[2]) ?? "0x0";
    return { text: address, reference: { address, symbol: parseLocation(symbolic[1] ?? "").function } };
  }
  if (!text.includes("[")) {
    const value = cdbNumber(text);
    if (value === null) return { text, reference: null };
    return branch ? { text: hex(value), reference: null } : { text: `$${hex(value)}`, reference: null };
  }
  // Memory: `qword ptr gs:[30h]`, `dword ptr [rax+rcx*4+10h]`, `qword ptr [prog!_imp_puts (00007ff6`1a2c2000)]`.
  text = text.replace(/^(?:byte|word|dword|qword|xmmword|ymmword|zmmword|tbyte|fword|oword|mmword) ptr\s+/i, "");
  const segment = /^([a-z]s):/i.exec(text);
  if (segment) text = text.slice(segment[0].length);
  const inner = /^\[(.*)\]$/.exec(text)?.[1]?.trim() ?? text;
  const star = branch ? "*" : "";
  const prefix = segment ? `%${segment[1]?.toLowerCase()}:` : "";
  const named = SYMBOL_REF.exec(inner);
  if (named) {
    const address = cdbAddress(named[2]) ?? "0x0";
    return { text: `${star}${prefix}${address}`, reference: { address, symbol: parseLocation(named[1] ?? "").function } };
  }
  let base: string | null = null;
  let index: string | null = null;
  let scale = 1;
  let displacement = 0n;
  for (const term of inner.replace(/\s+/g, "").replace(/-/g, "+-").split("+").filter(Boolean)) {
    const scaled = /^([a-z0-9]+)\*(\d)$/i.exec(term);
    if (scaled && REGISTER.test(scaled[1] ?? "")) {
      index = scaled[1]?.toLowerCase() ?? null;
      scale = Number(scaled[2]);
    } else if (REGISTER.test(term)) {
      if (base === null) base = term.toLowerCase();
      else index = term.toLowerCase();
    } else {
      displacement += cdbNumber(term) ?? 0n;
    }
  }
  const registers = base === null && index === null ? "" : `(${base ? `%${base}` : ""}${index ? `,%${index},${scale}` : ""})`;
  const offset = displacement === 0n && registers !== "" ? "" : hex(displacement);
  return { text: `${star}${prefix}${offset}${registers}`, reference: null };
}
