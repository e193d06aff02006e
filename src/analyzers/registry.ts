/**
 * The analyzer registry: each analyzer names the commands whose output it understands and turns
 * that output into structured data, a one-line summary and key findings. To add one, write its
 * parser in its own file and add an entry to ANALYZERS.
 */
import type { Backend } from "../debuggers/session.js";
import { parseAbortMessage } from "./abort-message.js";
import { parseBacktrace, parseThreadBacktraces, type Frame } from "./backtrace.js";
import { parseDisassembly, memoryAccess } from "./disassembly.js";
import { parseMappings, parseTargetFiles } from "./mappings.js";
import { keyRegisters, parseRegisters } from "./registers.js";
import { parseSharedLibraries } from "./shared-libraries.js";
import { parseExitSignal, parseSiginfo, signalCodeName, signalName } from "./siginfo.js";
import { parseThreads } from "./threads.js";
import { parseLocals } from "./variables.js";

export interface Analysis {
  analyzer: string;
  data: unknown;
  summary: string;
  findings: string[];
}

export interface Analyzer {
  name: string;
  canAnalyze(command: string, backend: Backend): boolean;
  analyze(output: string): Omit<Analysis, "analyzer">;
}

const gdbCommand = (pattern: RegExp) => (command: string, backend: Backend) =>
  backend === "gdb" && pattern.test(command.trim());

