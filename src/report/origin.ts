/**
 * A crash's origin in words, from the report's structured fields (`crash.origin`, the signal and its
 * code, the culprit): triage's message, the title, the offline playbook and the chat say it the same way.
 */
import type { Crash, Culprit, Origin } from "./schema.js";

export type SignalStoryFacts = Pick<Crash, "signal" | "signalCode" | "origin"> & { culprit: Pick<Culprit, "function" | "file" | "line"> };

/** "by pid 4242 (uid 1000)", or "by another process" when the record names no sender. */
export function senderText(origin: Origin, withUid = true): string {
  const sender = origin.sender;
  if (sender?.pid == null) return "by another process";
  return `by pid ${sender.pid}${withUid && sender.uid !== null ? ` (uid ${sender.uid})` : ""}`;
}

/** A signal a process sent, or the program raised at itself: who, how and where. Null for any other origin. */
export function signalStory(crash: SignalStoryFacts): string | null {
  const { origin, signal, signalCode, culprit } = crash;
  if (!origin || !signal || (origin.type !== "sent" && origin.type !== "raised")) return null;
  if (origin.type === "raised") {
    const where = culprit.function ? ` in ${culprit.function}${culprit.file ? ` (${culprit.file.split("/").pop()}:${culprit.line ?? "?"})` : ""}` : "";
    const how = signalCode === "SI_TKILL" ? "tgkill, as raise() and pthread_kill() do" : signalCode === "SI_QUEUE" ? "sigqueue" : "kill() with its own pid";
    return `the process raised ${signal} at itself${where} (${how})`;
  }
  const how = signalCode === "SI_QUEUE" ? "sigqueue" : signalCode === "SI_TKILL" ? "tgkill" : "kill";
  return `the process was sent ${signal} ${senderText(origin)} with ${how}`;
}

/** The pid of the process that sent the signal, when the record names one (never the process itself). */
export function senderPid(origin: Origin | null): number | null {
  return origin?.type === "sent" ? (origin.sender?.pid ?? null) : null;
}
