/**
 * One line of GDB/MI output → one record, following the output grammar in gdb's manual
 * ("GDB/MI Output Syntax"). Pure: no I/O and no state between lines.
 */

export type MiValue = string | MiTuple | MiValue[];

/**
 * A result list such as `{a="1",b=[...]}`. A key that gdb repeats inside one tuple keeps all its
 * values, in order, as an array under that key.
 */
export interface MiTuple {
  [key: string]: MiValue;
}

export type MiRecord =
  | { type: "prompt" }
  | { type: "stream"; channel: "console" | "target" | "log"; text: string }
  | {
      type: "result";
      token: number | null;
      resultClass: "done" | "running" | "connected" | "error" | "exit";
      results: MiTuple;
    }
  | {
      type: "async";
      token: number | null;
      kind: "exec" | "status" | "notify";
      asyncClass: string;
      results: MiTuple;
    }
  | { type: "unknown"; line: string };

type ResultClass = Extract<MiRecord, { type: "result" }>["resultClass"];

const RESULT_CLASSES: ReadonlySet<string> = new Set<ResultClass>([
  "done",
  "running",
  "connected",
  "error",
  "exit",
]);

const STREAM_CHANNELS = { "~": "console", "@": "target", "&": "log" } as const;
const ASYNC_KINDS = { "*": "exec", "+": "status", "=": "notify" } as const;

const PROMPT = /^\(gdb\) *$/;

/** Escapes gdb writes in c-strings besides octal ones; any other escaped character stands for itself. */
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v",
  e: "\x1b",
};

/** Deeper nesting than gdb ever produces; the limit keeps a hostile line from overflowing the stack. */
const MAX_NESTING = 512;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Parses one line of gdb's output, without its trailing "\n" (a trailing "\r" is tolerated).
 * Never throws: a line that is not well-formed MI (raw inferior output, say) is `unknown`.
 */
export function parseMiLine(line: string): MiRecord {
  const text = line.endsWith("\r") ? line.slice(0, -1) : line;
  try {
    return parseRecord(text);
  } catch (error) {
    if (error instanceof SyntaxError) return { type: "unknown", line: text };
    throw error;
  }
}

/**
 * Decodes the c-string whose opening quote is at `start`; `end` is the index just past its
 * closing quote. Throws SyntaxError when there is no well-formed c-string at `start`.
 */
export function parseCString(input: string, start: number): { value: string; end: number } {
  if (input.charCodeAt(start) !== QUOTE) throw new SyntaxError(`expected '"' at ${start}`);
  // Chunks are joined once at the end: console records carry megabytes of backtraces.
  const chunks: string[] = [];
  // gdb writes every non-ASCII byte as its own octal escape, so a character spans several escapes.
  let bytes: number[] = [];
  const flushBytes = (): void => {
    if (bytes.length === 0) return;
    chunks.push(decodeBytes(bytes));
    bytes = [];
  };

  let literalStart = start + 1;
  let i = literalStart;
  while (i < input.length) {
    const code = input.charCodeAt(i);
    if (code !== QUOTE && code !== BACKSLASH) {
      i++;
      continue;
    }
    if (i > literalStart) {
      flushBytes();
      chunks.push(input.slice(literalStart, i));
    }
    if (code === QUOTE) {
      flushBytes();
      return { value: chunks.join(""), end: i + 1 };
    }

    const escaped = input[i + 1];
    if (escaped === undefined) break;
    if (isOctalDigit(input.charCodeAt(i + 1))) {
      // C allows one to three digits; gdb always writes three.
      let byte = 0;
      let j = i + 1;
      while (j < i + 4 && isOctalDigit(input.charCodeAt(j))) byte = byte * 8 + input.charCodeAt(j++) - 0x30;
      if (byte > 0xff) throw new SyntaxError(`octal escape past a byte at ${i}`);
      bytes.push(byte);
      i = j;
    } else {
      flushBytes();
      chunks.push(SIMPLE_ESCAPES[escaped] ?? escaped);
      i += 2;
    }
    literalStart = i;
  }
  throw new SyntaxError(`unterminated c-string from ${start}`);
}

function parseRecord(text: string): MiRecord {
  if (PROMPT.test(text)) return { type: "prompt" };

  let pos = 0;
  while (pos < text.length && isDigit(text.charCodeAt(pos))) pos++;
  const token = pos > 0 ? Number(text.slice(0, pos)) : null;
  const sigil = text[pos];

  if (sigil === "~" || sigil === "@" || sigil === "&") {
    if (token !== null) throw new SyntaxError("stream records carry no token");
    const { value, end } = parseCString(text, pos + 1);
    if (end !== text.length) throw new SyntaxError(`trailing text at ${end}`);
    return { type: "stream", channel: STREAM_CHANNELS[sigil], text: value };
  }

  const reader = new MiReader(text, pos + 1);
  if (sigil === "^") {
    const resultClass = reader.name();
    if (!isResultClass(resultClass)) throw new SyntaxError(`unknown result class ${resultClass}`);
    return { type: "result", token, resultClass, results: reader.recordResults() };
  }
  if (sigil === "*" || sigil === "+" || sigil === "=") {
    const asyncClass = reader.name();
    return { type: "async", token, kind: ASYNC_KINDS[sigil], asyncClass, results: reader.recordResults() };
  }
  throw new SyntaxError("not an MI record");
}

