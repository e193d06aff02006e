import { describe, it, expect } from "vitest";
import { checkCommand } from "../../src/debuggers/policy/index.js";

const reasonOf = (command: string): string | null => {
  const verdict = checkCommand("cdb", command);
  return verdict.allowed ? null : verdict.reason;
};

const CDB_ALLOWED = [
  // Stacks, in every combination of letters, and from a given frame.
  "k", "kb", "kP", "kbn 100", "kv", "kpn", "kf", "K", "  kb  ", "k = @rbp @rsp @rip", "kb = 0x1000 0x2000 0x3000 10",
  // Threads.
  "~", "~*", "~*k", "~* kb", "~0s", "~3 kb", "~.", "~#", "~*e kb", "~*e u @rip", "~~[0x1a2b]s",
  // Registers and memory.
  "r", "r rax", "r @rip", "dd esp", "dq @rsp L4", "db 0x1000 L10", "da 0x1000", "du 0x1000", "dps @rsp", "dqs @rsp",
  "dpp @rsp", "dda @esp", "dd poi(@esp) L4", "ds 0x1000", "s -a 0 L?10000 \"needle\"",
  // Types, locals and the data model.
  "dv", "dv /t /v", "dt ntdll!_PEB @$peb", "dt -r2 ntdll!_TEB @$teb", "dx @$curprocess", "dx -r2 @$curthread.Stack",
  "dx Debugger.Sessions[0].Processes", "?? sizeof(int)", "? poi(@rsp)", "? @rip + 8", "? $vvalid(0x1000, 4)",
  '? $spat("abc", "a*")', "? not(1)",
  // Modules, symbols and code.
  "lm", "lmvm ntdll", "LM", "ln @rip", "x ntdll!*Alloc*", "u @rip", "ub @rip", "uf ntdll!NtWaitForSingleObject",
  // The exception and the crash.
  "!analyze -v", "!ANALYZE -v", "!analyze -hang", ".ecxr", ".exr -1", ".cxr", ".lastevent", ".frame 2", ".frame /r 2",
  "!peb", "!teb", "!locks", "!gle", "!heap -s", "!heap -x 0x1000", "!address -summary", "!dh ntdll", "!dlls", "!runaway",
  "vertarget", "version", ".time", ".echo hello",
  // SOS for .NET dumps: loaded from beside the runtime or a local path, and its read-only commands.
  ".loadby sos coreclr", ".loadby sos clr", ".LOADBY SOS mscorwks", ".load sos", ".load sos.dll", ".load C:\\tools\\sos\\sos.dll",
  '.load "C:\\Program Files\\dotnet\\sos.dll"', "!threads", "!clrstack -a", "!CLRStack -p", "!pe", "!pe -nested 000001f2a5000f10",
  "!printexception", "!syncblk", "!syncblk -all", "!dumpheap -stat", "!dumpheap -type System.String", "!dumpobj 000001f2a5000f10",
  "!do 000001f2a5000f10", "!dso", "!eeheap -gc", "!dumpstack", "!ip2md 00007ffa1b2c3d4e", "!name2ee OrderService.dll OrderService.Program",
  "!gcroot 000001f2a5000f10", "!sos.clrstack -a", "!dumpmt -md 00007ffa1b2c4a10", "!threadpool", "!finalizequeue", "~*e !clrstack -a",
  // dumpdbg's place prefix, over the command it places.
  "[thread 2, frame 3] dv /i /t /v", "[frame 1] r", '[source "C:\\src\\prog.c"] ls 0n10, 0n5', "kn 0x29", ".exr -1", "lmf", "!address", "uf @$scopeip",
];

