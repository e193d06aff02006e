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

/** The error objects `v8 findjsinstances -d <type>` printed, with their messages' addresses. */
export function errorObjects(text: string): HeapError[] {
  const objects: HeapError[] = [];
  for (const line of text.split("\n")) {
    const start = OBJECT_START.exec(line);
    if (start) {
      if (objects.length >= MAX_ERROR_INSTANCES) break;
      objects.push({ address: start[1]!, type: start[2]!, messageAddress: null, messageShown: null });
      continue;
    }
    const message = MESSAGE.exec(line);
    const current = objects.at(-1);
    if (message && current && current.messageAddress === null) {
      current.messageAddress = message[1]!;
      current.messageShown = message[2]!;
    }
  }
  return objects;
}

const STRING = /<String: "([\s\S]*)">\s*$/;

/** The text of a string `v8 inspect -F` printed, cut at 1,024 characters; null where it printed none. */
export function inspectedString(text: string): string | null {
  const match = STRING.exec(text.trim());
  return match ? match[1]!.slice(0, MAX_MESSAGE) : null;
}
