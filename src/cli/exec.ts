/** `dumpdbg exec`: commands in order on one persistent session; the interface for scripts. */
import { openingLines, openDump } from "../debuggers/open.js";
import { refusalOf } from "../debuggers/guard.js";
import type { CommandResult } from "../debuggers/session.js";
import { openOptions, type DumpFlags } from "./dump-options.js";
import { ExitCode, ExitError } from "./exit.js";

export interface ExecOptions extends DumpFlags {
  command: string[];
  json?: boolean;
  unsafe?: boolean;
}

export async function exec(dumpPath: string, options: ExecOptions): Promise<void> {
  if (options.command.length === 0) {
    throw new ExitError(ExitCode.usage, 'no commands given; pass one or more with -ex (or -c), e.g. -ex bt -ex "info registers"');
  }
  if (options.unsafe) {
    process.stderr.write("dumpdbg: WARNING: --unsafe lifts the command safety policy; commands may run shells, write files or start processes\n");
  }
  const timeoutMs = Math.round(options.timeout * 1000);
  const opened = await openDump({ ...openOptions(dumpPath, options), onMismatch: "warn" });
  for (const line of openingLines(opened)) process.stderr.write(`dumpdbg: ${line}\n`);

  const results: CommandResult[] = [];
  try {
    // All asked at once: the session runs them one after the other, in this order, and may hand
    // the debugger the next while it works on one. Each is printed as it is answered; a refused one
    // in its turn, with the context the commands before it left.
    const guard = { unsafe: options.unsafe ?? false, timeoutMs };
    const answers = options.command.map((command) => (refusalOf(opened.session, command, guard) ? null : opened.session.run(command, { timeoutMs })));
    // Should one fail unexpectedly, the loop below reports it; the others' failures are not unhandled.
    for (const answer of answers) answer?.catch(() => undefined);
    for (const [i, answer] of answers.entries()) {
      const result = answer ? await answer : refusalOf(opened.session, options.command[i]!, guard)!;
      results.push(result);
      if (!options.json) printText(result);
    }
  } finally {
    await opened.session.close({ wait: false });
  }
  if (options.json) process.stdout.write(`${JSON.stringify(results.map(toJson), null, 2)}\n`);
  // As gdb -batch: a script learns from the exit code that something did not run.
  const failed = results.filter((result) => !result.ok).length;
  if (failed > 0) throw new ExitError(ExitCode.commandFailed, `${failed} of ${results.length} ${results.length === 1 ? "command" : "commands"} failed or ${failed === 1 ? "was" : "were"} refused`);
}

/** As gdb would print it: output on stdout, errors on stderr. */
function printText(result: CommandResult): void {
  process.stdout.write(result.output);
  if (result.ok) return;
  const prefix = result.errorType === "not_allowed" ? "refused" : result.errorType === "debugger_error" ? "" : `${result.errorType}: `;
  process.stderr.write(`${prefix === "refused" ? `refused: ${result.command}: ` : prefix}${result.error ?? "failed"}\n`);
  if (result.reopened) process.stderr.write("dumpdbg: the debugger was restarted and the dump reopened\n");
}

/** Every field present; what does not apply is null. */
function toJson(result: CommandResult) {
  return {
    command: result.command,
    ok: result.ok,
    output: result.output,
    errorType: result.errorType ?? null,
    error: result.error ?? null,
    ms: result.ms,
    reopened: result.reopened ?? false,
    context: result.context,
  };
}
