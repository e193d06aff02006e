/**
 * CPython's objects as a stack walk reads them from memory: a str (compact, as every name and file
 * of code is), a bytes, a code object. Each is checked to be of its type (its type pointer is the
 * interpreter's own type object) before its fields are believed, and every length is bounded: what
 * cannot be read is a reason, never a made-up value.
 */
import type { PythonLayout } from "./layouts.js";
import type { ProcessMemory } from "./memory.js";

/** Where the interpreter's type objects are in the process: what an object of each type points to. */
export interface TypeAddresses {
  code: bigint;
  str: bigint;
  bytes: bigint;
}

/** Something read, or why it could not be. */
export type Read<T> = { value: T } | { why: string };

/** A name or path longer than this is cut, with an ellipsis. */
export const MAX_STRING_CHARS = 1024;
/** A line table of more is not read: the largest functions' tables are tens of KiB. */
const MAX_LINE_TABLE_BYTES = 256 * 1024;

const KIND_SHIFT = 2;
const COMPACT = 0x20;
const ASCII = 0x40;

export interface CodeObject {
  function: Read<string>;
  file: Read<string>;
  firstLine: number;
  /** The instructions before this one set the frame up: a frame there has not started. */
  firstTraceable: number;
  /** Where the first instruction is. */
  instructions: bigint;
  lineTable: Read<Buffer>;
  /** Where each handler's range is, and how deep the value stack is kept there. */
  exceptionTable: Read<Buffer>;
  /** How many locals, cells and free variables come before the value stack, and how deep that stack may grow. */
  localsCount: number;
  stackSize: number;
  /** The tuple of those locals' names. */
  localNames: bigint;
}

export function hexAddress(address: bigint): string {
  return `0x${address.toString(16)}`;
}

/** A pointer-sized field (8 bytes: the layouts are of 64-bit builds). */
export function pointerAt(bytes: Buffer, at: number): bigint {
  return bytes.readBigUInt64LE(at);
}

/** The object at `address` if its type is `type`: its first `size` bytes. */
function objectOf(memory: ProcessMemory, layout: PythonLayout, address: bigint, size: number, type: bigint, what: string): Read<Buffer> {
  if (address === 0n) return { why: `${what} is NULL` };
  const bytes = memory.read(address, size);
  if (bytes === null) return { why: `${what} at ${hexAddress(address)} is not in the core` };
  if (pointerAt(bytes, layout.objectType) !== type) return { why: `${what} at ${hexAddress(address)} is not one (its type is ${hexAddress(pointerAt(bytes, layout.objectType))})` };
  return { value: bytes };
}

/** A str's text: compact ASCII, or compact Latin-1, UCS-2 or UCS-4, cut at MAX_STRING_CHARS. */
export function readString(memory: ProcessMemory, layout: PythonLayout, types: TypeAddresses, address: bigint, what: string): Read<string> {
  const { unicode } = layout;
  const header = objectOf(memory, layout, address, unicode.compactData, types.str, `${what} (a str)`);
  if ("why" in header) return header;
  const length = header.value.readBigInt64LE(unicode.length);
  const state = header.value[unicode.state] as number;
  const kind = (state >> KIND_SHIFT) & 7;
  if (length < 0n) return { why: `${what} at ${hexAddress(address)} has a negative length` };
  if ((state & COMPACT) === 0) return { why: `${what} at ${hexAddress(address)} is not a compact str, which code's names always are` };
  if (kind !== 1 && kind !== 2 && kind !== 4) return { why: `${what} at ${hexAddress(address)} has characters of ${kind} bytes` };
  if ((state & ASCII) !== 0 && kind !== 1) return { why: `${what} at ${hexAddress(address)} says it is ASCII in ${kind}-byte characters` };
  const cut = length > BigInt(MAX_STRING_CHARS);
  const count = cut ? MAX_STRING_CHARS : Number(length);
  const start = (state & ASCII) !== 0 ? unicode.asciiData : unicode.compactData;
  const data = memory.read(address + BigInt(start), count * kind);
  if (data === null) return { why: `the text of ${what} at ${hexAddress(address)} is not in the core` };
  const text = decode(data, kind, (state & ASCII) !== 0);
  if (text === null) return { why: `${what} at ${hexAddress(address)} holds characters its kind cannot` };
  return { value: cut ? `${text}…` : text };
}

function decode(data: Buffer, kind: number, ascii: boolean): string | null {
  if (kind === 1) {
    if (ascii && data.some((byte) => byte >= 0x80)) return null;
    return data.toString("latin1");
  }
  const points: number[] = [];
  for (let at = 0; at < data.length; at += kind) {
    const point = kind === 2 ? data.readUInt16LE(at) : data.readUInt32LE(at);
    if (point > 0x10ffff) return null;
    points.push(point);
  }
  return String.fromCodePoint(...points);
}

/** A bytes object's content, up to `limit` bytes. */
export function readBytes(memory: ProcessMemory, layout: PythonLayout, types: TypeAddresses, address: bigint, limit: number, what: string): Read<Buffer> {
  const header = objectOf(memory, layout, address, layout.bytes.data, types.bytes, `${what} (a bytes)`);
  if ("why" in header) return header;
  const size = header.value.readBigInt64LE(layout.bytes.size);
  if (size < 0n || size > BigInt(limit)) return { why: `${what} at ${hexAddress(address)} claims ${size} bytes` };
  const data = memory.read(address + BigInt(layout.bytes.data), Number(size));
  return data === null ? { why: `the bytes of ${what} at ${hexAddress(address)} are not in the core` } : { value: data };
}

/** A code object's names, file, first line and line table. */
export function readCode(memory: ProcessMemory, layout: PythonLayout, types: TypeAddresses, address: bigint): Read<CodeObject> {
  const { code } = layout;
  const object = objectOf(memory, layout, address, code.size, types.code, "the frame's code object");
  if ("why" in object) return object;
  const bytes = object.value;
  const qualname = readString(memory, layout, types, pointerAt(bytes, code.qualname), "the function's qualified name");
  return {
    value: {
      function: "why" in qualname ? readString(memory, layout, types, pointerAt(bytes, code.name), "the function's name") : qualname,
      file: readString(memory, layout, types, pointerAt(bytes, code.filename), "the code's file name"),
      firstLine: bytes.readInt32LE(code.firstLine),
      firstTraceable: bytes.readInt32LE(code.firstTraceable),
      instructions: address + BigInt(code.codeAdaptive),
      lineTable: readBytes(memory, layout, types, pointerAt(bytes, code.lineTable), MAX_LINE_TABLE_BYTES, "the code's line table"),
      exceptionTable: readBytes(memory, layout, types, pointerAt(bytes, code.exceptionTable), MAX_LINE_TABLE_BYTES, "the code's exception table"),
      localsCount: bytes.readInt32LE(code.localsPlusCount),
      stackSize: bytes.readInt32LE(code.stackSize),
      localNames: pointerAt(bytes, code.localsPlusNames),
    },
  };
}
