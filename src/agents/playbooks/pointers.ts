/**
 * The pointers a faulting line reads through, most likely first, and what the faulting
 * instruction's base register held: the suspects of a NULL or wild access.
 */
import { fullRegister, memoryOperand } from "../../analyzers/index.js";
import { debuggerLevel } from "../../debuggers/model.js";
import { probes, type EvaluateProbe } from "../../debuggers/probe.js";
import type { Evidence } from "../evidence.js";
import type { Facts } from "./facts.js";
import { dereferences, identifiers, passedPointers } from "./source.js";
import { pointerOf, registersOf } from "./values.js";

export const NULL_PAGE = 0x10000n;

export interface Suspect {
  /** The pointer expression, valid in the culprit frame (`session->client`, `this`, `node`). */
  pointer: string;
  /** The field read or written through it, when the line names it. */
  member: string | null;
  /** The struct holding the pointer (`session` for `session->client`). */
  owner: string | null;
  /** The function the culprit passed the pointer to, when the fault is inside that callee (`strlen`). */
  passedTo: string | null;
}

/** The pointers the culprit may have faulted on, most likely first. */
export function suspects(facts: Facts): Suspect[] {
  const list: Suspect[] = [];
  const add = (suspect: Suspect) => {
    if (!list.some((s) => s.pointer === suspect.pointer)) list.push(suspect);
  };
  // An argument the backtrace already shows as NULL (`this=0x0`) is the strongest lead.
  for (const [name, value] of facts.args) {
    if (pointerOf(value) === 0n) add({ pointer: name, member: implicitMember(facts, name), owner: null, passedTo: null });
  }
  const ownerOf = (pointer: string) => (pointer.includes("->") ? pointer.slice(0, pointer.lastIndexOf("->")) : null);
  // The fault is in a function the culprit called (strlen, memcpy, a library): what the line
  // passed to it is the lead, more than what the line itself reads.
  if ((facts.culprit?.level ?? 0) > 0) {
    for (const { callee, pointer } of passedPointers(facts.line ?? "")) add({ pointer, member: null, owner: ownerOf(pointer), passedTo: callee });
  }
  for (const { pointer, member } of dereferences(facts.line ?? "")) {
    const shown = facts.args.get(pointer);
    if (shown !== undefined && (pointerOf(shown) ?? 0n) !== 0n) continue;
    add({ pointer, member, owner: ownerOf(pointer), passedTo: null });
  }
  return list;
}

/** A method reads a member without naming `this`: the identifier on the line that is not an argument. */
function implicitMember(facts: Facts, pointer: string): string | null {
  if (pointer !== "this" || facts.line === null) return null;
  const names = identifiers(facts.line).filter((name) => !facts.args.has(name));
  return names.find((name) => /_$|^m_/.test(name)) ?? names[0] ?? null;
}

export const isRust = (facts: Facts) => /\.rs$/.test(facts.culprit?.file ?? "");

export function memberAddress(facts: Facts, suspect: Suspect): EvaluateProbe | null {
  if (suspect.member === null) return null;
  return facts.inCulprit(probes.evaluate(isRust(facts) ? `&(*${suspect.pointer}).${suspect.member}` : `&${suspect.pointer}->${suspect.member}`));
}

/** The faulting instruction's base register and its value, from triage's faulting instruction and registers. */
export function faultingBase(facts: Facts, evidence: Evidence) {
  const instruction = evidence.find(facts.fault.instruction);
  const registers = evidence.find(facts.fault.registers);
  const operand = memoryOperand(facts.triage.instruction);
  // The culprit must be the frame that faulted: its registers are the ones the instruction used.
  if (!operand?.base || !facts.culprit || debuggerLevel(facts.culprit) !== facts.fault.frame) return null;
  const value = registersOf(registers).get(fullRegister(operand.base));
  return value === undefined ? null : { register: operand.shown ?? operand.base, operand: operand.text, value, displacement: operand.displacement, instruction, registers };
}
