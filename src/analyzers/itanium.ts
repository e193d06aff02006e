/**
 * The Itanium C++ ABI's mangled names of type_info objects (`_ZTISt13runtime_error` is
 * `typeinfo for std::runtime_error`), for debuggers that leave a versioned symbol
 * (`_ZTISt13runtime_error@GLIBCXX_3.4`) mangled. Only what a thrown type's name needs: namespaces,
 * nested names, ABI tags, builtin types, pointers and const.
 */

const BUILTINS: Record<string, string> = {
  v: "void", b: "bool", c: "char", a: "signed char", h: "unsigned char", s: "short", t: "unsigned short",
  i: "int", j: "unsigned int", l: "long", m: "unsigned long", x: "long long", y: "unsigned long long",
  f: "float", d: "double", e: "long double", w: "wchar_t",
};

/** Longest name read, so that a hostile symbol cannot make the reader loop for long. */
const MAX_SYMBOL = 512;

/** `typeinfo for T` for a mangled `_ZTI…` symbol (a version suffix allowed), else null. */
export function demangleTypeinfo(symbol: string): string | null {
  const mangled = /^_ZTI([^@\s]+)(?:@\S*)?$/.exec(symbol)?.[1];
  if (!mangled || mangled.length > MAX_SYMBOL) return null;
  const reader = { text: mangled, at: 0 };
  const type = readType(reader);
  return type !== null && reader.at === mangled.length ? `typeinfo for ${type}` : null;
}

interface Reader {
  text: string;
  at: number;
}

function readType(reader: Reader): string | null {
  const ch = reader.text[reader.at];
  if (ch === undefined) return null;
  if (ch === "P" || ch === "K") {
    reader.at++;
    const inner = readType(reader);
    return inner === null ? null : ch === "P" ? `${inner}*` : `${inner} const`;
  }
  if (BUILTINS[ch]) {
    reader.at++;
    return BUILTINS[ch] ?? null;
  }
  if (ch === "N") {
    reader.at++;
    const parts: string[] = [];
    if (reader.text.startsWith("St", reader.at)) {
      reader.at += 2;
      parts.push("std");
    }
    while (reader.at < reader.text.length && reader.text[reader.at] !== "E") {
      const name = readSourceName(reader);
      if (name === null) return null;
      parts.push(name);
    }
    if (reader.text[reader.at] !== "E" || parts.length === 0) return null;
    reader.at++;
    return parts.join("::");
  }
  if (reader.text.startsWith("St", reader.at)) {
    reader.at += 2;
    const name = readSourceName(reader);
    return name === null ? null : `std::${name}`;
  }
  return readSourceName(reader);
}

/** `<length><identifier>`, with any `B<length><tag>` ABI tags after it. */
function readSourceName(reader: Reader): string | null {
  const length = /^\d+/.exec(reader.text.slice(reader.at))?.[0];
  if (!length) return null;
  reader.at += length.length;
  const size = Number(length);
  if (size <= 0 || reader.at + size > reader.text.length) return null;
  const identifier = reader.text.slice(reader.at, reader.at + size);
  // An anonymous namespace is mangled `_GLOBAL__N_1` (the ABI's `_GLOBAL_`, one of `._$`, then `N`).
  let name = /^_GLOBAL_[._$]N/.test(identifier) ? "(anonymous namespace)" : identifier;
  reader.at += size;
  while (reader.text[reader.at] === "B") {
    reader.at++;
    const tag = readSourceName(reader);
    if (tag === null) return null;
    name += `[abi:${tag}]`;
  }
  return name;
}
