#!/usr/bin/env node
// The build: the CLI bundled with esbuild into dist/ (ESM, split at each command's lazy import so a
// command loads only what it needs; native better-sqlite3 stays a package), with source maps for
// --debug, and the prompts (Markdown beside each agent) bundled as text. `tsc --noEmit` type-checks
// first (npm run build runs both).
import { build } from "esbuild";
import { rmSync, writeFileSync } from "node:fs";

rmSync("dist", { recursive: true, force: true });
const result = await build({
  // early: what bin/dumpdbg.js runs before loading the CLI (the debugger started first thing).
  entryPoints: { dumpdbg: "src/cli/main.ts", early: "src/cli/early-debugger.ts", internals: "src/internals.ts" },
  outdir: "dist",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  loader: { ".md": "text" },
  // Native addons, loaded from node_modules at run time; and BullMQ with its Redis client, loaded
  // only by `batch --queue` and `worker` (bundled, its classes came out undefined).
  external: ["better-sqlite3", "msgpackr-extract", "bullmq", "ioredis"],
  // CommonJS packages inside an ES module bundle still call require().
  banner: { js: 'import { createRequire as __dumpdbgCreateRequire } from "node:module"; const require = __dumpdbgCreateRequire(import.meta.url);' },
  legalComments: "linked",
  metafile: true,
  logLevel: "warning",
});
writeFileSync("dist/meta.json", JSON.stringify(result.metafile));
