/**
 * CPython's objects as values, read from a process's memory for what a person at a debugger asks
 * of a Python frame: what type each object is (by its type's name), its short repr for a local, a
 * dict's entries and an instance's attributes (to name a lock by the variable that holds it), and
 * the locks of `_thread` (whether a Lock is held; which thread holds an RLock). Every pointer is
 * checked before it is followed and every count bounded; what cannot be read is null, never a guess.
 */
import type { PythonLayout } from "./layouts.js";
import type { ProcessMemory } from "./memory.js";
import { hexAddress, pointerAt, readBytes, readString, type TypeAddresses } from "./objects.js";

/** The interpreter's own objects a value may be or be of, beside those a stack walk needs. */
export interface ValueAddresses extends TypeAddresses {
  tuple: bigint;
  list: bigint;
  dict: bigint;
  long: bigint;
  float: bigint;
  builtinMethod: bigint;
  boundMethod: bigint;
  none: bigint;
  true: bigint;
  false: bigint;
}

/** A lock of `_thread` (what `threading.Lock()` and `threading.RLock()` make), as it stood in the core. */
export interface PythonLock {
  address: string;
  /** `threading.Lock`, `threading.RLock`. */
  type: string;
  /** Whether it was held; null where its state could not be read. */
  locked: boolean | null;
  /** An RLock's holder, its thread's ident (`threading.get_ident()`); null for a Lock, which does not record one. */
  owner: bigint | null;
}

/** A repr longer than this is cut, with an ellipsis. */
export const MAX_REPR_CHARS = 200;
/** A type's name longer than this is not believed. */
const MAX_TYPE_NAME = 128;
/** Entries of a dict read at most, to find a name. */
const MAX_DICT_ENTRIES = 20_000;
const BYTES_SHOWN = 64;

const LOCK_TYPES: Record<string, string> = { "_thread.lock": "threading.Lock", "_thread.RLock": "threading.RLock" };
/** threading's lock-like classes and the attribute holding the lock they take. */
const LOCK_HOLDERS: Record<string, string> = { Condition: "_lock", Semaphore: "_cond", BoundedSemaphore: "_cond", Event: "_cond", Barrier: "_cond" };

export class PythonObjects {
  private readonly typeNames = new Map<bigint, string | null>();

  constructor(
    readonly memory: ProcessMemory,
    readonly layout: PythonLayout,
    readonly types: ValueAddresses,
  ) {}

  pointer(address: bigint): bigint | null {
    const bytes = this.memory.read(address, 8);
    return bytes === null ? null : pointerAt(bytes, 0);
  }

  typeOf(address: bigint): bigint | null {
    return address === 0n ? null : this.pointer(address + BigInt(this.layout.objectType));
  }

  /** The name of the object's type (`_thread.lock`, `Condition`, `int`); null where it is not an object the core shows. */
  typeName(address: bigint): string | null {
    const type = this.typeOf(address);
    if (type === null || type === 0n) return null;
    if (!this.typeNames.has(type)) this.typeNames.set(type, this.cString(this.pointer(type + BigInt(this.layout.type.name))));
    return this.typeNames.get(type) ?? null;
  }

  /** A type object's own name (`ValueError`): its `tp_name`, where it is a type the core shows. */
  typeObjectName(type: bigint): string | null {
    return this.cString(this.pointer(type + BigInt(this.layout.type.name)));
  }

  /** A C string of a type's name: printable ASCII, NUL-ended within MAX_TYPE_NAME. */
  private cString(address: bigint | null): string | null {
    if (address === null || address === 0n) return null;
    for (let length = 16; length <= MAX_TYPE_NAME; length *= 2) {
      const bytes = this.memory.read(address, length) ?? this.memory.read(address, 1) ?? null;
      if (bytes === null) return null;
      const end = bytes.indexOf(0);
      if (end >= 0) {
        const text = bytes.subarray(0, end).toString("latin1");
        return /^[\x21-\x7e]+$/.test(text) ? text : null;
      }
      if (bytes.length < length) return null;
    }
    return null;
  }

  text(address: bigint): string | null {
    const read = readString(this.memory, this.layout, this.types, address, "a str");
    return "value" in read ? read.value : null;
  }

  /** A tuple's items, up to `limit`; null where it is no tuple. */
  tupleItems(address: bigint, limit: number): bigint[] | null {
    if (this.typeOf(address) !== this.types.tuple) return null;
    const size = this.memory.read(address + BigInt(this.layout.tuple.size), 8)?.readBigInt64LE(0) ?? null;
    if (size === null || size < 0n) return null;
    const count = Math.min(Number(size), limit);
    const items = this.memory.read(address + BigInt(this.layout.tuple.items), count * 8);
    return items === null ? null : Array.from({ length: count }, (_, i) => pointerAt(items, i * 8));
  }

