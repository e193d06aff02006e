/**
 * The command line: parse flags, call one function per command, map every error to one line and
 * an exit code. Commands are loaded lazily so `--version` and `--help` stay fast.
 */
import { Argument, Command, CommanderError, Option } from "commander";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { packageVersion } from "../package-root.js";
import { ExitCode, ExitError } from "./exit.js";
import { jobsFlag } from "./jobs.js";
import { modelOptions } from "./model-options.js";
import { liveOptions } from "./dump-options.js";
import { numberFlag } from "./numbers.js";
import { earlyCore, endEarlyDebugger, startDebuggerEarly } from "./early-debugger.js";
import { loadCoreEarly } from "./early-load.js";
import { installSignalHandlers } from "./signals.js";
import { noteCodeUse } from "../code-cache.js";

const collect = (value: string, previous: string[]) => [...previous, value];
// Node's timers hold at most 2^31-1 ms (24.8 days); a longer one would fire at once.
const seconds = numberFlag("--timeout", { whole: false, min: 0, aboveMin: true, max: 2_147_483, unit: "seconds" });

/** Flags every command that opens a dump shares. */
function dumpOptions(command: Command): Command {
  return command
    .option("--exe <path>", "the crashed program (default: the one the core names)")
    .option("--hs-err <file>", "a JVM's fatal error log, hs_err_pid<pid>.log (default: found beside the dump or in the current folder)")
    .option("--sysroot <dir>", "where the target's system libraries are")
    .option("--solib-search-path <dirs>", "extra directories for shared libraries")
    .option("--debug-file-directory <dirs>", "where separate debug info is")
    .option("--modules-path <dir>", "a folder of the dump's modules: a minidump's DLLs, a core's shared libraries (repeat for more)", collect, [])
    .option("--symbols <dir|url>", "where debug information is: a symbol store (Microsoft, Breakpad), a build-id tree, a folder of PDBs or debug files, or a symbol server's URL (repeat for more, searched in order; also $DUMPDBG_SYMBOLS, $_NT_SYMBOL_PATH, $DEBUGINFOD_URLS)", collect, [])
    .option("--symbols-cache <dir>", "where downloaded symbols are kept (default: $XDG_CACHE_HOME/dumpdbg/symbols)")
    .option("--offline", "download nothing: symbols only from the cache and folders")
    .addOption(new Option("--symbols-config <places>").hideHelp())
    .addOption(new Option("--debugger <name>", "the debugger that reads the dump (auto: by the dump's format and what is installed)").choices(["auto", "gdb", "lldb", "cdb", "dlv"]))
    .option("--gdb <path>", "the gdb binary (default: $DUMPDBG_GDB or gdb)")
    .option("--lldb <path>", "the lldb binary (default: $DUMPDBG_LLDB or lldb)")
    .option("--cdb <path>", "the cdb binary (default: $DUMPDBG_CDB or cdb)")
    .option("--dlv <path>", "Delve, for a Go program's core (default: $DUMPDBG_DLV or dlv)")
    .option("--symbol-path <path>", "cdb's symbol path (default: $_NT_SYMBOL_PATH, else the dump's and the program's folders; no symbol server unless named here)")
    .option("--timeout <seconds>", "per-command debugger timeout", seconds, 30);
}

/** Exit 6, as every command's --help says it. */
const SIX = "6 a file could not be written or read (disk full, permission, read-only)";

/** The end of a command's --help: examples, the environment it reads, its exit codes. */
function footer(parts: { examples: string[]; env: string[]; exits: string }): string {
  return ["", "Examples:", ...parts.examples.map((e) => `  ${e}`), "", "Environment:", ...parts.env.map((e) => `  ${e}`), "", `Exit codes: ${parts.exits}`].join("\n");
}

/**
 * What users of gdb and of other CLIs type, read as dumpdbg's own: `-V` for `-v`, and `exec`'s
 * `-ex CMD` for `-c CMD`. A `-c` given an existing file is gdb's core-file habit: say how to open it.
 */
