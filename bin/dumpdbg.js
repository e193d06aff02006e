#!/usr/bin/env node
// `--version` alone is answered here, from package.json: it needs none of the CLI's code.
const args = process.argv.slice(2);
if (args.length === 1 && ["--version", "-v", "-V"].includes(args[0])) {
  const { readFileSync } = await import("node:fs");
  process.stdout.write(`${JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version}\n`);
} else {
  const { createRequire } = await import("node:module");
  const require = createRequire(import.meta.url);
  // --debug shows stack traces: through the bundle's source map, they name the TypeScript sources.
  const debug = args.includes("--debug");
  if (debug) process.setSourceMapsEnabled(true);
  const early = require("../dist/early.cjs");
  // A command that reads a dump starts its debugger now, while the CLI's code loads.
  early.startDebuggerEarly(process.argv);
  const { main } = early.loadCli(require.resolve("../dist/dumpdbg.cjs"), process.argv, { debug });
  process.exitCode = await main(process.argv);
}
