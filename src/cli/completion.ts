/**
 * Shell completions written from commander's own definitions of the commands, so that a command
 * or flag added to buildProgram() completes without anyone editing a script.
 */
import type { Command, Option } from "commander";

type Shell = "bash" | "zsh" | "fish";

/** One command as the completions see it: its words, its flags and the flags that take a value. */
interface CommandWords {
  path: string[];
  description: string;
  options: { flags: string[]; description: string; takesValue: boolean; choices: string[] }[];
  subcommands: string[];
}

function visibleOptions(command: Command): CommandWords["options"] {
  const options = (command.options as Option[]).filter((o) => !o.hidden);
  const help = { flags: ["-h", "--help"], description: "display help for command", takesValue: false, choices: [] as string[] };
  return [
    ...options.map((o) => ({
      flags: [o.short, o.long].filter((f): f is string => Boolean(f)),
      description: o.description,
      takesValue: o.required || o.optional,
      choices: o.argChoices ?? [],
    })),
    help,
  ];
}

/** Every command, the program first, in the order commander lists them. */
export function commandWords(program: Command): CommandWords[] {
  const all: CommandWords[] = [];
  const walk = (command: Command, path: string[]) => {
    all.push({ path, description: command.description(), options: visibleOptions(command), subcommands: command.commands.map((c) => c.name()) });
    for (const sub of command.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return all;
}

const quote = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;

function bash(words: CommandWords[]): string {
  const cases = words.map((w) => {
    const flags = w.options.flatMap((o) => o.flags);
    const valued = w.options.filter((o) => o.takesValue).flatMap((o) => o.flags);
    const choices = w.options
      .filter((o) => o.choices.length > 0)
      .map((o) => `          ${o.flags.join("|")}) COMPREPLY=($(compgen -W ${quote(o.choices.join(" "))} -- "$cur")); return ;;`);
    return [
      `      ${quote(w.path.join(" "))})`,
      `        case "$prev" in`,
      ...choices,
      ...(valued.length ? [`          ${valued.join("|")}) COMPREPLY=($(compgen -f -- "$cur")); return ;;`] : []),
      `        esac`,
      `        words_here=${quote([...w.subcommands, ...flags].join(" "))} files=${w.subcommands.length ? 0 : 1}`,
      `        ;;`,
    ].join("\n");
  });
  return `# dumpdbg completion for bash: source <(dumpdbg completion bash)
_dumpdbg() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" path="" words_here="" files=0 i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      -*) ;;
      *) if [[ " $(_dumpdbg_subcommands "$path") " == *" \${COMP_WORDS[i]} "* ]]; then path="\${path:+$path }\${COMP_WORDS[i]}"; fi ;;
    esac
  done
  case "$path" in
${cases.join("\n")}
  esac
  if [[ "$cur" == -* || "$files" == 0 ]]; then
    COMPREPLY=($(compgen -W "$words_here" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$words_here" -- "$cur") $(compgen -f -- "$cur"))
  fi
}
_dumpdbg_subcommands() {
  case "$1" in
${words.map((w) => `    ${quote(w.path.join(" "))}) echo ${quote(w.subcommands.join(" "))} ;;`).join("\n")}
  esac
}
complete -o filenames -F _dumpdbg dumpdbg
`;
}

/** zsh's _arguments spec of one option: `(-c --command)'{-c,--command}'[text]:value:_files'`. */
function zshOption(option: CommandWords["options"][number]): string {
  const text = option.description.replace(/[[\]']/g, "").replace(/:/g, "\\:");
  const value = option.takesValue ? (option.choices.length ? `:value:(${option.choices.join(" ")})` : ":value:_files") : "";
  if (option.flags.length === 1) return quote(`${option.flags[0]}[${text}]${value}`);
  return `${quote(`(${option.flags.join(" ")})`)}{${option.flags.join(",")}}${quote(`[${text}]${value}`)}`;
}

function zsh(words: CommandWords[]): string {
  const fn = (w: CommandWords) => `_dumpdbg${w.path.map((p) => `_${p}`).join("")}`;
  const functions = words.map((w) => {
    const options = w.options.map((o) => `    ${zshOption(o)}`);
    if (w.subcommands.length === 0) {
      return `${fn(w)}() {\n  _arguments -s \\\n${options.join(" \\\n")} \\\n    '*:file:_files'\n}`;
    }
    const subs = words.filter((s) => s.path.length === w.path.length + 1 && s.path.slice(0, -1).join(" ") === w.path.join(" "));
    return [
      `${fn(w)}() {`,
      `  local curcontext="$curcontext" state line`,
      `  _arguments -C \\`,
      ...options.map((o) => `${o} \\`),
      `    '1:command:->command' \\`,
      `    '*::arg:->args'`,
      `  case $state in`,
      `    command)`,
      `      local -a commands=(`,
      ...subs.map((s) => `        ${quote(`${s.path.at(-1)}:${s.description.replace(/:/g, "\\:")}`)}`),
      `      )`,
      `      _describe command commands ;;`,
      `    args)`,
      `      case $line[1] in`,
      ...subs.map((s) => `        ${s.path.at(-1)}) ${fn(s)} ;;`),
      `      esac ;;`,
      `  esac`,
      `}`,
    ].join("\n");
  });
  return `#compdef dumpdbg
# dumpdbg completion for zsh: dumpdbg completion zsh > "\${fpath[1]}/_dumpdbg"
${functions.join("\n\n")}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _dumpdbg "$@"
else
  compdef _dumpdbg dumpdbg
fi
`;
}

function fish(words: CommandWords[]): string {
  const lines = ["# dumpdbg completion for fish: dumpdbg completion fish > ~/.config/fish/completions/dumpdbg.fish", "complete -c dumpdbg -f"];
  for (const w of words) {
    const parent = w.path.join(" ");
    const condition = w.path.length === 0 ? "__fish_use_subcommand" : `__fish_seen_subcommand_from ${w.path.at(-1)}`;
    for (const sub of words.filter((s) => s.path.length === w.path.length + 1 && s.path.slice(0, -1).join(" ") === parent)) {
      lines.push(`complete -c dumpdbg -n ${quote(condition)} -a ${sub.path.at(-1)} -d ${quote(sub.description)}`);
    }
    for (const o of w.options) {
      const short = o.flags.find((f) => /^-[^-]/.test(f));
      const long = o.flags.find((f) => f.startsWith("--"));
      const names = [short ? `-s ${short.slice(1)}` : "", long ? `-l ${long.slice(2)}` : ""].filter(Boolean).join(" ");
      const value = o.takesValue ? (o.choices.length ? ` -x -a ${quote(o.choices.join(" "))}` : " -r -F") : "";
      lines.push(`complete -c dumpdbg -n ${quote(condition)} ${names}${value} -d ${quote(o.description)}`);
    }
    if (w.subcommands.length === 0 && w.path.length > 0) lines.push(`complete -c dumpdbg -n ${quote(condition)} -F`);
  }
  return `${lines.join("\n")}\n`;
}

/** The completion script of one shell for the program's commands. */
export function completionScript(program: Command, shell: Shell): string {
  const words = commandWords(program);
  return shell === "bash" ? bash(words) : shell === "zsh" ? zsh(words) : fish(words);
}