export const ANALYZERS: readonly Analyzer[] = [
  {
    name: "thread-backtraces",
    canAnalyze: gdbCommand(/^thread apply (all|[\d\s-]+)\s+(-\S+\s+)*(bt|backtrace|where)\b/),
    analyze(output) {
      const threads = parseThreadBacktraces(output);
      const groups = new Map<string, number[]>();
      for (const thread of threads) {
        const top = describeFunction(thread.frames[0]);
        groups.set(top, [...(groups.get(top) ?? []), thread.thread]);
      }
      const findings = [...groups.entries()]
        .sort((a, b) => b[1].length - a[1].length)
        .map(([fn, ids]) => `${ids.length} thread${ids.length === 1 ? "" : "s"} in ${fn} (${abbreviate(ids)})`);
      return { data: threads, summary: `${threads.length} thread backtraces`, findings };
    },
  },
  {
    name: "backtrace",
    canAnalyze: gdbCommand(/^(bt|backtrace|where)\b/),
    analyze(output) {
      const trace = parseBacktrace(output);
      const first = trace.frames[0];
      const findings = trace.frames.slice(0, 8).map((frame) => `#${frame.level} ${describeFrame(frame)}`);
      if (trace.truncated) findings.push("more frames follow (the listing was limited)");
      return {
        data: trace,
        summary: first ? `${trace.frames.length} frames; innermost: ${describeFrame(first)}` : "no stack",
        findings,
      };
    },
  },
  {
    name: "registers",
    canAnalyze: gdbCommand(/^(info\s+(registers|all-registers)|i\s+r)\b/),
    analyze(output) {
      const registers = parseRegisters(output);
      const { pc, sp } = keyRegisters(registers);
      const pcText = registers.find((r) => r.value === pc && /pc|ip/.test(r.name))?.natural ?? pc;
      const findings: string[] = [];
      if (pc !== null && BigInt(pc) < 0x10000n) findings.push(`the pc (${pc}) is in the null page: a call through a null pointer`);
      return { data: registers, summary: `${registers.length} registers; pc ${pcText ?? "?"}, sp ${sp ?? "?"}`, findings };
    },
  },
  {
    name: "siginfo",
    canAnalyze: gdbCommand(/^(p|print|output)\s+(\/\w\s+)?\$_siginfo\s*$/),
    analyze(output) {
      const info = parseSiginfo(output);
      if (!info) return { data: null, summary: "no signal information", findings: [] };
      const name = signalName(info.signo);
      const code = signalCodeName(info.signo, info.code);
      const at = info.address !== null && [4, 7, 8, 11].includes(info.signo) ? ` at ${info.address}` : "";
      return { data: info, summary: `${name} (${code})${at}`, findings: [`signal ${name}, code ${code}${at}`] };
    },
  },
  {
    name: "exit-signal",
    canAnalyze: gdbCommand(/^(p|print)\s+\$_exitsignal\s*$/),
    analyze(output) {
      const signo = parseExitSignal(output);
      return {
        data: signo,
        summary: signo === null ? "no terminating signal (a dump of a live process)" : `terminated by ${signalName(signo)}`,
        findings: [],
      };
    },
  },
  {
    name: "threads",
    canAnalyze: gdbCommand(/^info\s+threads\b/),
    analyze(output) {
      const threads = parseThreads(output);
      const current = threads.find((thread) => thread.current);
      const findings = current ? [`selected thread ${current.id} (LWP ${current.lwp ?? "?"}) in ${describeFunction(current.frame)}`] : [];
      return { data: threads, summary: `${threads.length} threads`, findings };
    },
  },
  {
    name: "mappings",
    canAnalyze: gdbCommand(/^info\s+proc\s+mappings\b/),
    analyze(output) {
      const mappings = parseMappings(output);
      const files = new Set(mappings.map((m) => m.objfile).filter((f): f is string => f !== null));
      return { data: mappings, summary: `${mappings.length} mappings of ${files.size} files`, findings: [] };
    },
  },
  {
    name: "target-files",
    canAnalyze: gdbCommand(/^info\s+(files|target)\b/),
    analyze(output) {
      const files = parseTargetFiles(output);
      const segments = files.sections.filter((s) => s.source === "core").length;
      return {
        data: files,
        summary: `executable ${files.executable ?? "unknown"}; ${segments} core segments`,
        findings: [],
      };
    },
  },
  {
    name: "shared-libraries",
    canAnalyze: gdbCommand(/^info\s+(sharedlibrary|shared|dll)\b/),
    analyze(output) {
      const libraries = parseSharedLibraries(output);
      const missing = libraries.filter((lib) => !lib.symbolsRead).map((lib) => lib.path);
      const findings = missing.length > 0 ? [`no symbols for ${missing.join(", ")}`] : [];
      return { data: libraries, summary: `${libraries.length} shared libraries`, findings };
    },
  },
  {
    name: "disassembly",
    canAnalyze: gdbCommand(/^(x\/\d*i\b|disassemble\b|disas\b)/),
    analyze(output) {
      const code = parseDisassembly(output);
      const current = code.instructions.find((insn) => insn.current) ?? code.instructions[0];
      if (code.unreadable && !current) return { data: code, summary: "the code is not readable: the pc is not in mapped memory", findings: ["the pc points to unmapped memory"] };
      const access = current ? memoryAccess(current) : null;
      const text = current ? `${current.mnemonic} ${current.operands.join(",")}` : "no instructions";
      return {
        data: code,
        summary: `${code.instructions.length} instructions${current ? `; at pc: ${text}` : ""}`,
        findings: access && current ? [`the instruction at the pc ${access === "write" ? "writes" : "reads"} memory: ${text}`] : [],
      };
    },
  },
  {
    name: "locals",
    canAnalyze: gdbCommand(/^info\s+(locals|args)\b/),
    analyze(output) {
      const variables = parseLocals(output);
      // A null pointer prints as `0x0`, or `(struct client *) 0x0` when gdb shows its type.
      const nulls = variables.filter((v) => /(^|\) )0x0$/.test(v.value)).map((v) => v.name);
      const findings = nulls.length > 0 ? [`null pointers: ${nulls.join(", ")}`] : [];
      const missing = /^(No symbol table info available|No (locals|arguments))\.?$/m.exec(output.trim());
      const summary = variables.length === 0 && missing ? missing[0].replace(/\.$/, "").replace(/^No symbol table info available$/, "no debug info for this frame") : `${variables.length} variables`;
      return { data: variables, summary, findings };
    },
  },
  {
    name: "abort-message",
    canAnalyze: (command, backend) => backend === "gdb" && command.includes("__abort_msg"),
    analyze(output) {
      const message = parseAbortMessage(output);
      return {
        data: message,
        summary: message === null ? "no abort message (abort() was called directly)" : `abort message: ${message}`,
        findings: message === null ? [] : [message],
      };
    },
  },
];

/** Structured reading of a command's output, or null when no analyzer knows the command. */
export function analyzeOutput(command: string, backend: Backend, output: string): Analysis | null {
  const analyzer = ANALYZERS.find((candidate) => candidate.canAnalyze(command, backend));
  return analyzer ? { analyzer: analyzer.name, ...analyzer.analyze(output) } : null;
}


function describeFunction(frame: Omit<Frame, "level"> | null | undefined): string {
  return frame?.function ?? "??";
}

function describeFrame(frame: Frame): string {
  const where = frame.file !== null ? ` at ${frame.file}:${frame.line ?? "?"}` : frame.from !== null ? ` from ${frame.from}` : "";
  return `${frame.function ?? "??"}${where}`;
}

function abbreviate(ids: number[]): string {
  return ids.length <= 6 ? ids.join(", ") : `${ids.slice(0, 5).join(", ")}, … ${ids.at(-1)}`;
}
