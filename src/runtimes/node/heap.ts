/**
 * The error objects of a V8 heap as llnode prints them: the types `v8 findjsobjects` counts whose
 * name ends in `Error`, each instance's `.message` from `v8 findjsinstances -d`, and a string
 * `v8 inspect -F` prints whole. Pure and bounded.
 */

/** Error types read at most, and instances of each. */
export const MAX_ERROR_TYPES = 8;
export const MAX_ERROR_INSTANCES = 20;
const MAX_MESSAGE = 1024;

export interface HeapError {
  /** The object's address in the heap. */
  address: string;
  /** Its class (`TypeError`, `ValidationError`). */
  type: string;
  /** The address of its `message` string, and the text llnode shows of it (cut at 16 characters: read whole with `v8 inspect -F`). */
  messageAddress: string | null;
  messageShown: string | null;
  /**
   * Where in its script V8 located the throw, as the error's own symbol properties hold it (two
   * Smis, start and end, then the script: what V8 reads back to place an uncaught error's message);
   * null where the object has no such run of properties (an error made by `new Error()`).
   */
  position: { start: number; end: number } | null;
}

const COUNT_LINE = /^\s*(\d+)\s+\d+\s+(\S+)\s*$/;

/** The types of `v8 findjsobjects` whose name ends in `Error`, with their counts, most numerous last. */
export function errorTypes(text: string): { type: string; count: number }[] {
  const types: { type: string; count: number }[] = [];
  for (const line of text.split("\n")) {
    const match = COUNT_LINE.exec(line);
    if (match && /Error$/.test(match[2]!)) types.push({ type: match[2]!, count: Number(match[1]) });
  }
  return types.slice(0, MAX_ERROR_TYPES);
}

const OBJECT_START = /^(0x[0-9a-f]+):<Object: (\S+) properties \{/;
const MESSAGE = /^\s*\.message=(0x[0-9a-f]+):<String: "(.*)">,?$/;
const PROPERTY = /^\s*\.(\S+?)=(.*?)(?:\}>)?,?$/;
const SMI = /^<Smi: (\d+)>$/;

/** The error objects `v8 findjsinstances -d <type>` printed, with their messages' addresses. */
export function errorObjects(text: string): HeapError[] {
  const objects: HeapError[] = [];
  const symbols: string[][] = [];
  for (const line of text.split("\n")) {
    const start = OBJECT_START.exec(line);
    if (start) {
      if (objects.length >= MAX_ERROR_INSTANCES) break;
      objects.push({ address: start[1]!, type: start[2]!, messageAddress: null, messageShown: null, position: null });
      symbols.push([]);
      continue;
    }
    const current = objects.at(-1);
    if (!current) continue;
    const message = MESSAGE.exec(line);
    if (message && current.messageAddress === null) {
      current.messageAddress = message[1]!;
      current.messageShown = message[2]!;
      continue;
    }
    const property = PROPERTY.exec(line);
    if (property?.[1] === "Symbol()") symbols.at(-1)!.push(property[2]!);
  }
  objects.forEach((object, at) => (object.position = positionOf(symbols[at]!)));
  return objects;
}

/** The one run of two Smi-valued symbol properties, start before end, followed by an object (the script); null where there is none or more than one. */
function positionOf(values: string[]): { start: number; end: number } | null {
  const runs = values.flatMap((value, at) => {
    const start = SMI.exec(value);
    const end = SMI.exec(values[at + 1] ?? "");
    const script = values[at + 2];
    if (!start || !end || script === undefined || !/^0x[0-9a-f]+:</.test(script)) return [];
    return Number(start[1]) < Number(end[1]) ? [{ start: Number(start[1]), end: Number(end[1]) }] : [];
  });
  return runs.length === 1 ? runs[0]! : null;
}

const STRING = /<String: "([\s\S]*)">\s*$/;

/** The text of a string `v8 inspect -F` printed, cut at 1,024 characters; null where it printed none. */
export function inspectedString(text: string): string | null {
  const match = STRING.exec(text.trim());
  return match ? match[1]!.slice(0, MAX_MESSAGE) : null;
}

const MAX_SOURCE = 4 * 1024 * 1024;

/**
 * The text of an anonymous function `v8 inspect -s` printed: llnode writes `function `, the
 * function's name (none here) and the script's text from the function's start on, so for a script's
 * top-level function (at 1:0) the script itself. Null where it printed no source.
 */
export function inspectedSource(text: string): string | null {
  const at = text.indexOf("\n  source:\nfunction ");
  if (at < 0) return null;
  const end = text.lastIndexOf("\n>");
  return text.slice(at + "\n  source:\nfunction ".length, end > at ? end : undefined).slice(0, MAX_SOURCE);
}

/** The 1-based line and column of a 0-based position in a script's text; null past its end. */
export function lineAndColumn(source: string, position: number): { line: number; column: number } | null {
  if (position < 0 || position >= source.length) return null;
  const before = source.slice(0, position);
  const lineStart = before.lastIndexOf("\n") + 1;
  return { line: before.split("\n").length, column: position - lineStart + 1 };
}
