/**
 * cdb's part of the command safety policy. Commands are case-insensitive; ";" chains commands, so
 * it is refused outright rather than split, as are alias expansions that could turn into anything.
 * The one extension that may be loaded is SOS, for .NET dumps, from a local path; its read-only
 * commands are allowed. dumpdbg's own `[thread T, frame F]` / `[source "FILE"]` prefix (`place.ts`, `../place-text.ts`)
 * only says where a command runs: the command after it is what is checked.
 */

import { expressionProblem, type ExpressionLanguage } from "../policy/expression.js";
import { parsePlaced } from "./place.js";
import {
  ALLOWED,
  CALLS_FUNCTION,
  CHANGES_SETTINGS,
  CHANGES_TARGET,
  CONTROLS_PROCESS,
  ENDS_SESSION,
  RUNS_BLOCK,
  RUNS_PROGRAM,
  RUNS_SHELL,
  SETS_BREAKPOINTS,
  WRITES_FILE,
  quoted,
  refuse,
  type PolicyVerdict,
} from "../policy/verdict.js";

// MASM, cdb's default syntax, reads memory and compares strings with operators and built-in
// functions that look like calls. The same rules serve the C++ of "??" and "dx", which has no
// Objective-C message sends.
const CDB_EXPRESSIONS: ExpressionLanguage = {
  notCalls: new Set([
    "poi", "by", "wo", "dwo", "qwo", "hi", "low", "not", "sizeof", "$ppoi", "$pby", "$pwo", "$pdwo", "$pqwo",
    "$iment", "$scmp", "$sicmp", "$spat", "$vvalid", "$fnsucc",
  ]),
  objcMessages: false,
  compiled: false,
};

const CDB_ALLOWED = new Set([
  "?", "??", "r", "d", "da", "db", "dc", "dd", "df", "dp", "dq", "du", "dw", "dyb", "dyd", "dds", "dps", "dqs",
  "dda", "ddp", "ddu", "dpa", "dpp", "dpu", "dqa", "dqp", "dqu", "ds", "dv", "dt", "dx", "dl", "ln", "u", "ub",
  "uf", "x", "s", "vertarget", "version", "ls", "lsa", "lsc", "lsp", "lsf",
  ".ecxr", ".exr", ".cxr", ".lastevent", ".frame", ".time", ".echo", ".chain", ".formats",
  "!analyze", "!address", "!peb", "!teb", "!locks", "!cs", "!gle", "!error", "!heap", "!runaway",
  "!uniqstack", "!handle", "!findstack", "!exchain", "!dh", "!dlls", "!lmi", "!vprot",
]);

/** SOS's commands that read the managed heap, stacks and runtime state, and nothing else. */
const SOS_READ_ONLY = new Set([
  "threads", "clrstack", "pe", "printexception", "syncblk", "dumpheap", "dumpobj", "do", "dso", "dumpstackobjects",
  "eeheap", "dumpstack", "eestack", "ip2md", "name2ee", "gcroot", "dumpmt", "dumpclass", "dumpmd", "dumparray", "da",
  "dumpvc", "dumpdomain", "dumpmodule", "dumpassembly", "threadpool", "finalizequeue", "gchandles", "gcwhere", "objsize",
  "threadstate", "clrthreads", "dumpil", "u", "ehinfo", "gcinfo", "verifyheap", "dumpruntimetypes", "dumpsig", "help", "soshelp",
]);


/** Turns [reason, "name name ..."] groups into a name -> reason table. */
const byName = (groups: ReadonlyArray<readonly [string, string]>): ReadonlyMap<string, string> =>
  new Map(groups.flatMap(([reason, names]) => names.split(" ").map((name) => [name, reason] as const)));

const CDB_REFUSALS = byName([
  [RUNS_SHELL, ".shell"],
  [CONTROLS_PROCESS, ".create .attach .detach .kill .abandon"],
  [RUNS_PROGRAM, ".restart g gh gn gu p pa pc ph pt t ta tb tc th tt wt"],
  [CALLS_FUNCTION, ".call"],
  [WRITES_FILE, ".write_cmd_hist .logopen .logappend .dump .writemem"],
  ["writes a file's contents into the program's memory", ".readmem"],
  ["loads an extension into the debugger", "!load"],
  ["runs a script", ".scriptload .scriptrun"],
  [CHANGES_TARGET, ".opendump .sympath .srcpath .srcfix .lsrcpath .lsrcfix .exepath .extpath"],
  ["points the symbol path at Microsoft's symbol server on the network; name a symbol path with --symbol-path instead", ".symfix"],
  ["reloads symbols, possibly from a symbol server on the network", ".reload"],
  [RUNS_BLOCK, ".block .for .foreach .if .while .do j z"],
  ["defines an alias, which can stand for any command", "as ad"],
  [SETS_BREAKPOINTS, "ba bc bd be bm bp br bs bsc bu"],
  [CHANGES_SETTINGS, "sxe sxd sxi sxn sxr"],
  ["opens the session to remote debuggers on the network", ".server .remote .servers .endsrv"],
  ["lists this host's processes, not the dump's", ".tlist"],
  [ENDS_SESSION, "q qq qd"],
  ["writes the program's memory", "a e ea eb ed ef ep eq eu ew eza ezu f fp m"],
]);