  /** A dict's keys and values in insertion order (str keys only: those are what names are), up to MAX_DICT_ENTRIES; null where it is no dict the core shows. */
  dictEntries(address: bigint): { key: string; value: bigint }[] | null {
    if (this.typeOf(address) !== this.types.dict) return null;
    const { dict } = this.layout;
    const header = this.memory.read(address, dict.values + 8);
    if (header === null) return null;
    return this.keyEntries(pointerAt(header, dict.keys), pointerAt(header, dict.values));
  }

  /** The entries of a dict's keys object, their values in `values` where the dict is split (an instance's). */
  private keyEntries(keys: bigint, values: bigint): { key: string; value: bigint }[] | null {
    const { dictKeys } = this.layout;
    const header = keys === 0n ? null : this.memory.read(keys, dictKeys.indices);
    if (header === null) return null;
    const log2Size = header[dictKeys.log2Size] as number;
    const log2IndexBytes = header[dictKeys.log2IndexBytes] as number;
    const kind = header[dictKeys.kind] as number;
    const count = header.readBigInt64LE(dictKeys.entryCount);
    if (log2Size > 30 || log2IndexBytes > 34 || kind > 2 || count < 0n || count > 1n << BigInt(log2Size)) return null;
    const entrySize = kind === 0 ? 24 : 16;
    const shown = Math.min(Number(count), MAX_DICT_ENTRIES);
    const entries = this.memory.read(keys + BigInt(dictKeys.indices) + (1n << BigInt(log2IndexBytes)), shown * entrySize);
    if (entries === null) return null;
    const shared = values === 0n ? null : this.memory.read(values, shown * 8);
    if (values !== 0n && shared === null) return null;
    const found: { key: string; value: bigint }[] = [];
    for (let i = 0; i < shown; i += 1) {
      const at = i * entrySize + (kind === 0 ? 8 : 0);
      const key = pointerAt(entries, at);
      const value = shared ? pointerAt(shared, i * 8) : pointerAt(entries, at + 8);
      if (key === 0n || value === 0n) continue;
      const name = this.text(key);
      if (name !== null) found.push({ key: name, value });
    }
    return found;
  }

  /** An instance's attributes, where its type keeps them the way Python classes do (a managed dict, split or not). */
  attributes(address: bigint): { key: string; value: bigint }[] | null {
    const { type, managedDict } = this.layout;
    const typeAddress = this.typeOf(address);
    if (typeAddress === null || typeAddress === 0n) return null;
    const flags = this.memory.read(typeAddress + BigInt(type.flags), 8)?.readBigUInt64LE(0) ?? null;
    if (flags === null || (flags & BigInt(managedDict.flag)) === 0n) return null;
    const values = this.pointer(address + BigInt(managedDict.values));
    if (values !== null && values !== 0n) {
      const keys = this.pointer(typeAddress + BigInt(type.cachedKeys));
      return keys === null ? null : this.keyEntries(keys, values);
    }
    const dict = this.pointer(address + BigInt(managedDict.dict));
    return dict === null || dict === 0n ? null : this.dictEntries(dict);
  }

  attribute(address: bigint, name: string): bigint | null {
    return this.attributes(address)?.find((entry) => entry.key === name)?.value ?? null;
  }

  /** The `_thread` lock at `address`, or the one a lock-like object of threading takes (a Condition's, a Semaphore's); null for anything else. */
  lockAt(address: bigint, depth = 0): PythonLock | null {
    const name = this.typeName(address);
    if (name === null) return null;
    const type = LOCK_TYPES[name];
    if (type === "threading.Lock") {
      const bytes = this.memory.read(address, this.layout.lock.size);
      const locked = bytes === null ? null : bytes[this.layout.lock.locked] !== 0;
      return { address: hexAddress(address), type, locked, owner: null };
    }
    if (type === "threading.RLock") {
      const bytes = this.memory.read(address, this.layout.rlock.size);
      const owner = bytes === null ? null : bytes.readBigUInt64LE(this.layout.rlock.owner);
      const count = bytes === null ? null : bytes.readBigUInt64LE(this.layout.rlock.count);
      return { address: hexAddress(address), type, locked: count === null ? null : count > 0n, owner: owner === null || owner === 0n || count === 0n ? null : owner };
    }
    const held = LOCK_HOLDERS[name];
    if (!held || depth > 2) return null;
    const inner = this.attribute(address, held);
    return inner === null ? null : this.lockAt(inner, depth + 1);
  }

