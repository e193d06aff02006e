/** Parser for `info locals` and `info args`. */
import type { Variable } from "../../model.js";
import { lines } from "./common.js";

export function parseLocals(output: string): Variable[] {
  const variables: Variable[] = [];
  for (const line of lines(output)) {
    const match = /^(\S+) = (.*)$/.exec(line);
    if (match) variables.push({ name: match[1] ?? "", value: match[2] ?? "" });
    else if (/^\s+\S/.test(line) && variables.length > 0) {
      // A value printed over several lines (a pretty printer, or `set print pretty on`).
      const last = variables[variables.length - 1];
      if (last) last.value += ` ${line.trim()}`;
    }
  }
  return variables;
}
