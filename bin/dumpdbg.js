#!/usr/bin/env node
// `--version` alone is answered here, from package.json: it needs none of the CLI's code.
const args = process.argv.slice(2);
if (args.length === 1 && ["--version", "-v", "-V"].includes(args[0])) {
  const { readFileSync } = await import("node:fs");
  process.stdout.write(`${JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version}\n`);
} else {
  // --debug shows stack traces: through the bundle's source maps, they name the TypeScript sources.
  if (args.includes("--debug")) process.setSourceMapsEnabled(true);
  // A command that reads a dump starts its debugger now, while the CLI's code loads.
  (await import("../dist/early.js")).startDebuggerEarly(process.argv);
  const { main } = await import("../dist/dumpdbg.js");
  process.exitCode = await main(process.argv);
}
