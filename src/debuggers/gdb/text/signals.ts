/** Parsers for `print $_siginfo` and `print $_exitsignal`. */
import type { SignalRecord } from "../../probe.js";
import { normalizeAddress, printedValue } from "./common.js";

export function parseSiginfo(output: string): SignalRecord | null {
  const value = printedValue(output);
  if (!value) return null;
  // gdb prints the struct in the syntax of the current frame's language: C `a = 1`, Rust `a: 1`.
  const field = (name: string, pattern: string) =>
    new RegExp(`${name.replaceAll(".", "(?: = |: )\\{")}(?: = |: )(?:\\([^)]*\\) )?(${pattern})`).exec(value)?.[1] ?? null;
  const signo = field("si_signo", "-?\\d+");
  const code = field("si_code", "-?\\d+");
  if (signo === null || code === null) return null;
  const address = field("_sigfault.si_addr", "0x[0-9a-f]+");
  const pid = field("_kill.si_pid", "-?\\d+");
  const uid = field("_kill.si_uid", "\\d+");
  return {
    signo: Number(signo),
    errno: Number(field("si_errno", "-?\\d+") ?? 0),
    code: Number(code),
    address: address ? normalizeAddress(address) : null,
    pid: pid === null ? null : Number(pid),
    uid: uid === null ? null : Number(uid),
  };
}

/** `print $_exitsignal`: the signal that ended the process, or null (void) for a gcore dump. */
export function parseExitSignal(output: string): number | null {
  const value = printedValue(output);
  return value !== null && /^\d+$/.test(value) ? Number(value) : null;
}
