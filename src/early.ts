/**
 * dist/early.cjs: what bin/dumpdbg.cjs loads first (the debugger started early, the signal handlers
 * that end it, and the loader of the CLI's bundle with its code cache), built as one small file.
 * The CLI's bundle requires these modules from here (`#early`, build.mjs) rather than bundle copies
 * of its own: each holds state that must exist once (the early debugger, the live debuggers, the
 * handlers, what the run used of the code cache, the cache folders already checked) or classes
 * whose identity errors are told apart by.
 */
export * from "./cli/early-debugger.js";
export * from "./debuggers/early-start.js";
export * from "./debuggers/live.js";
export * from "./cli/signals.js";
export * from "./debuggers/process.js";
export * from "./debuggers/errors.js";
export * from "./code-cache.js";
export * from "./cache-dir.js";
