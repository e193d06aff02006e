/** `dumpdbg doctor`: which debuggers and model providers this machine can use, and their versions. */
import { execFile, type ExecFileException } from "node:child_process";
import { basename, dirname, join } from "node:path";

import { MULTIARCH_GDB } from "../debuggers/architectures.js";
import { BACKENDS } from "../debuggers/backends.js";
import { binaryOf } from "../debuggers/binaries.js";
import type { Backend } from "../debuggers/session.js";
import { lldbProgram, llnodePlugin } from "../runtimes/node/index.js";
import { SYSTEM_DECOMPRESSORS } from "../debuggers/unpack.js";
import { ExitCode, ExitError } from "./exit.js";

export interface DoctorOptions {
  gdb?: string;
  lldb?: string;
  cdb?: string;
  dlv?: string;
  json?: boolean;
}

/** How each debugger tells its version. */
const VERSION_ARGUMENTS: Record<Backend, string[]> = { gdb: ["--version"], lldb: ["--version"], cdb: ["-version"], dlv: ["version"] };

interface Finding {
  name: string;
  ok: boolean;
  detail: string;
}

export async function doctor(options: DoctorOptions): Promise<void> {
  const findings: Finding[] = [
    { name: "node", ok: Number(process.versions.node.split(".")[0]) >= 20, detail: process.version },
    ...(await Promise.all(Object.values(BACKENDS).map((backend) => debuggerFinding(backend.name, options)))),
    await multiarchFinding(),
    provider("openai", process.env.OPENAI_API_KEY ? `key set${process.env.OPENAI_BASE_URL ? `, base URL ${process.env.OPENAI_BASE_URL}` : ""}` : null, "set OPENAI_API_KEY (and OPENAI_BASE_URL for a compatible server)"),
    provider("anthropic", process.env.ANTHROPIC_API_KEY ? "key set" : null, "set ANTHROPIC_API_KEY"),
    provider("ollama", process.env.OLLAMA_HOST ? `host ${process.env.OLLAMA_HOST}` : null, "set OLLAMA_HOST if Ollama is not at http://127.0.0.1:11434"),
    { name: "offline", ok: true, detail: "always available" },
    await jhsdbFinding(),
    llnodeFinding(),
    ...(await Promise.all(DUMP_TOOLS.map(toolFinding))),
  ];
  const debuggers = findings.filter((f) => f.name in BACKENDS);
  if (options.json) process.stdout.write(`${JSON.stringify(findings, null, 2)}\n`);
  else for (const f of findings) process.stdout.write(`${f.ok ? "ok  " : "--  "} ${f.name.padEnd(10)} ${f.detail}\n`);
  // Nothing can read a dump without a debugger: a setup script learns it from the exit code.
  if (!debuggers.some((f) => f.ok)) {
    throw new ExitError(ExitCode.debugger, "no debugger is usable: install gdb (or lldb), or name one with --gdb/--lldb or $DUMPDBG_GDB/$DUMPDBG_LLDB");
  }
}

/** A debugger's binary and version, and whether this build can use it yet. */
async function debuggerFinding(backend: Backend, options: DoctorOptions): Promise<Finding> {
  let binary: string;
  try {
    binary = binaryOf(backend, options);
  } catch (error) {
    return { name: backend, ok: false, detail: (error as Error).message };
  }
  // LLDB is driven through its DAP server, which prints no version: lldb beside it says it.
  const dap = backend === "lldb" ? /lldb-(vscode|dap)/.exec(basename(binary)) : null;
  const finding = dap
    ? await probe(backend, join(dirname(binary), basename(binary).replace(dap[0], "lldb")), VERSION_ARGUMENTS.lldb).then(async (lldb) =>
        lldb.ok ? { ...lldb, detail: `${lldb.detail.replace(/ \(.*\)$/, "")} (${binary})` } : probe(backend, binary, ["--help"]),
      )
    : await probe(backend, binary, VERSION_ARGUMENTS[backend]);
  if (!BACKENDS[backend].start) return { ...finding, ok: false, detail: `${finding.detail}; no ${backend} backend in this version yet` };
  // A debugger of another host (cdb off Windows) runs here only when asked for by name.
  const hosts = BACKENDS[backend].hosts;
  if (hosts && !hosts.includes(process.platform)) {
    const where = finding.ok ? `--debugger ${backend} only (auto chooses it on ${hosts.join(", ")})` : `auto chooses it only on ${hosts.join(", ")}`;
    return { ...finding, detail: `${finding.detail}; ${where}` };
  }
  return finding;
}