/** SOS's commands that write files, set breakpoints, change settings or reach the network. */
const SOS_REFUSALS = byName([
  [WRITES_FILE, "savemodule dumplog createdump"],
  [SETS_BREAKPOINTS, "bpmd"],
  [CHANGES_SETTINGS, "stoponexception setclrpath setsymbolserver sosflush"],
]);

// Options of otherwise read-only extensions that write files, load files, continue the program or
// set breakpoints.
const EXTENSION_OPTION_REFUSALS = new Map([
  ["!analyze", byName([
    ["writes an XML file", "-xmf"],
    ["continues the program or loads a file of known issues", "-c -load -unload"],
  ])],
  ["!heap", byName([[SETS_BREAKPOINTS, "-b"]])],
]);

export function checkCdbCommand(placed: string): PolicyVerdict {
  const text = parsePlaced(placed).command.trim();
  if (text.includes(";")) return refuse("the command", "chains several commands with \";\"");
  if (/\$\{|\$u\d/i.test(text)) return refuse("the command", "expands an alias, which could stand for any command");
  if (text.startsWith("~")) return checkCdbThreads(text);
  const script = /^\$\$?>?a?</.exec(text);
  if (script) return refuse(quoted(script[0]), "runs a script file");
  const name = /^(?:\?\?|\?|[.!][\w.]*|[A-Za-z]+)/.exec(text)?.[0].toLowerCase() ?? "";
  let args = text.slice(name.length);
  if (name === ".load" || name === ".loadby") return checkLoad(name, args.trim());
  const sos = /^!(?:sos\.)?(\w+)$/.exec(name)?.[1];
  if (sos !== undefined && !CDB_ALLOWED.has(name)) {
    const refusal = SOS_REFUSALS.get(sos);
    if (refusal) return refuse(quoted(name), refusal);
    if (SOS_READ_ONLY.has(sos)) return ALLOWED;
  }
  // The stack commands combine letters: k, kb, kp, kv, kn, kbn, kpn, kf, kc, kd, kl, km.
  const stack = /^k[bpvndfclm]{0,3}$/.test(name);
  const allowed = CDB_ALLOWED.has(name) || stack || /^lm[a-z]*$/.test(name);
  if (!allowed) {
    if (name === "") return refuse(quoted(text), "does not start with a cdb command name");
    const why = CDB_REFUSALS.get(name)
      ?? (name.startsWith("!") ? "is not one of the known read-only extension commands" : "is not on cdb's allowlist");
    return refuse(quoted(name), why);
  }
  const optionRefusals = EXTENSION_OPTION_REFUSALS.get(name);
  for (const word of optionRefusals ? args.trim().split(/[ \t]+/) : []) {
    const why = optionRefusals?.get(word.toLowerCase());
    if (why) return refuse(`option ${quoted(word)} of ${quoted(name)}`, why);
  }
  // "k = BasePtr StackPtr InstructionPtr" starts the walk at the given frame; that "=" assigns nothing.
  if (stack) args = args.replace(/^[ \t]*=/, "");
  const problem = expressionProblem(args, CDB_EXPRESSIONS);
  return problem ? refuse(`${quoted(name)} argument`, problem) : ALLOWED;
}

/**
 * `.load` and `.loadby` only for SOS: `.loadby sos coreclr` (beside the runtime the dump ran), `.load
 * sos`, `.load C:\\tools\\sos.dll`. A network path (`\\\\server\\share`) is refused as network access.
 */
function checkLoad(name: string, args: string): PolicyVerdict {
  if (/^\\\\|^\/\/|https?:/i.test(args)) return refuse(quoted(`${name} ${args}`), "loads an extension from the network");
  const file = args.replace(/^"(.*)"$/, "$1");
  const sos = name === ".loadby" ? /^sos\s+(?:coreclr|clr|mscorwks)$/i.test(args) : /^sos(?:\.dll)?$/i.test(file.split(/[\\/]/).at(-1) ?? "");
  return sos ? ALLOWED : refuse(quoted(name), "loads an extension into the debugger; only SOS may be loaded");
}

/** "~" lists threads, "~Ns" selects one, "~N cmd" and "~Ne cmd" run cmd per thread. */
function checkCdbThreads(text: string): PolicyVerdict {
  const spec = /^~(?:\*|\.|#|\d+|~\[([^\]]*)\])?/.exec(text);
  const threadId = spec?.[1];
  if (threadId !== undefined) {
    const problem = expressionProblem(threadId, CDB_EXPRESSIONS);
    if (problem) return refuse(quoted(spec?.[0] ?? "~"), problem);
  }
  const rest = text.slice(spec?.[0].length ?? 1).trim();
  if (rest === "" || rest.toLowerCase() === "s") return ALLOWED;
  const command = /^e[ \t]/i.test(rest) ? rest.slice(1).trim() : rest;
  // After a thread spec, f/u/n/m/g freeze, unfreeze, suspend, resume or run the thread.
  if (command === rest && /^[fungm]/i.test(rest)) return refuse(quoted(text), "changes a thread's state or runs it");
  if (command.startsWith("~")) return refuse(quoted(text), "nests thread commands");
  return checkCdbCommand(command);
}
