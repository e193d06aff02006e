/**
 * The layers the benches time directly, below the command line: built into `dist/internals.js`
 * beside the CLI's bundle. Not an API.
 */
export { triage } from "./analyzers/triage/index.js";
export { askSession } from "./debuggers/inspector.js";
export { GdbSession } from "./debuggers/gdb/gdb-session.js";
export { LldbSession } from "./debuggers/lldb/lldb-session.js";
export { openDump } from "./debuggers/open.js";
export { runGuarded } from "./debuggers/guard.js";
export { EvidenceStore } from "./evidence/store.js";
export const loadAnalysis = () => import("./analysis.js");
export { CommandExecutor } from "./agents/executor.js";
