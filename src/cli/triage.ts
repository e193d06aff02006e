/** `dumpdbg triage`: the deterministic verdict, fast: no graph, no model, no evidence store. */
import { formatTriage } from "../analyzers/format.js";
import { readAheadTriage, triage as runTriage, triageOptionsOf } from "../analyzers/triage/index.js";
import { askSession } from "../debuggers/inspector.js";
import { ReportWithoutCore } from "../debuggers/dump-source.js";
import { openingLines, openDump, type OpenedDump } from "../debuggers/open.js";
import { printTextVerdict } from "./text-verdict.js";
import { openOptions, type DumpFlags, type LiveFlags } from "./dump-options.js";
import { dumpToRead } from "./live-dump.js";

export interface TriageFlags extends DumpFlags, LiveFlags {
  json?: boolean;
}

/** Triage of the dump named, or of a live process `--pid` names, dumped for it. */
export async function triage(dumpArgument: string | undefined, flags: TriageFlags): Promise<void> {
  const dump = await dumpToRead(dumpArgument, flags);
  try {
    await triageDump(dump.path, flags);
  } finally {
    dump.live?.remove();
  }
}

async function triageDump(dumpPath: string, flags: TriageFlags): Promise<void> {
  let opened: OpenedDump;
  try {
    opened = await openDump(openOptions(dumpPath, flags));
  } catch (error) {
    if (!(error instanceof ReportWithoutCore)) throw error;
    printTextVerdict(error, flags.json === true);
    return;
  }
  const options = { ...triageOptionsOf(opened.dump, opened.executable, opened.hsErr), debugger: opened.session.vocabulary.debugger };
  try {
    await readAheadTriage(opened.session, options);
    for (const line of openingLines(opened)) process.stderr.write(`dumpdbg: ${line}\n`);
    const result = await runTriage(askSession(opened.session), options);
    // A verdict read from a dump that changed under the debugger is not given.
    opened.unchanged();
    process.stdout.write(flags.json ? `${JSON.stringify(result.crash, null, 2)}\n` : `${formatTriage(result)}\n`);
  } finally {
    await opened.session.close({ wait: false });
  }
}
