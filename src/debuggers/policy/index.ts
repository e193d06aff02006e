/**
 * The command safety policy: an allowlist of read-only commands per debugger. Every command a
 * model, the chat, an agent or `exec` sends passes through `checkCommand` before it reaches a
 * debugger; each debugger's module knows its own commands, over one shared expression check.
 */

import { checkCdbCommand } from "../cdb/policy.js";
import { checkDlvCommand } from "../dlv/policy.js";
import { checkGdbCommand } from "../gdb/policy.js";
import { checkLldbCommand } from "../lldb/policy.js";
import type { Backend } from "../session.js";
import { refuse, type PolicyVerdict } from "./verdict.js";

export type { PolicyVerdict } from "./verdict.js";

const CHECKS: Readonly<Record<Backend, (command: string) => PolicyVerdict>> = {
  gdb: checkGdbCommand,
  lldb: checkLldbCommand,
  cdb: checkCdbCommand,
  dlv: checkDlvCommand,
};

export function checkCommand(backend: Backend, command: string): PolicyVerdict {
  // Checked on the raw string first: a newline or other control character could smuggle a second
  // command past everything below. Tab is the one allowed, as the debuggers read it as a space.
  const control = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/u.exec(command);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
    return refuse("the command", `contains a control character (U+${code})`);
  }
  if (command.trim() === "") {
    return { allowed: false, reason: "empty command: there is nothing to run (gdb would repeat the previous command)" };
  }
  return CHECKS[backend](command);
}
