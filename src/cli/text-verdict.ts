/**
 * An apport report without its core, answered from its text: the verdict its signal and stack
 * trace give, said plainly as read without a debugger (`triage` and `analyze` print it; there is
 * no dump for an analysis to open).
 */
import { textVerdict } from "../analyzers/report-text.js";
import type { ReportWithoutCore } from "../debuggers/dump-source.js";

export function printTextVerdict(report: ReportWithoutCore, json: boolean): void {
  const verdict = textVerdict(report.facts);
  if (json) {
    process.stdout.write(`${JSON.stringify({ dump: report.path, core: null, readFrom: "apport report text", ...verdict }, null, 2)}\n`);
    return;
  }
  const lines = [
    `Report:    ${report.path} is an apport report without its core: read from its text, with no debugger`,
    `Crash:     ${verdict.kind}${verdict.signal ? ` (${verdict.signal}, as apport recorded it; without the core the fault address is unknown)` : " (apport recorded no signal)"}`,
    ...(verdict.assertion ? [`Message:   ${verdict.assertion}`] : []),
    `Program:   ${verdict.program ?? "unknown"}${verdict.package ? ` (package ${verdict.package})` : ""}`,
    `Where:     ${verdict.function ? `${verdict.function}, the first frame of apport's stack trace` : "unknown: the report holds no stack trace"}`,
    ...(verdict.stackTrace ? ["Stack trace (as apport's gdb printed it):", ...verdict.stackTrace.split("\n").map((l) => `  ${l}`)] : []),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}
