/**
 * What a person sees of a run. Progress goes to stderr: on a terminal, a live list of the agents'
 * steps (each command collapsed into the spinner's line); otherwise, or with --verbose, every line
 * as it comes; with --quiet, nothing. The verdict goes to stdout, first and prominent. Colour only
 * on a terminal, and never with NO_COLOR (FORCE_COLOR turns it on); our own lines are wrapped at
 * word boundaries, never mid-word.
 */
import pc from "picocolors";

export type Verbosity = "quiet" | "normal" | "verbose";

export interface Progress {
  /** One line of progress; `detail` marks a single command's line, collapsed on a terminal. */
  line(text: string, detail?: boolean): void;
  /** Stops any live display, leaving what it showed. */
  stop(): void;
}

/** The width our lines are wrapped or cut to: the terminal's, kept readable. */
export function widthOf(stream: NodeJS.WriteStream): number {
  return Math.max(40, Math.min(stream.columns || 100, 120));
}

export async function startProgress(verbosity: Verbosity, stream: NodeJS.WriteStream = process.stderr): Promise<Progress> {
  if (verbosity === "quiet") return { line: () => undefined, stop: () => undefined };
  if (verbosity === "verbose" || !stream.isTTY || process.env.TERM === "dumb") {
    return { line: (text) => stream.write(`${text}\n`), stop: () => undefined };
  }
  const { default: ora } = await import("ora");
  const width = () => widthOf(stream) - 3;
  const spinner = ora({ stream, discardStdin: false, text: "opening the dump" }).start();
  return {
    line(text, detail) {
      if (detail) {
        spinner.text = cut(text, width());
        return;
      }
      const warning = /^warning: /.test(text);
      spinner.stopAndPersist({ symbol: warning ? pc.yellow("!") : pc.green("✓"), text: cut(text, width()) });
      spinner.start("working");
    },
    stop() {
      if (!spinner.isSpinning) return;
      spinner.stop();
      // A blank line between the list of steps and the verdict.
      stream.write("\n");
    },
  };
}

/** One line cut to `width` characters, with an ellipsis when cut. */
export function cut(text: string, width: number): string {
  const line = text.replace(/\s*\n\s*/g, " ");
  return line.length <= width ? line : `${line.slice(0, Math.max(1, width - 1))}…`;
}

/** Text wrapped at spaces to `width` columns; a word longer than a line (a path) stays whole. */
export function wrap(text: string, width: number, indent = ""): string {
  return text
    .split("\n")
    .map((paragraph) => {
      const lines: string[] = [];
      let current = "";
      for (const word of paragraph.split(/ +/)) {
        if (current === "") current = word;
        else if (current.length + 1 + word.length <= width - indent.length) current += ` ${word}`;
        else {
          lines.push(current);
          current = word;
        }
      }
      lines.push(current);
      return lines.map((line, i) => (i === 0 ? line : `${indent}${line}`)).join("\n");
    })
    .join("\n");
}

/** The colours, on only where they help: a terminal, and no NO_COLOR. */
export function colours(stream: NodeJS.WriteStream = process.stdout): ReturnType<typeof pc.createColors> {
  const forced = process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== "0";
  const on = !process.env.NO_COLOR && (forced || (Boolean(stream.isTTY) && process.env.TERM !== "dumb"));
  return pc.createColors(on);
}
