/** What the safety policy answers about one command, and the words its refusals share. */

export type PolicyVerdict = { allowed: true } | { allowed: false; reason: string };

export const ALLOWED: PolicyVerdict = { allowed: true };

export function refuse(what: string, why: string): PolicyVerdict {
  return { allowed: false, reason: `${what} ${why}; refused by the safety policy (use --unsafe to allow)` };
}

export const quoted = (text: string): string => `"${text}"`;

// Refusal reasons that several debuggers give.
export const RUNS_SHELL = "runs a shell command";
export const RUNS_PYTHON = "runs Python code";
export const RUNS_BLOCK = "runs a block of commands";
export const WRITES_FILE = "writes a file";
export const RUNS_PROGRAM = "runs or resumes the program";
export const CONTROLS_PROCESS = "attaches to, detaches from or kills a process";
export const CALLS_FUNCTION = "calls a function in the program";
export const CHANGES_TARGET = "changes the debugged target, its files or where the debugger finds them";
export const CHANGES_SETTINGS = "changes the debugger's settings";
export const SETS_BREAKPOINTS = "sets or changes breakpoints";
export const ENDS_SESSION = "ends the debugger session";
export const NOT_READ_ONLY = "is not on the read-only allowlist";
