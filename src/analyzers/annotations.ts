/**
 * What a crash's annotations (Crashpad's) say of how it ended, where the exception record alone
 * cannot: the message a runtime left for the crash reporter (libsystem_c's "abort() called",
 * CoreFoundation's uncaught NSException with its name and reason, an assertion's text). Pure.
 */
import type { CrashpadInfo } from "../debuggers/model.js";
import type { CrashKind } from "../report/schema.js";

export interface AnnotatedEnding {
  /** The kind the annotation names, when it names one (an uncaught exception, an assertion); null for an abort's own message. */
  kind: CrashKind | null;
  message: string;
  /** The exception's type, when they name an uncaught one (`NSInvalidArgumentException`). */
  thrown?: string;
}

const UNCAUGHT = /Terminating app due to uncaught exception '([^']+)', reason: '([\s\S]*?)'\s*$/;
const ASSERTION = /\bassert(ion)?\b.*\bfail/i;
/** List annotations that are a runtime's last words, in the order they are believed. */
const ENDINGS = [UNCAUGHT, ASSERTION, /\babort\(\) called\b/, /\bfatal error\b|\bpanic\b|\bcheck failed\b/i];

export function annotatedEnding(info: CrashpadInfo | null | undefined): AnnotatedEnding | null {
  if (!info) return null;
  const said = info.modules.flatMap((module) => module.list).map((text) => text.trim()).filter(Boolean);
  for (const pattern of ENDINGS) {
    const text = said.find((line) => pattern.test(line));
    if (!text) continue;
    const uncaught = UNCAUGHT.exec(text);
    if (uncaught?.[1]) return { kind: "uncaught-exception", message: `${uncaught[1]}: ${uncaught[2]}`, thrown: uncaught[1] };
    return { kind: pattern === ASSERTION ? "assertion-failure" : null, message: text };
  }
  return null;
}
