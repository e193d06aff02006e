/**
 * The dumped process's environment values, read from `environ` in the dump, so that they can be
 * masked before anything leaves the machine (they hold the process's tokens, passwords, DSNs).
 */
import type { Ask } from "../debuggers/inspector.js";

/** More variables than a process has in practice; the list in memory ends at a NULL pointer. */
const MAX_ENVIRONMENT = 256;

/**
 * The values of the process's environment, each as it is in memory and as a debugger prints it
 * inside a C string (quotes and backslashes escaped), since either form may appear in what is sent
 * out. Asks its own probes (not the safety policy's business: nothing is proposed).
 */
export async function readEnvironment(ask: Ask): Promise<string[]> {
  // Reading past the end of the stack fails, but what was read before that is printed: use it.
  const pointers = await ask({ kind: "memory", address: "*(char ***) &environ", count: MAX_ENVIRONMENT });
  const count = pointers.reading?.words.indexOf(0n) ?? -1;
  if (count <= 0) return [];
  const strings = await ask({ kind: "strings", address: "**(char ***) &environ", count });
  if (!strings.ok || !strings.reading) return [];
  const values = strings.reading.flatMap((entry) => (entry && entry.includes("=") ? [entry.slice(entry.indexOf("=") + 1)] : []));
  const escaped = values.map((value) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"'));
  return [...new Set([...values, ...escaped])].filter((value) => value.length > 0);
}