/**
 * gdb-multiarch, the gdb built for every target: a core from another processor (an arm64 server's
 * on this x86-64 machine) is read with it, or with LLDB, since the plain gdb reads only its host's.
 */
async function multiarchFinding(): Promise<Finding> {
  const found = await probe(MULTIARCH_GDB, MULTIARCH_GDB, VERSION_ARGUMENTS.gdb);
  return found.ok
    ? { ...found, detail: `${found.detail}: reads cores of other processors (arm64 on x86-64)` }
    : { ...found, detail: `${found.detail}; cores of other processors (arm64 on x86-64) are read with LLDB, or install gdb-multiarch` };
}

async function probe(name: string, binary: string, args: string[]): Promise<Finding> {
  const { error, stdout } = await new Promise<{ error: ExecFileException | null; stdout: string }>((resolve) =>
    execFile(binary, args, { timeout: 10_000, maxBuffer: 1 << 20 }, (error, stdout) => resolve({ error, stdout: String(stdout) })),
  );
  if (error?.code === "ENOENT" || error?.code === "EACCES") return { name, ok: false, detail: `${binary}: not found` };
  // Delve says its name on one line and its version on the next.
  const first = stdout.split("\n").map((line) => line.trim()).filter(Boolean).slice(0, name === "dlv" ? 2 : 1).join(" ");
  if (error && !first) return { name, ok: false, detail: `${binary}: not usable` };
  return { name, ok: true, detail: `${first} (${binary})` };
}

/**
 * The JDK's jhsdb, which reads a Java program's core (its Java frames, locks and heap): `$DUMPDBG_JHSDB`
 * or the one on PATH, with its JDK's version. A core is read with the JDK that wrote it, found from the
 * core itself; this one says whether the machine has a JDK at all.
 */
async function jhsdbFinding(): Promise<Finding> {
  const named = process.env.DUMPDBG_JHSDB || "jhsdb";
  const error = await new Promise<ExecFileException | null>((resolve) => execFile(named, ["--help"], { timeout: 10_000, maxBuffer: 1 << 20 }, (failed) => resolve(failed)));
  if (error?.code === "ENOENT" || error?.code === "EACCES") return { name: "jhsdb", ok: false, detail: `${named}: not found; Java cores are read without their Java frames (install the JDK that wrote them, such as Debian's openjdk-17-jdk-headless)` };
  return { name: "jhsdb", ok: true, detail: `${named}: Java cores are read with the JDK build that wrote them (checked by build id)` };
}

/** The command that installs llnode here: it compiles against LLDB's headers (Debian's liblldb-16-dev) and finds Debian's lldb-16 only when named. */
const LLNODE_INSTALL = "apt-get install liblldb-16-dev && LLNODE_LLDB_INCLUDE_DIR=/usr/lib/llvm-16/include npm_config_lldb_exe=/usr/bin/lldb-16 npm install -g llnode";

/** llnode, the Node.js project's LLDB plugin, which reads a Node.js core's JavaScript frames and heap, and the lldb it is loaded into. */
function llnodeFinding(): Finding {
  const plugin = llnodePlugin();
  if (plugin === null) return { name: "llnode", ok: false, detail: `not installed; Node.js cores are read without their JavaScript frames (install it: ${LLNODE_INSTALL}, or name its llnode.so with $DUMPDBG_LLNODE)` };
  const lldb = lldbProgram();
  if (lldb === null) return { name: "llnode", ok: false, detail: `${plugin}: no lldb on the PATH to load it into (install lldb-16)` };
  return { name: "llnode", ok: true, detail: `${plugin}, loaded into ${lldb}: Node.js cores are read with their JavaScript frames` };
}

/** The system tools that read dumps as Linux keeps them: the decompressors, and getfattr for systemd-coredump's attributes. */
const DUMP_TOOLS = [
  ...SYSTEM_DECOMPRESSORS.map((d) => ({ name: d.binary, packageName: d.packageName, without: `${d.format}-compressed dumps cannot be read` })),
  { name: "getfattr", packageName: "attr", without: "systemd-coredump's attributes (program, signal) are not read" },
];

/** Whether a tool answers `--version` (its first line), else which Debian package installs it. */
async function toolFinding(tool: { name: string; packageName: string; without: string }): Promise<Finding> {
  const found = await probe(tool.name, tool.name, ["--version"]);
  return found.ok ? found : { name: tool.name, ok: false, detail: `not found: ${tool.without} (install Debian's ${tool.packageName} package)` };
}

function provider(name: string, detail: string | null, howTo: string): Finding {
  return { name, ok: detail !== null, detail: detail ?? `not configured: ${howTo}` };
}
