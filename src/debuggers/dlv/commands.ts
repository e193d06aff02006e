/**
 * Delve's terminal commands as dumpdbg reads them: a pure parser from one command line to what it
 * asks (`goroutine 5 frame 2 locals`, `stack 40`, `x -fmt hex -count 4 -size 8 0xc000012000`).
 * Delve's DAP server runs none of these itself (its REPL knows only `dlv help`, `dlv config` and
 * `dlv sources`), so the session answers each with DAP requests; the syntax stays Delve's own, the
 * one a Go programmer types at `dlv core`.
 */

/** What one command asks, without its place. */
export type DelveAsk =
  /** With `stacks`, each goroutine's stack of that many frames under it (`goroutines -t`). */
  | { verb: "goroutines"; stacks: number | null }
  | { verb: "threads" }
  /** The selected goroutine and frame. */
  | { verb: "where" }
  | { verb: "stack"; depth: number }
  | { verb: "locals" }
  | { verb: "args" }
  | { verb: "print"; expression: string; hex: boolean }
  | { verb: "regs" }
  /** Around the frame's pc, or the instructions from `start` up to `end`. */
  | { verb: "disassemble"; start: string | null; end: string | null }
  | { verb: "examinemem"; address: string; count: number; size: 1 | 2 | 4 | 8 }
  | { verb: "sources"; filter: string }
  /** A command of Delve's terminal that its DAP server has no way to answer. */
  | { verb: "unavailable"; name: string }
  /** Moves the selection: `goroutine N`, `frame N`. */
  | { verb: "select" };

/** A command with the goroutine and frame it names (null: the selected one). */
export interface DelveCommand {
  goroutine: number | null;
  frame: number | null;
  ask: DelveAsk;
}

/** Delve prints this many frames when `stack` names no depth. */
export const DEFAULT_STACK_DEPTH = 50;
/** Read-only terminal commands the DAP server cannot serve: refused as unanswerable, not guessed. */
const UNAVAILABLE = new Set(["list", "ls", "l", "funcs", "types", "libraries", "whatis", "vars", "display", "frame-info"]);

/** The command a line is, or why it is not one dumpdbg can read. */
export function parseDelveCommand(line: string): DelveCommand | { error: string } {
  const words = line.trim().split(/\s+/).filter(Boolean);
  let goroutine: number | null = null;
  let frame: number | null = null;
  // `goroutine N [frame M] CMD` and `frame M CMD` run CMD there without moving the selection.
  while (words[0] === "goroutine" || words[0] === "gr" || words[0] === "frame") {
    const [word, number] = words;
    if (number === undefined || !/^\d+$/.test(number)) {
      if (word !== "frame" && number === undefined) return { goroutine, frame, ask: { verb: "where" } };
      return { error: `${word} needs a number, not ${JSON.stringify(number ?? "")}` };
    }
    if (word === "frame") frame = Number(number);
    else if (frame === null) goroutine = Number(number);
    else return { error: "goroutine comes before frame" };
    words.splice(0, 2);
  }
  const [verb, ...rest] = words;
  if (verb === undefined) return { goroutine, frame, ask: { verb: "select" } };
  const ask = askOf(verb, rest, line);
  return "error" in ask ? ask : { goroutine, frame, ask };
}

function askOf(verb: string, rest: string[], line: string): DelveAsk | { error: string } {
  const none = (ask: DelveAsk) => (rest.length ? { error: `${verb} takes no arguments here` } : ask);
  switch (verb) {
    case "goroutines":
    case "grs": {
      if (rest.length === 0) return { verb: "goroutines", stacks: null };
      const [flag, depth, ...more] = rest;
      if (flag !== "-t" || more.length || (depth !== undefined && !/^\d+$/.test(depth))) return { error: `${verb} takes only -t [DEPTH]` };
      return { verb: "goroutines", stacks: depth === undefined ? DEFAULT_STACK_DEPTH : Number(depth) };
    }
    case "threads":
      return none({ verb: "threads" });
    case "stack":
    case "bt": {
      const [depth, ...more] = rest;
      if (more.length || (depth !== undefined && !/^\d+$/.test(depth))) return { error: `${verb} takes one depth, a number` };
      return { verb: "stack", depth: depth === undefined ? DEFAULT_STACK_DEPTH : Number(depth) };
    }
    case "locals":
      return none({ verb: "locals" });
    case "args":
      return none({ verb: "args" });
    case "regs":
      return rest.length === 0 || (rest.length === 1 && rest[0] === "-a") ? { verb: "regs" } : { error: "regs takes only -a" };
    case "print":
    case "p": {
      // The expression is the rest of the line as typed, spaces and all.
      let expression = line.trim().replace(/^(?:(?:goroutine|gr|frame)\s+\d+\s+)*(?:print|p)\s*/, "");
      const hex = /^%x\s+/.test(expression);
      if (hex) expression = expression.replace(/^%x\s+/, "");
      else if (/^%/.test(expression)) return { error: "print takes only the %x format" };
      return expression.trim() === "" ? { error: "print needs an expression" } : { verb: "print", expression: expression.trim(), hex };
    }
    case "disassemble":
    case "disass": {
      if (rest.length === 0) return { verb: "disassemble", start: null, end: null };
      if (rest[0] === "-a" && rest.length === 3) return { verb: "disassemble", start: rest[1] ?? null, end: rest[2] ?? null };
      return { error: "disassemble takes nothing (around the frame's pc) or -a START END" };
    }
    case "examinemem":
    case "x":
      return examinemem(rest);
    case "sources":
      return rest.length > 1 ? { error: "sources takes one regular expression" } : { verb: "sources", filter: rest[0] ?? "" };
    default:
      return UNAVAILABLE.has(verb) ? { verb: "unavailable", name: verb } : { error: `${JSON.stringify(verb)} is not a Delve command dumpdbg reads` };
  }
}

function examinemem(rest: string[]): DelveAsk | { error: string } {
  let count = 1;
  let size: 1 | 2 | 4 | 8 = 1;
  const words = [...rest];
  while (words[0]?.startsWith("-")) {
    const [flag, value] = words.splice(0, 2);
    if (value === undefined) return { error: `${flag} needs a value` };
    if (flag === "-fmt") {
      if (value !== "hex" && value !== "x") return { error: "examinemem reads only -fmt hex" };
    } else if (flag === "-count" || flag === "-len") {
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 4096) return { error: `${flag} takes a count from 1 to 4096` };
      count = Number(value);
    } else if (flag === "-size") {
      if (!["1", "2", "4", "8"].includes(value)) return { error: "-size takes 1, 2, 4 or 8" };
      size = Number(value) as 1 | 2 | 4 | 8;
    } else {
      return { error: `examinemem does not take ${flag} here` };
    }
  }
  const address = words.join(" ");
  return address === "" ? { error: "examinemem needs an address" } : { verb: "examinemem", address, count, size };
}

/** A command's text again, for a probe: Delve's own prefix places it. */
export function placedDelve(place: { thread?: number | null; frame?: number }, command: string): string {
  const goroutine = place.thread === undefined || place.thread === null ? "" : `goroutine ${place.thread} `;
  const frame = place.frame ? `frame ${place.frame} ` : "";
  return `${goroutine}${frame}${command}`;
}
