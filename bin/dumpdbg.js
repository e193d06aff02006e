#!/usr/bin/env node
// --debug shows stack traces: through the bundle's source maps, they name the TypeScript sources.
if (process.argv.includes("--debug")) process.setSourceMapsEnabled(true);
const { main } = await import("../dist/dumpdbg.js");

process.exitCode = await main(process.argv);
