#!/usr/bin/env node
// CommonJS, so that Node starts no ES module loader for it: the debugger is started ~3 ms sooner,
// and `--version` costs little more than Node itself.
"use strict";
const args = process.argv.slice(2);
if (args.length === 1 && ["--version", "-v", "-V"].includes(args[0])) {
  // Answered here, from package.json: it needs none of the CLI's code, nor process.stdout, whose
  // stream (and the modules behind it) costs more to set up than the rest of this answer.
  const { readFileSync, writeSync } = require("node:fs");
  const version = JSON.parse(readFileSync(require("node:path").join(__dirname, "..", "package.json"), "utf8")).version;
  try {
    writeSync(1, `${version}\n`);
  } catch {
    // Nobody reads the answer (a closed pipe): nothing to say it to.
  }
} else {
  // --debug shows stack traces: through the bundle's source map, they name the TypeScript sources.
  const debug = args.includes("--debug");
  if (debug) process.setSourceMapsEnabled(true);
  const early = require("../dist/early.cjs");
  // A command that reads a dump starts its debugger now, while the CLI's code loads.
  early.startDebuggerEarly(process.argv);
  const { main } = early.loadCli(require("node:path").join(__dirname, "..", "dist"), process.argv, { debug });
  main(process.argv).then((code) => {
    process.exitCode = code;
  });
}