export function conventionalArgs(argv: string[]): string[] {
  const args = [...argv];
  if (args[2] === "-V") args[2] = "-v";
  const exec = args.indexOf("exec", 2);
  if (exec < 0) return args;
  for (let i = exec + 1; i < args.length; i++) {
    if (args[i] === "--") break;
    if (args[i] === "-ex") args[i] = "-c";
    if ((args[i] === "-c" || args[i] === "--command") && args[i + 1] !== undefined && looksLikeDump(args[i + 1]!)) {
      throw new ExitError(ExitCode.usage, `-c runs a debugger command here, not gdb's core file: give the dump first, as in dumpdbg exec ${args[i + 1]} -ex bt`);
    }
    if (args[i] === "-c" || args[i] === "--command") i++;
  }
  return args;
}

/** An ELF file or a minidump, by its first bytes: what gdb's `-c` would have been given. */
function looksLikeDump(value: string): boolean {
  if (/\s/.test(value)) return false;
  let fd = -1;
  try {
    if (!statSync(value).isFile()) return false;
    fd = openSync(value, "r");
    const magic = Buffer.alloc(4);
    readSync(fd, magic, 0, 4, 0);
    return magic.toString("latin1") === "\x7fELF" || magic.toString("latin1") === "MDMP";
  } catch {
    return false;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

/**
 * The dump a command reads: the one named, or with `--coredump` the store's newest (of a pid or a
 * program); one usage line when it names neither or both.
 */
async function dumpNamed(dump: string | undefined, coredump: string | boolean | undefined, pid: number | undefined): Promise<string | undefined> {
  if (coredump === undefined || coredump === false) {
    if (dump === undefined && pid === undefined) throw new ExitError(ExitCode.usage, "name the dump to read, --coredump [pid|name] for systemd-coredump's newest core, or --pid PID to dump a live process");
    return dump;
  }
  if (dump !== undefined || pid !== undefined) throw new ExitError(ExitCode.usage, "name one of a dump, --coredump or --pid, not two");
  const { pickStoredCore } = await import("../debuggers/coredump-store.js");
  return pickStoredCore(coredump === true ? undefined : coredump);
}

export function buildProgram(): Command {
  const program = new Command("dumpdbg")
    .description("Explains why a program crashed or hung, from its crash dump.")
    .version(packageVersion(), "-v, --version", "print the version (also -V)")
    .option("--debug", "show stack traces of internal errors")
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({ outputError: () => undefined });

  dumpOptions(
    program
      .command("exec")
      .description("run debugger commands on a dump in one persistent session")
      .argument("<dump>", "core file or minidump")
      .option("-c, --command <cmd>", "a command to run, also -ex as in gdb (repeat for more)", collect, [])
      .option("--json", "print one JSON array of results on stdout")
      .option("--unsafe", "lift the command safety policy (dangerous with untrusted dumps)")
      .addHelpText(
        "after",
        footer({
          examples: ["dumpdbg exec core.1234 -ex bt -ex 'info registers'", "dumpdbg exec crash.dmp --json -ex 'thread backtrace all'"],
          env: ["DUMPDBG_GDB, DUMPDBG_LLDB, DUMPDBG_CDB   the debugger binaries", "DUMPDBG_SYMBOLS                          more --symbols places", "_NT_SYMBOL_PATH, DEBUGINFOD_URLS         symbol servers (srv*CACHE*URL; debuginfod URLs)"],
          exits: `0 every command ran, 1 a command failed or was refused, 2 usage, 3 bad dump, 4 debugger failed, ${SIX}, 130 interrupted`,
        }),
      ),
  ).action(async (dump: string, options) => {
    const { exec } = await import("./exec.js");
    return exec(dump, options);
  });

  dumpOptions(
    liveOptions(
      program
        .command("triage")
        .description("the crash verdict in a few lines: kind, where, why (no model, no session)")
        .argument("[dump]", "core file or minidump, also compressed (zstd, lz4, xz, gzip) or an apport .crash report (or --pid PID: a live process)")
        .option("--coredump [pid|name]", "the newest core in systemd-coredump's store (of that pid or program), as coredumpctl picks it")
        .option("--json", "print the crash object of the JSON report"),
    ).addHelpText(
      "after",
      footer({
        examples: ["dumpdbg triage core.1234", "dumpdbg triage core.server.1000.<boot>.4242.<time>.zst", "dumpdbg triage --coredump server", "dumpdbg triage --pid 4242 --keep-dump ./server-hung.core", "dumpdbg triage crash.dmp --modules-path ./dlls --json"],
        env: ["DUMPDBG_GDB, DUMPDBG_LLDB, DUMPDBG_CDB   the debugger binaries", "DUMPDBG_SYMBOLS                          more --symbols places", "_NT_SYMBOL_PATH, DEBUGINFOD_URLS         symbol servers (srv*CACHE*URL; debuginfod URLs)"],
        exits: `0 done, 2 usage, 3 bad dump or executable, no such --pid, 4 debugger failed or not permitted to attach to --pid, ${SIX}, 130 interrupted`,
      }),
    ),
  ).action(async (dump: string | undefined, options) => {
    const { triage } = await import("./triage.js");
    return triage(await dumpNamed(dump, options.coredump, options.pid), options);
  });

  dumpOptions(
    program
      .command("symbols")
      .description("every module of the dump with its ids, and where its symbols came from or why there are none")
      .argument("<dump>", "core file or minidump")
      .option("--json", "print the table as JSON")
      .addHelpText(
        "after",
        footer({
          examples: ["dumpdbg symbols crash.dmp --symbols ./symbols --symbols https://symbols.example.com", "dumpdbg symbols core.1234 --json"],
          env: ["DUMPDBG_SYMBOLS                          more --symbols places", "_NT_SYMBOL_PATH, DEBUGINFOD_URLS         symbol servers (srv*CACHE*URL; debuginfod URLs)"],
          exits: `0 done, 2 usage, 3 bad dump or executable, 4 debugger failed, ${SIX}, 130 interrupted`,
        }),
      ),
  ).action(async (dump: string, options) => {
    const { symbols } = await import("./symbols.js");
    return symbols(dump, options);
  });

  const analysisFlags = (command: Command) =>
    dumpOptions(command)
      .option("--sessions-dir <dir>", "where sessions live (default: $DUMPDBG_SESSIONS_DIR, the project's .sessions, or dumpdbg's home; see dumpdbg config)")
      .option("--out <dir>", "where the reports are written", "reports")
      .option("--json", "print the JSON report alone on stdout");
  const analysisOptions = (command: Command) =>
    modelOptions(analysisFlags(command), { provider: "auto", localModel: true })
      .option("--unsafe", "lift the command safety policy for the commands models propose")
      .option("-q, --quiet", "print the verdict and the report paths only, no progress")
      .option("--verbose", "print every progress line, each debugger command too, also on a terminal");

  analysisOptions(
    liveOptions(
      program
        .command("analyze")
        .description("explain the crash or hang in a dump: hypotheses, tests, conclusion, critique, report")
        .argument("[dump]", "core file or minidump, also compressed (zstd, lz4, xz, gzip) or an apport .crash report (or --pid PID: a live process)")
        .option("--coredump [pid|name]", "the newest core in systemd-coredump's store (of that pid or program), as coredumpctl picks it")
        .option("--issue <text>", "what went wrong, in your words (the analysis starts from it)")
        .option("--chat", "ask follow-up questions after the report, on the same session"),
    ).addHelpText(
        "after",
        footer({
          examples: ["dumpdbg analyze core.1234 --provider offline", 'dumpdbg analyze core.1234 --issue "hangs after login" --chat', "dumpdbg analyze crash.dmp --symbols ./symbols --json > report.json", 'dumpdbg analyze --pid 4242 --issue "stopped answering" --keep-dump ./hung.core'],
          env: [
            "OPENAI_API_KEY, ANTHROPIC_API_KEY        cloud models (--provider auto picks the one set)",
            "OLLAMA_HOST                              a local Ollama (default http://127.0.0.1:11434)",
            "DUMPDBG_SESSIONS_DIR                     where sessions live",
            "DUMPDBG_GDB, DUMPDBG_LLDB, DUMPDBG_CDB   the debugger binaries",
          ],
          exits: `0 done, 2 usage, 3 bad dump or executable, no such --pid, 4 debugger failed or not permitted to attach to --pid, 5 model provider failed, ${SIX}, 130 interrupted (resume it)`,
        }),
      ),
  ).action(async (dump: string | undefined, options) => {
    const { analyze } = await import("./analyze.js");
    return analyze(await dumpNamed(dump, options.coredump, options.pid), options);
  });

  analysisOptions(
    program
      .command("resume")
      .description("continue an interrupted analysis from its last checkpoint")
      .argument("<session-id>", "the session (see dumpdbg sessions list)")
      .addHelpText(
        "after",
        footer({
          examples: ["dumpdbg resume 20261126-1430", "dumpdbg resume 20261126-143012-core-a1b2 --sessions-dir /srv/sessions"],
          env: ["DUMPDBG_SESSIONS_DIR                     where sessions live", "DUMPDBG_GDB, DUMPDBG_LLDB, DUMPDBG_CDB   the debugger binaries"],
          exits: `0 done, 2 usage, 3 unknown or damaged session, bad dump, 4 debugger failed, 5 model provider failed, ${SIX}, 130 interrupted (resume it again)`,
        }),
      ),
  ).action(async (id: string, options) => {
    const { resume } = await import("./resume.js");
    return resume(id, options);
  });

  dumpOptions(
    modelOptions(
      program
        .command("chat")
        .description("ask follow-up questions about an analysed dump, in its session")
        .argument("<session-id>", "the session (see dumpdbg sessions list)")
        .option("--sessions-dir <dir>", "where sessions live (default: $DUMPDBG_SESSIONS_DIR, the project's .sessions, or dumpdbg's home; see dumpdbg config)")
        .option("--out <dir>", "where /report writes the report", "reports"),
      { provider: "auto", localModel: true },
    )
      .option("--max-turns <n>", "questions to answer before the chat stops taking more (default: 50)", numberFlag("--max-turns", { whole: true, min: 1 }))
      .option("--max-seconds <s>", "time one answer may take (default: 120)", numberFlag("--max-seconds", { whole: false, min: 0, aboveMin: true }))
      .option("--unsafe", "lift the command safety policy for /exec and the model's commands")
      .addHelpText(
        "after",
        footer({
          examples: ["dumpdbg chat 20261126-1430", "echo 'which pointer was null?' | dumpdbg chat 20261126-1430 --provider offline"],
          env: ["OPENAI_API_KEY, ANTHROPIC_API_KEY        cloud models (--provider auto picks the one set)", "DUMPDBG_SESSIONS_DIR                     where sessions live"],
          exits: `0 done, 2 usage, 3 unknown or damaged session, 4 debugger failed, 5 model provider failed, ${SIX}, 130 interrupted`,
        }),
      ),
  ).action(async (id: string, options) => {
    const { chat } = await import("./chat.js");
    return chat(id, options);
  });

  program
    .command("report")
    .description("re-render a session's report (md, html, json)")
    .argument("<session-id>")
    .option("--format <list>", "formats, comma-separated", "md,html,json")
    .option("--out <dir>", "where the reports go", "reports")
    .option("--sessions-dir <dir>", "where sessions live (default: $DUMPDBG_SESSIONS_DIR, the project's .sessions, or dumpdbg's home; see dumpdbg config)")
    .addHelpText(
      "after",
      footer({
        examples: ["dumpdbg report 20261126-1430 --format html", "dumpdbg report 20261126-1430 --out /srv/reports"],
        env: ["DUMPDBG_SESSIONS_DIR                     where sessions live"],
        exits: `0 done, 2 usage, 3 unknown session or no saved report, a file of yours where a report would go, ${SIX}`,
      }),
    )
    .action(async (id: string, options) => {
      const { report } = await import("./report.js");
      return report(id, options);
    });

  dumpOptions(
    modelOptions(
      program
        .command("batch")
      .description("triage many dumps in parallel and group them by bug: one report row per bug")
      .argument("[paths...]", "dumps, or folders of them (compressed dumps and apport .crash reports too)")
      .option("--coredump", "every core in systemd-coredump's store (/var/lib/systemd/coredump, or $DUMPDBG_COREDUMP_DIR)")
      .option("--jobs <n>", "debugger sessions at a time (default: the number of cores)", jobsFlag)
      .option("--queue <url>", "hand the dumps to `dumpdbg worker`s through this Redis queue (redis://HOST:PORT) instead of triaging them here")
      .option("--json", "print the batch document alone on stdout")
      .option("--out <dir>", "where the batch report is written", "reports")
      .option("--analyze", "one full analysis per bug, on its most complete dump")
      .option("--sessions-dir <dir>", "where analysis sessions live (default: $DUMPDBG_SESSIONS_DIR, the project's .sessions, or dumpdbg's home; see dumpdbg config)"),
      { provider: "offline", purpose: "for --analyze", localModel: false },
    ).addHelpText(
        "after",
        footer({
          examples: ["dumpdbg batch ./crashes --jobs 4", "dumpdbg batch ./crashes --analyze --json > batch.json", "dumpdbg batch /srv/crashes --queue redis://queue.internal:6379"],
          env: ["DUMPDBG_SESSIONS_DIR                     where triage results and analyses are kept", "DUMPDBG_GDB, DUMPDBG_LLDB, DUMPDBG_CDB   the debugger binaries"],
          exits: `0 done (unreadable dumps are rows of the report), 2 usage, 3 nothing could be read or the queue is unreachable, ${SIX}, 130 interrupted (run it again to go on)`,
        }),
      ),
  ).action(async (paths: string[], options) => {
    const { batch } = await import("./batch.js");
    if (options.coredump) paths = [...paths, (await import("../debuggers/coredump-store.js")).coredumpFolder()];
    if (paths.length === 0) throw new ExitError(ExitCode.usage, "name the dumps or folders to triage, or --coredump for systemd-coredump's store");
    return batch(paths, options);
  });

  modelOptions(
    program
      .command("worker")
    .description("take batch work from a Redis queue: triage and analyse the dumps `dumpdbg batch --queue` puts on it")
    .requiredOption("--queue <url>", "the queue's Redis (redis://HOST:PORT)")
    .option("--jobs <n>", "dumps at a time (default: the number of cores)", jobsFlag)
    .option("--stall-seconds <n>", "how long the job of a worker that stopped answering waits before another worker takes it", numberFlag("--stall-seconds", { whole: false, min: 1, max: 86_400, unit: "seconds" }), 30)
    .option("--out <dir>", "where analysis reports are written", "reports")
    .option("--sessions-dir <dir>", "where analysis sessions live (default: $DUMPDBG_SESSIONS_DIR, the project's .sessions, or dumpdbg's home; see dumpdbg config)"),
    { provider: "offline", purpose: "for analyses", localModel: false },
  )
    .option("--gdb <path>", "the gdb binary (default: $DUMPDBG_GDB or gdb)")
    .option("--lldb <path>", "the lldb binary (default: $DUMPDBG_LLDB or lldb)")
    .option("--cdb <path>", "the cdb binary (default: $DUMPDBG_CDB or cdb)")
    .option("--dlv <path>", "Delve, for a Go program's core (default: $DUMPDBG_DLV or dlv)")
    .addHelpText(
      "after",
      `\nRuns until Ctrl+C or SIGTERM, then finishes the dumps in hand (a second Ctrl+C ends at once).\nA job whose worker dies is taken by another after --stall-seconds; a dump that kills two workers is an error row.\n\nExamples:\n  dumpdbg worker --queue redis://queue.internal:6379 --jobs 4\n  dumpdbg worker --queue redis://queue.internal:6379 --provider openai --out /srv/reports\n\nExit codes: 0 stopped, 2 usage error, 3 queue unreachable, ${SIX}, 130 interrupted.`,
    )
    .action(async (options) => {
      const { worker } = await import("./worker.js");
      return worker(options);
    });

  program
    .command("mcp")
    .description("serve dumpdbg to coding agents: a Model Context Protocol server on stdio")
    .option("--sessions-dir <dir>", "where sessions live (default: $DUMPDBG_SESSIONS_DIR, the project's .sessions, or dumpdbg's home; see dumpdbg config)")
    .option("--out <dir>", "where analysis reports are written", "reports")
    .option("--idle-minutes <n>", "close a session's debugger after this long unused", numberFlag("--idle-minutes", { whole: false, min: 0, aboveMin: true }), 30)
    .addHelpText(
      "after",
      footer({
        examples: ["dumpdbg mcp --sessions-dir ~/.dumpdbg-sessions", `{ "mcpServers": { "dumpdbg": { "command": "dumpdbg", "args": ["mcp"] } } }   (an MCP client's config)`],
        env: ["OPENAI_API_KEY, ANTHROPIC_API_KEY        models for the analyze tool", "DUMPDBG_SESSIONS_DIR                     where sessions live"],
        exits: `0 the client went away, 2 usage, ${SIX}, 130 interrupted`,
      }),
    )
    .action(async (options) => {
      const { mcp } = await import("./mcp.js");
      return mcp(options);
    });

  const sessionsFooter = (examples: string[]) =>
    footer({ examples, env: ["DUMPDBG_SESSIONS_DIR                     where sessions live"], exits: `0 done, 2 usage, 3 unknown session, ${SIX}` });
  const sessions = program
    .command("sessions")
    .description("list, show and remove analysis sessions")
    .addHelpText("after", sessionsFooter(["dumpdbg sessions list", "dumpdbg sessions show 20261126-1430", "dumpdbg sessions cleanup --days 7 --keep 20"]));
  const sessionsDir = (command: Command, examples: string[]) =>
    command
      .option("--sessions-dir <dir>", "where sessions live (default: $DUMPDBG_SESSIONS_DIR, the project's .sessions, or dumpdbg's home; see dumpdbg config)")
      .option("--json", "JSON output")
      .addHelpText("after", sessionsFooter(examples));
  sessionsDir(sessions.command("list").description("the sessions, oldest first"), ["dumpdbg sessions list", "dumpdbg sessions list --json --sessions-dir /srv/sessions"]).action(async (options) => {
    (await import("./sessions.js")).list(options);
  });
  sessionsDir(sessions.command("show").description("one session's details").argument("<id>"), ["dumpdbg sessions show 20261126-1430", "dumpdbg sessions show 20261126-1430 --json"]).action(async (id: string, options) => {
    (await import("./sessions.js")).show(id, options);
  });
  sessionsDir(sessions.command("rm").description("remove sessions").argument("<id...>"), ["dumpdbg sessions rm 20261126-1430", "dumpdbg sessions rm 20261126-1430 20261127-0915"]).action(async (ids: string[], options) => {
    await (await import("./sessions.js")).rm(ids, options);
  });
  sessionsDir(
    sessions
      .command("cleanup")
      .description("remove old sessions")
      .option("--days <n>", "remove sessions not updated for N days", numberFlag("--days", { whole: false, min: 0 }))
      .option("--keep <k>", "always keep the K newest", numberFlag("--keep", { whole: true, min: 0 })),
    ["dumpdbg sessions cleanup --days 7", "dumpdbg sessions cleanup --days 30 --keep 20"],
  ).action(async (options) => {
    await (await import("./sessions.js")).cleanup(options);
  });

  program
    .command("config")
    .description("the effective settings (provider, model, debuggers, folders) and where each came from")
    .option("--json", "print them as JSON")
    .addHelpText(
      "after",
      '\nConfig files (JSON): dumpdbg.config.json or .dumpdbgrc in the project (searched from here upwards), or a\n"dumpdbg" key in package.json; the user\'s in $XDG_CONFIG_HOME/dumpdbg/config.json. Settings: provider, model,\nlocalModel, gdb, lldb, cdb, dlv, sessionsDir, reportsDir, such as { "provider": "offline", "sessionsDir": ".sessions" }.\n\nExamples:\n  dumpdbg config\n  dumpdbg config --json',
    )
    .action(async (options) => {
      (await import("./config-command.js")).showConfig(options);
    });

  program
    .command("doctor")
    .description("show which debuggers and model providers are usable")
    .option("--gdb <path>", "the gdb binary to check")
    .option("--lldb <path>", "the lldb binary to check")
    .option("--cdb <path>", "the cdb binary to check")
    .option("--dlv <path>", "the dlv binary to check")
    .option("--json", "print the findings as JSON")
    .addHelpText("after", "\nExamples:\n  dumpdbg doctor\n  dumpdbg doctor --gdb /opt/gdb-14/bin/gdb --json\n\nExit codes: 0 a debugger is usable, 2 usage, 4 no debugger is usable")
    .action(async (options) => {
      const { doctor } = await import("./doctor.js");
      return doctor(options);
    });

  program
    .command("completion")
    .description("print a shell completion script for dumpdbg's commands and flags")
    .addArgument(new Argument("<shell>", "the shell").choices(["bash", "zsh", "fish"]))
    .addHelpText("after", '\nExamples:\n  source <(dumpdbg completion bash)                              # in ~/.bashrc\n  dumpdbg completion zsh > "${fpath[1]}/_dumpdbg"\n  dumpdbg completion fish > ~/.config/fish/completions/dumpdbg.fish\n\nExit codes: 0 done, 2 usage')
    .action(async (shell: "bash" | "zsh" | "fish") => {
      const { completionScript } = await import("./completion.js");
      process.stdout.write(completionScript(program, shell));
    });

  program.hook("preAction", async (_program, action) => {
    // The command's own code runs: its code cache should hold it (code-cache.ts).
    noteCodeUse(topCommandOf(action).name());
    // Settings from config files fill the options the command line left at their defaults.
    const { applyConfig } = await import("./apply-config.js");
    applyConfig(action);
  });
  return program;
}

/** `sessions` for `sessions list`: the command given right after the program's name. */
function topCommandOf(command: Command): Command {
  let top = command;
  while (top.parent?.parent) top = top.parent;
  return top;
}

/**
 * Dumps are analysed on air-gapped machines and hold secrets: LangChain's tracing would send every
 * prompt and graph step to LangSmith if the environment turned it on, so it is always off.
 */
function keepTracingOff(): void {
  for (const name of ["LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING", "LANGCHAIN_TRACING_V2"]) {
    process.env[name] = "false";
  }
}

/** Runs the CLI and returns the exit code; the bin shim sets it. */
export async function main(argv: string[]): Promise<number> {
  // First the handlers, so that no debugger started from here on can outlive a signal.
  installSignalHandlers();
  startDebuggerEarly(argv);
  void loadCoreEarly(earlyCore());
  keepTracingOff();
  const program = buildProgram();
  // `dumpdbg … | head`: a reader that has seen enough is not an error.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(ExitCode.ok);
    throw error;
  });
  // No command: the help, where a script's error output goes, and a usage error.
  if (argv.length <= 2) {
    process.stderr.write(program.helpInformation());
    return ExitCode.usage;
  }
  try {
    await program.parseAsync(conventionalArgs(argv));
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version" || error.code === "commander.help") {
        return ExitCode.ok;
      }
      process.stderr.write(`dumpdbg: ${error.message.replace(/^error: /, "")} (see dumpdbg --help)\n`);
      return ExitCode.usage;
    }
    // Loaded only on failure: it pulls in the error types of every layer.
    const { reportError } = await import("./errors.js");
    return reportError(error, argv.includes("--debug"));
  } finally {
    await endEarlyDebugger();
  }
}
