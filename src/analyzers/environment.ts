/**
 * The dumped process's environment values, read from `environ` in the dump, so that they can be
 * masked before anything leaves the machine (they hold the process's tokens, passwords, DSNs).
 */
import type { CommandRunner } from "./triage.js";
import { parseMemoryString, parseMemoryWords } from "./memory.js";

/** More variables than a process has in practice; the list in memory ends at a NULL pointer. */
const MAX_ENVIRONMENT = 256;

/** `print elements` would cut long values at 200 characters, `print repeats` fold runs of one character. */
function stringsCommand(count: number): string {
  return `with print elements unlimited -- with print repeats unlimited -- x/${count}s **(char ***) &environ`;
}

/**
 * The values of the process's environment, each as it is in memory and as gdb prints it inside a
 * C string (quotes and backslashes escaped), since either form may appear in what is sent out.
 * Runs our own commands through `run` (not the safety policy's business: nothing is proposed).
 */
export async function readEnvironment(run: CommandRunner): Promise<string[]> {
  // Reading past the end of the stack fails, but what was read before that is printed: use it.
  const pointers = await run(`x/${MAX_ENVIRONMENT}gx *(char ***) &environ`);
  const count = parseMemoryWords(pointers.output).words.indexOf(0n);
  if (count <= 0) return [];
  const strings = await run(stringsCommand(count));
  if (!strings.ok) return [];
  const values = strings.output
    .split("\n")
    .map((line) => parseMemoryString(line))
    .flatMap((entry) => (entry && entry.includes("=") ? [entry.slice(entry.indexOf("=") + 1)] : []));
  const escaped = values.map((value) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"'));
  return [...new Set([...values, ...escaped])].filter((value) => value.length > 0);
}
