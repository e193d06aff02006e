/**
 * `dumpdbg completion bash|zsh|fish`: written from commander's definitions, so every command and
 * every visible flag of buildProgram() is in each script, and bash accepts its script as it is.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import type { Command, Option } from "commander";
import { buildProgram } from "../../src/cli/main.js";
import { runCli } from "../helpers/cli.js";

function everyCommand(command: Command): Command[] {
  return [command, ...command.commands.flatMap(everyCommand)];
}
const program = buildProgram();
const longFlags = (command: Command) => (command.options as Option[]).filter((o) => !o.hidden).map((o) => o.long!);

describe("shell completions", () => {
  it("bash: sourced, it registers dumpdbg's completion and completes commands, subcommands and choices", async () => {
    const { code, stdout } = await runCli(["completion", "bash"]);
    expect(code).toBe(0);
    const complete = (words: string[]) =>
      execFileSync("bash", ["-c", `source <(printf '%s' "$SCRIPT"); COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _dumpdbg; echo "\${COMPREPLY[*]}"; complete -p dumpdbg`], { env: { ...process.env, SCRIPT: stdout }, encoding: "utf8" }).split("\n");
    const [commands, registered] = complete(["dumpdbg", ""]);
    expect(registered).toBe("complete -o filenames -F _dumpdbg dumpdbg");
    expect(commands!.split(" ")).toEqual(expect.arrayContaining(program.commands.map((c) => c.name())));
    expect(complete(["dumpdbg", "sessions", ""])[0]!.split(" ")).toEqual(expect.arrayContaining(["list", "show", "rm", "cleanup"]));
    expect(complete(["dumpdbg", "triage", "--debugger", ""])[0]).toBe("auto gdb lldb cdb dlv");
    expect(complete(["dumpdbg", "sessions", "cleanup", "--"])[0]!.split(" ")).toEqual(expect.arrayContaining(["--days", "--keep", "--sessions-dir"]));
    for (const command of everyCommand(program)) {
      for (const flag of longFlags(command)) expect(stdout).toContain(flag);
    }
  });

  it.each(["zsh", "fish"])("%s: lists every command and every visible option", async (shell) => {
    const { code, stdout } = await runCli(["completion", shell]);
    expect(code).toBe(0);
    for (const command of everyCommand(program)) {
      if (command !== program) expect(stdout).toMatch(new RegExp(`\\b${command.name()}\\b`));
      for (const flag of longFlags(command)) expect(stdout).toContain(shell === "fish" ? `-l ${flag.slice(2)}` : flag);
    }
  });

  it("names the shells it knows when given another", async () => {
    const { code, stderr } = await runCli(["completion", "tcsh"]);
    expect(code).toBe(2);
    expect(stderr).toContain("Allowed choices are bash, zsh, fish");
  });
});

describe("every command's --help", () => {
  const paths = everyCommand(program)
    .filter((c) => c !== program)
    .map((c) => {
      const path: string[] = [];
      for (let at: Command | null = c; at && at !== program; at = at.parent) path.unshift(at.name());
      return path;
    });
  it.each(paths.map((p) => [p.join(" "), p]))("dumpdbg %s --help ends with examples of dumpdbg", async (_name, path) => {
    const { code, stdout } = await runCli([...(path as string[]), "--help"]);
    expect(code).toBe(0);
    const examples = stdout.split("\nExamples:\n")[1];
    expect(examples, `dumpdbg ${(path as string[]).join(" ")} --help has no Examples section`).toBeDefined();
    expect(examples).toMatch(/^ {2}.*dumpdbg /m);
  });
});
