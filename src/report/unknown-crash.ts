/**
 * What triage's message says of a crash no fault rule classifies (kind `unknown`): a hang of
 * threads blocked in waits, or a signal a process sent (or the program raised at itself). The
 * message is the record; the report's title and the offline playbook read it from here.
 */
import type { Crash } from "./schema.js";

export type UnknownCrash =
  | { hang: string }
  | { sent: string; self: boolean; sender: string | null };

export function unknownCrashOf(crash: Pick<Crash, "kind" | "message">): UnknownCrash | null {
  if (crash.kind !== "unknown" || !crash.message) return null;
  const hung = /^hung: (.*?); no wait records/.exec(crash.message);
  if (hung) return { hang: hung[1] ?? "" };
  const sent = /^the process (?:was sent \S+ (by pid \d+|by another process)|(raised) )/.exec(crash.message);
  if (sent) return { sent: crash.message.replace(/; it was not a fault.*$/, ""), self: Boolean(sent[2]), sender: sent[1] ?? null };
  return null;
}