/** [command, a fragment the reason must contain: what was refused, and why]. */
const CDB_REFUSED: ReadonlyArray<readonly [string, string]> = [
  // Shells, scripts, extensions and aliases.
  [".shell dir", '".shell" runs a shell command'],
  [".SHELL dir", '".shell" runs a shell command'],
  ["$$>a< c:\\script.txt", '"$$>a<" runs a script file'],
  ["$$< c:\\script.txt", '"$$<" runs a script file'],
  ["$>< c:\\script.txt", '"$><" runs a script file'],
  [".scriptload c:\\x.js", '".scriptload" runs a script'],
  [".scriptrun c:\\x.js", '".scriptrun" runs a script'],
  [".load ext", '".load" loads an extension into the debugger; only SOS may be loaded'],
  [".load C:\\tools\\mex.dll", '".load" loads an extension into the debugger; only SOS may be loaded'],
  [".load C:\\tools\\sos.dll.bak", '".load" loads an extension into the debugger; only SOS may be loaded'],
  [".loadby mex clr", '".loadby" loads an extension into the debugger; only SOS may be loaded'],
  [".loadby sos ntdll", '".loadby" loads an extension into the debugger; only SOS may be loaded'],
  [".load \\\\server\\share\\sos.dll", "loads an extension from the network"],
  ["!bpmd OrderService.dll OrderService.Program.Main", '"!bpmd" sets or changes breakpoints'],
  ["!savemodule 00007ffa1a000000 C:\\x.dll", '"!savemodule" writes a file'],
  ["!sos.savemodule 00007ffa1a000000 C:\\x.dll", '"!sos.savemodule" writes a file'],
  ["!dumplog C:\\stress.log", '"!dumplog" writes a file'],
  ["!createdump C:\\x.dmp", '"!createdump" writes a file'],
  ["!stoponexception System.Exception", '"!stoponexception" changes the debugger\'s settings'],
  ["!setsymbolserver -ms", '"!setsymbolserver" changes the debugger\'s settings'],
  ["~*e !bpmd x.dll X.Main", '"!bpmd" sets or changes breakpoints'],
  ["[thread 2] .shell dir", '".shell" runs a shell command'],
  ["[frame 1] eb 0x1000 90", '"eb" writes the program\'s memory'],
  ['[source "C:\\x.c"] .writemem c:\\x 0x1000 L10', '".writemem" writes a file'],
  ["!load ext", '"!load" loads an extension into the debugger'],
  ["!ext.foo", '"!ext.foo" is not one of the known read-only extension commands'],
  ["!mex.grep", '"!mex.grep" is not one of the known read-only extension commands'],
  ["as foo .shell dir", '"as" defines an alias, which can stand for any command'],
  ["${alias}", "the command expands an alias"],
  ["r $u0", "the command expands an alias"],
  [".foreach (x {k}) {.echo x}", '".foreach" runs a block of commands'],
  ["j 1 'k'", '"j" runs a block of commands'],
  ["k; .shell dir", 'the command chains several commands with ";"'],
  // Writing memory, registers and files.
  ["r rax=0", '"r" argument assigns with "="'],
  ["r rax = 0", '"r" argument assigns with "="'],
  ["r @$t0=1", '"r" argument assigns with "="'],
  ["eb 0x1000 90", '"eb" writes the program\'s memory'],
  ["ed esp 0", '"ed" writes the program\'s memory'],
  ["eD esp 0", '"ed" writes the program\'s memory'],
  ["e 0x1000 90", '"e" writes the program\'s memory'],
  ["eza 0x1000 \"x\"", '"eza" writes the program\'s memory'],
  ["f 0x1000 L10 0", '"f" writes the program\'s memory'],
  [".readmem c:\\x 0x1000 L10", '".readmem" writes a file\'s contents into the program\'s memory'],
  [".writemem c:\\x 0x1000 L10", '".writemem" writes a file'],
  [".dump /ma c:\\x.dmp", '".dump" writes a file'],
  [".logopen c:\\x.log", '".logopen" writes a file'],
  [".logappend c:\\x.log", '".logappend" writes a file'],
  [".write_cmd_hist c:\\x", '".write_cmd_hist" writes a file'],
  ["!analyze -v -xml -xmf c:\\x.xml", 'option "-xmf" of "!analyze" writes an XML file'],
  ["!analyze -c -load c:\\issues.xml", 'option "-c" of "!analyze" continues the program or loads a file'],
  // Running, stepping, processes.
  ["g", '"g" runs or resumes the program'],
  ["gh", '"gh" runs or resumes the program'],
  ["p", '"p" runs or resumes the program'],
  ["pt", '"pt" runs or resumes the program'],
  ["t", '"t" runs or resumes the program'],
  ["wt", '"wt" runs or resumes the program'],
  [".restart", '".restart" runs or resumes the program'],
  [".kill", '".kill" attaches to, detaches from or kills a process'],
  [".create notepad", '".create" attaches to, detaches from or kills a process'],
  [".attach 0n123", '".attach" attaches to, detaches from or kills a process'],
  [".detach", '".detach" attaches to, detaches from or kills a process'],
  [".call foo()", '".call" calls a function in the program'],
  ["~3f", '"~3f" changes a thread\'s state or runs it'],
  ["~3 u", '"~3 u" changes a thread\'s state or runs it'],
  ["~~[0x1a2b]f", '"~~[0x1a2b]f" changes a thread\'s state or runs it'],
  ["~* g", '"~* g" changes a thread\'s state or runs it'],
  ["~3 p", '"p" runs or resumes the program'],
  ["~*e .shell dir", '".shell" runs a shell command'],
  ["~*e ~*e ~*e kb", '"~*e ~*e ~*e kb" nests thread commands'],
  // Breakpoints and settings.
  ["bp kernel32!CreateFileW", '"bp" sets or changes breakpoints'],
  ["ba r4 0x1000", '"ba" sets or changes breakpoints'],
  ["bu foo", '"bu" sets or changes breakpoints'],
  ["bc *", '"bc" sets or changes breakpoints'],
  ["!heap -b alloc", 'option "-b" of "!heap" sets or changes breakpoints'],
  ["!heap -B free", 'option "-B" of "!heap" sets or changes breakpoints'],
  ["sxe av", '"sxe" changes the debugger\'s settings'],
  // Symbols, paths and the network.
  [".symfix", '".symfix" points the symbol path at Microsoft\'s symbol server on the network; name a symbol path with --symbol-path instead'],
  [".symfix+ c:\\sym", '".symfix" points the symbol path at Microsoft\'s symbol server'],
  [".sympath srv*c:\\sym*https://msdl.microsoft.com/download/symbols", '".sympath" changes the debugged target'],
  [".sympath+ c:\\sym", '".sympath" changes the debugged target'],
  [".srcpath c:\\src", '".srcpath" changes the debugged target'],
  [".opendump c:\\other.dmp", '".opendump" changes the debugged target'],
  [".reload /f", '".reload" reloads symbols, possibly from a symbol server on the network'],
  [".server tcp:port=5005", '".server" opens the session to remote debuggers on the network'],
  [".tlist", '".tlist" lists this host\'s processes'],
  // Expressions that call or write.
  ["?? foo()", '"??" argument calls a function ("foo(")'],
  ["? poi(foo())", '"?" argument calls a function ("foo(")'],
  ["dd foo() L4", '"dd" argument calls a function ("foo(")'],
  ["dx Debugger.Utility.Control.ExecuteCommand(\".shell dir\")", '"dx" argument calls a function ("ExecuteCommand(")'],
  ["dx @$x = 1", '"dx" argument assigns with "="'],
  ["dx @$curprocess.Threads.Where(t => t.Id == 1)", '"dx" argument calls a function ("Where(")'],
  ["~~[foo()]s", '"~~[foo()]" calls a function ("foo(")'],
  // The session, and words that are not commands.
  ["q", '"q" ends the debugger session'],
  ["qd", '"qd" ends the debugger session'],
  ["bl", '"bl" is not on cdb\'s allowlist'],
  ["|1s", '"|1s" does not start with a cdb command name'],
  ["* comment", '"* comment" does not start with a cdb command name'],
  ["kb\n.shell dir", "the command contains a control character (U+000A)"],
];

describe("checkCommand for cdb", () => {
  it.each(CDB_ALLOWED)("allows %j", (command) => {
    expect(checkCommand("cdb", command)).toEqual({ allowed: true });
  });

  it.each(CDB_REFUSED)("refuses %j", (command, fragment) => {
    expect(reasonOf(command)).toContain(fragment);
  });

  it("gives one-line reasons that name the policy and the way out", () => {
    for (const [command] of CDB_REFUSED) {
      expect(reasonOf(command)).toMatch(/^[^\n\r]*; refused by the safety policy \(use --unsafe to allow\)$/);
    }
  });
});
