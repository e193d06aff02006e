#!/usr/bin/env node
// The build: the CLI bundled with esbuild into dist/ (ESM, split at each command's lazy import so a
// command loads only what it needs; native better-sqlite3 stays a package), with source maps for
// --debug, and the prompts (Markdown beside each agent) bundled as text. `tsc --noEmit` type-checks
// first (npm run build runs both).
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

rmSync("dist", { recursive: true, force: true });

// The analysis's third-party code, apart, as CommonJS (src/vendor.ts says why).
await build({
  entryPoints: { vendor: "src/vendor.ts" },
  outdir: "dist",
  outExtension: { ".js": ".cjs" },
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  // A script run by vm has no module loader for import(): esbuild turns import() into require().
  supported: { "dynamic-import": false },
  external: ["better-sqlite3", "msgpackr-extract"],
  legalComments: "linked",
  logLevel: "warning",
});

// Its first line names its content, which the code cache's file name carries (src/vendor-code.ts).
const vendorCode = readFileSync("dist/vendor.cjs");
writeFileSync("dist/vendor.cjs", Buffer.concat([Buffer.from(`// dumpdbg vendor ${createHash("sha256").update(vendorCode).digest("hex").slice(0, 16)}\n`), vendorCode]));

/** The packages src/vendor.ts holds, by the specifiers the code imports them with. */
const VENDORED = [...readFileSync("src/vendor.ts", "utf8").matchAll(/^\s*"?([@\w/.-]+)"?: \(\) => require\(/gm)].map((m) => m[1]);
const VENDOR_FAMILY = /^(@langchain\/|langsmith(\/|$)|zod(\/|$)|marked$)/;
const vendorLoader = fileURLToPath(new URL("src/vendor-code.ts", import.meta.url));

/**
 * Every import of a vendored package in the rest of the bundle becomes a small module that reads
 * it from dist/vendor.cjs, exporting the same names; a package of the vendored families that
 * src/vendor.ts does not hold is a build error, not a second copy.
 */
const vendorShims = {
  name: "vendor-shims",
  setup(build) {
    build.onResolve({ filter: VENDOR_FAMILY }, (args) => {
      if (!VENDORED.includes(args.path)) return { errors: [{ text: `${args.path} (imported by ${args.importer}) is not in src/vendor.ts's vendorModules: add it there` }] };
      return { path: args.path, namespace: "vendor-shim" };
    });
    build.onLoad({ filter: /.*/, namespace: "vendor-shim" }, async (args) => {
      const names = Object.keys(await import(args.path)).filter((name) => name !== "default" && /^[A-Za-z_$][\w$]*$/.test(name));
      return {
        contents: [
          `import { vendorModule } from ${JSON.stringify(vendorLoader)};`,
          `const m = vendorModule(${JSON.stringify(args.path)});`,
          `export const { ${names.join(", ")} } = m;`,
          "export default m.default;",
        ].join("\n"),
        resolveDir: process.cwd(),
        loader: "js",
      };
    });
  },
};

// What bin/dumpdbg.js loads first, as one small file (src/early.ts says why).
await build({
  entryPoints: { early: "src/early.ts" },
  outdir: "dist",
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
});

/** The modules dist/early.js holds, as source files: the CLI's bundle imports them from there. */
const EARLY = new Set(
  [...readFileSync("src/early.ts", "utf8").matchAll(/^export \* from "(.+)";$/gm)].map((m) => fileURLToPath(new URL(`src/${m[1].replace(/\.js$/, ".ts")}`, import.meta.url))),
);

/** Imports of those modules become imports of `#early` (package.json's "imports": dist/early.js). */
const earlyShared = {
  name: "early-shared",
  setup(build) {
    build.onResolve({ filter: /^\./ }, (args) => {
      const target = path.resolve(args.resolveDir, args.path.replace(/\.js$/, ".ts"));
      return EARLY.has(target) ? { path: "#early", external: true } : undefined;
    });
  },
};

const result = await build({
  entryPoints: { dumpdbg: "src/cli/main.ts", internals: "src/internals.ts" },
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
  plugins: [vendorShims, earlyShared],
  // CommonJS packages inside an ES module bundle still call require().
  banner: { js: 'import { createRequire as __dumpdbgCreateRequire } from "node:module"; const require = __dumpdbgCreateRequire(import.meta.url);' },
  legalComments: "linked",
  metafile: true,
  logLevel: "warning",
});
writeFileSync("dist/meta.json", JSON.stringify(result.metafile));