  /**
   * The lock a method is of: a builtin method's `self` (`lock.__exit__`, `lock.acquire` bound), a
   * bound Python method's (`cond.__exit__`); the method's name and the object it is bound to with it. Null for anything else.
   */
  methodOfLock(address: bigint): { lock: PythonLock; method: string | null; self: bigint } | null {
    const type = this.typeOf(address);
    const { builtinMethod, boundMethod } = this.layout;
    if (type === this.types.builtinMethod) {
      const self = this.pointer(address + BigInt(builtinMethod.self));
      const lock = self === null ? null : this.lockAt(self);
      if (!lock) return null;
      const definition = this.pointer(address + BigInt(builtinMethod.definition));
      const name = definition === null || definition === 0n ? null : this.cString(this.pointer(definition + BigInt(this.layout.methodDefinition.name)));
      return { lock, method: name, self: self! };
    }
    if (type === this.types.boundMethod) {
      const self = this.pointer(address + BigInt(boundMethod.self));
      const lock = self === null ? null : this.lockAt(self);
      if (!lock) return null;
      const code = this.pointer(address + BigInt(boundMethod.function));
      return { lock, method: code === null ? null : this.functionName(code), self: self! };
    }
    return null;
  }

  /** A Python function's `__name__`. */
  private functionName(func: bigint): string | null {
    const name = this.pointer(func + BigInt(this.layout.function.name));
    return name === null ? null : this.text(name);
  }

  /** An object's short repr, as Python prints the simple ones, `<type object at 0x…>` for the rest; null where it is no object the core shows. */
  repr(address: bigint): string | null {
    const { types } = this;
    if (address === types.none) return "None";
    if (address === types.true) return "True";
    if (address === types.false) return "False";
    const type = this.typeOf(address);
    if (type === null || type === 0n) return null;
    if (type === types.str) {
      const text = this.text(address);
      return text === null ? null : cut(`'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n")}'`);
    }
    if (type === types.bytes) {
      const bytes = readBytes(this.memory, this.layout, this.types, address, 1 << 30, "a bytes");
      if ("why" in bytes) return null;
      const shown = [...bytes.value.subarray(0, BYTES_SHOWN)].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x27 && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`)).join("");
      return cut(`b'${shown}${bytes.value.length > BYTES_SHOWN ? "…" : ""}'`);
    }
    if (type === types.long) return this.integer(address);
    if (type === types.float) {
      const bytes = this.memory.read(address + BigInt(this.layout.float.value), 8);
      return bytes === null ? null : String(bytes.readDoubleLE(0));
    }
    const name = this.typeName(address);
    if (name === null) return null;
    const lock = LOCK_TYPES[name] ? this.lockAt(address) : null;
    if (lock) return `<${lock.locked === null ? "" : lock.locked ? "locked " : "unlocked "}${name} object at ${hexAddress(address)}>`;
    const size = type === types.tuple || type === types.list ? this.memory.read(address + BigInt(this.layout.tuple.size), 8)?.readBigInt64LE(0) : type === types.dict ? this.memory.read(address + BigInt(this.layout.dict.used), 8)?.readBigInt64LE(0) : undefined;
    const items = size === undefined || size === null ? "" : ` of ${size} item${size === 1n ? "" : "s"}`;
    return `<${name} object${items} at ${hexAddress(address)}>`;
  }

  /** An int's value, from its sign-and-size and 30-bit digits; a very long one by its size only. */
  private integer(address: bigint): string | null {
    const size = this.memory.read(address + BigInt(this.layout.long.size), 8)?.readBigInt64LE(0) ?? null;
    if (size === null) return null;
    const count = Number(size < 0n ? -size : size);
    if (count > 8) return `<int of ${count * 30} bits at ${hexAddress(address)}>`;
    const digits = this.memory.read(address + BigInt(this.layout.long.digits), count * 4);
    if (digits === null) return null;
    let value = 0n;
    for (let i = count - 1; i >= 0; i -= 1) value = (value << 30n) | BigInt(digits.readUInt32LE(i * 4) & 0x3fffffff);
    return String(size < 0n ? -value : value);
  }
}

function cut(text: string): string {
  return text.length > MAX_REPR_CHARS ? `${text.slice(0, MAX_REPR_CHARS)}…` : text;
}