/** A cursor over one line; every method consumes what it reads or throws SyntaxError. */
class MiReader {
  constructor(
    private readonly text: string,
    private pos: number,
  ) {}

  /** The `("," result)*` that ends a result or async record, up to the end of the line. */
  recordResults(): MiTuple {
    if (this.pos === this.text.length) return newTuple();
    this.expect(",");
    const results = this.results(0);
    if (this.pos !== this.text.length) throw new SyntaxError(`trailing text at ${this.pos}`);
    return results;
  }

  /** A variable name or record class: gdb spells them with letters, digits, `-` and `_`. */
  name(): string {
    const start = this.pos;
    while (this.pos < this.text.length && isNameChar(this.text.charCodeAt(this.pos))) this.pos++;
    if (this.pos === start) throw new SyntaxError(`expected a name at ${start}`);
    return this.text.slice(start, this.pos);
  }

  /** `result ("," result)*`, the body of a record or a tuple. */
  private results(depth: number): MiTuple {
    const tuple = newTuple();
    // The arrays this tuple made for repeated keys, told apart from list values gdb sent.
    let repeated: Map<string, MiValue[]> | undefined;
    do {
      const name = this.name();
      this.expect("=");
      const value = this.value(depth);
      const earlier = tuple[name];
      const values = repeated?.get(name);
      if (values) {
        values.push(value);
      } else if (earlier === undefined) {
        tuple[name] = value;
      } else {
        const both = [earlier, value];
        tuple[name] = both;
        (repeated ??= new Map()).set(name, both);
      }
    } while (this.eat(","));
    return tuple;
  }

  private value(depth: number): MiValue {
    if (depth > MAX_NESTING) throw new SyntaxError(`nesting deeper than ${MAX_NESTING}`);
    switch (this.text[this.pos]) {
      case '"': {
        const { value, end } = parseCString(this.text, this.pos);
        this.pos = end;
        return value;
      }
      case "{":
        return this.tuple(depth + 1);
      case "[":
        return this.list(depth + 1);
      default:
        throw new SyntaxError(`expected a value at ${this.pos}`);
    }
  }

  private tuple(depth: number): MiTuple | MiValue[] {
    this.expect("{");
    if (this.eat("}")) return newTuple();
    // gdb 13 writes a breakpoint's commands as a tuple of bare values, `script={"silent","bt"}`,
    // which the grammar does not allow; it means a list, so it becomes one.
    const body = isNameChar(this.text.charCodeAt(this.pos)) ? this.results(depth) : this.values(depth);
    this.expect("}");
    return body;
  }

  private list(depth: number): MiValue[] {
    this.expect("[");
    if (this.eat("]")) return [];
    const list = this.values(depth);
    this.expect("]");
    return list;
  }

  /** `value ("," value)*`; the names in a list of results, `[frame={..},frame={..}]`, are dropped. */
  private values(depth: number): MiValue[] {
    const values: MiValue[] = [];
    do {
      if (isNameChar(this.text.charCodeAt(this.pos))) {
        this.name();
        this.expect("=");
      }
      values.push(this.value(depth));
    } while (this.eat(","));
    return values;
  }

  private eat(char: string): boolean {
    if (this.text[this.pos] !== char) return false;
    this.pos++;
    return true;
  }

  private expect(char: string): void {
    if (!this.eat(char)) throw new SyntaxError(`expected '${char}' at ${this.pos}`);
  }
}

/** Without a prototype, keys from gdb's output (even `__proto__`) cannot collide with inherited ones. */
function newTuple(): MiTuple {
  return Object.create(null) as MiTuple;
}

/**
 * Bytes that form UTF-8 become their characters; any other byte becomes the latin1 character of
 * the same value, so text in another encoding still comes through, byte for byte.
 */
function decodeBytes(bytes: readonly number[]): string {
  const chars: string[] = [];
  for (let i = 0; i < bytes.length; ) {
    const { codePoint, length } = characterAt(bytes, i);
    chars.push(String.fromCodePoint(codePoint));
    i += length;
  }
  return chars.join("");
}

/** The well-formed UTF-8 sequence (Unicode table 3-7) at `i`, else the single byte at `i` as latin1. */
function characterAt(bytes: readonly number[], i: number): { codePoint: number; length: number } {
  const lead = bytes[i] ?? 0;
  const asLatin1 = { codePoint: lead, length: 1 };
  let length: number;
  let codePoint: number;
  if (lead < 0x80) return asLatin1;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    codePoint = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    codePoint = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    codePoint = lead & 0x07;
  } else {
    return asLatin1;
  }
  // The second byte's range is what rules out overlong forms, surrogates and code points past U+10FFFF.
  const secondMin = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
  const secondMax = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
  for (let k = 1; k < length; k++) {
    const byte = bytes[i + k];
    const min = k === 1 ? secondMin : 0x80;
    const max = k === 1 ? secondMax : 0xbf;
    if (byte === undefined || byte < min || byte > max) return asLatin1;
    codePoint = (codePoint << 6) | (byte & 0x3f);
  }
  return { codePoint, length };
}

function isResultClass(name: string): name is ResultClass {
  return RESULT_CLASSES.has(name);
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function isOctalDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x37;
}

function isNameChar(code: number): boolean {
  return (
    isDigit(code) ||
    (code >= 0x41 && code <= 0x5a) || // A-Z
    (code >= 0x61 && code <= 0x7a) || // a-z
    code === 0x2d || // -
    code === 0x5f // _
  );
}
