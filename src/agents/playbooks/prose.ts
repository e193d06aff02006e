/** Small pieces of the sentences the playbooks write. */
import { isRuntimeFrame, normalizeFunctionName, type PlacedFrame } from "../../analyzers/index.js";
import { counted } from "../../report/numbers.js";
import type { Facts } from "./facts.js";
import { withoutComments } from "./source.js";

export function basename(file: string): string {
  return file.split(/[\\/]/).at(-1) ?? file;
}

export function location(frame: { file: string | null; line: number | null } | null): string | null {
  if (!frame?.file) return null;
  return frame.line === null ? basename(frame.file) : `${basename(frame.file)}:${frame.line}`;
}

/** "`send_to_client` (null-deref.c:27)", or "`broadcast`" without debug info. */
export function where(frame: PlacedFrame | null): string {
  if (!frame) return "the crashing code";
  const module = frame.module?.split(/[\\/]/).at(-1);
  const name = frame.function ? `\`${normalizeFunctionName(frame.function)}\`` : module ? `unnamed code in ${module}` : "an unnamed function";
  const at = location(frame);
  return at ? `${name} (${at})` : name;
}

/** The program's own frames from the outermost to the culprit: "main → broadcast → send_to_client". */
export function callPath(facts: Facts): string {
  const own: string[] = [];
  for (const frame of facts.triage.frames) {
    if (frame.function === null) break;
    if (!isRuntimeFrame(frame)) own.push(normalizeFunctionName(frame.function));
  }
  return own.reverse().join(" → ");
}

/** `source line` quoted for prose, trimmed and without a trailing comment. */
export function quoteLine(line: string | null): string | null {
  if (line === null) return null;
  const code = withoutComments(line);
  return code === "" ? null : `\`${code}\``;
}

export function plural(n: number, word: string): string {
  return counted(n, word);
}

/** `first`, `second`… for an argument's position (1-based); `first` where it is not recorded. */
export function argumentOrdinal(position: number | undefined): string {
  return ["first", "second", "third", "fourth", "fifth", "sixth"][(position ?? 1) - 1] ?? `${position}th`;
}
