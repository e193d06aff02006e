/**
 * dist/early.js: what bin/dumpdbg.js loads first (the debugger started early, and the signal
 * handlers that end it), built as one small file. The CLI's bundle imports these modules from here
 * (`#early`, build.mjs) rather than bundle copies of its own: each holds state that must exist once
 * (the early debugger, the live debuggers, the handlers) or classes whose identity errors are told
 * apart by.
 */
export * from "./cli/early-debugger.js";
export * from "./debuggers/early-start.js";
export * from "./debuggers/live.js";
export * from "./cli/signals.js";
export * from "./debuggers/process.js";
export * from "./debuggers/errors.js";
