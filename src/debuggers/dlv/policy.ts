/**
 * Delve's part of the command safety policy: its read-only terminal commands, by their names and
 * aliases as Delve 1.20 knows them, each with arguments checked; every command that runs, steps,
 * calls, sets, breaks, rebuilds, sources a script, writes a core or changes Delve's configuration
 * refused with why. A Go expression may convert and apply builtins but not `call`, and never assign.
 */
import { expressionProblem, type ExpressionLanguage } from "../policy/expression.js";
import {
  ALLOWED,
  CALLS_FUNCTION,
  CHANGES_SETTINGS,
  CHANGES_TARGET,
  ENDS_SESSION,
  NOT_READ_ONLY,
  RUNS_BLOCK,
  RUNS_PROGRAM,
  RUNS_SHELL,
  SETS_BREAKPOINTS,
  WRITES_FILE,
  quoted,
  refuse,
  type PolicyVerdict,
} from "../policy/verdict.js";
import { parseDelveCommand } from "./commands.js";

/** Go as Delve evaluates it: a function runs only with `call`. */
const GO_EXPRESSIONS: ExpressionLanguage = { notCalls: new Set(), objcMessages: false, compiled: false, callKeyword: "call" };

/** Delve's commands that are not read-only, by every name it accepts for them. */
const REFUSED: ReadonlyMap<string, string> = new Map([
  ...["call"].map((n) => [n, CALLS_FUNCTION] as const),
  ...["set"].map((n) => [n, "changes a variable in the program"] as const),
  ...["continue", "c", "next", "n", "step", "s", "step-instruction", "si", "stepout", "so", "restart", "r", "rev", "rewind", "rw", "rebuild", "checkpoint", "check", "checkpoints", "clear-checkpoint", "clearcheck"].map((n) => [n, RUNS_PROGRAM] as const),
  ...["break", "b", "breakpoints", "bp", "clear", "clearall", "condition", "cond", "toggle", "trace", "t", "watch", "display"].map((n) => [n, SETS_BREAKPOINTS] as const),
  ...["on"].map((n) => [n, RUNS_BLOCK] as const),
  ...["source"].map((n) => [n, "runs a script of commands or Starlark"] as const),
  ...["config", "transcript", "edit", "ed"].map((n) => [n, CHANGES_SETTINGS] as const),
  ...["dump"].map((n) => [n, WRITES_FILE] as const),
  ...["exit", "quit", "q", "deferred", "target"].map((n) => [n, n === "target" ? CHANGES_TARGET : ENDS_SESSION] as const),
  ...["shell", "!"].map((n) => [n, RUNS_SHELL] as const),
]);

export function checkDlvCommand(command: string): PolicyVerdict {
  const words = command.trim().split(/\s+/);
  // The verb after Delve's `goroutine N` / `frame N` prefix is what runs.
  let at = 0;
  while ((words[at] === "goroutine" || words[at] === "gr" || words[at] === "frame") && /^\d+$/.test(words[at + 1] ?? "")) at += 2;
  const verb = words[at] ?? "";
  const refused = REFUSED.get(verb) ?? (verb.startsWith("dlv") ? "is a DAP REPL command (config, target) that changes the session" : undefined);
  if (refused) return refuse(quoted(verb), refused);
  const parsed = parseDelveCommand(command);
  if ("error" in parsed) return refuse(quoted(command.trim()), `${NOT_READ_ONLY} (${parsed.error})`);
  if (parsed.ask.verb === "print") {
    const problem = expressionProblem(parsed.ask.expression, GO_EXPRESSIONS);
    if (problem) return refuse(`the expression ${quoted(parsed.ask.expression)}`, problem);
  }
  if (parsed.ask.verb === "examinemem") {
    const problem = expressionProblem(parsed.ask.address, GO_EXPRESSIONS);
    if (problem) return refuse(`the address ${quoted(parsed.ask.address)}`, problem);
  }
  return ALLOWED;
}
