#!/usr/bin/env node
// The build: the CLI bundled with esbuild into CommonJS scripts that bin/dumpdbg.cjs runs with V8's
// code cache (src/code-cache.ts: Node 20 keeps no compiled code for ES modules): dist/dumpdbg.cjs
// with every command, and dist/dumpdbg-lean.cjs with the commands that run no agents (no LangGraph,
// LangChain, providers or MCP); each command's code is evaluated when the command is run (esbuild
// turns the lazy import()s into functions run once). Native better-sqlite3 stays a package. Source maps for
// --debug, and the prompts (Markdown beside each agent) bundled as text. `tsc --noEmit` type-checks
// first (npm run build runs both).
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { copyFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

rmSync("dist", { recursive: true, force: true });

/** What every bundle shares: CommonJS for Node 20, `import.meta.url` from the script's own file. */
const common = {
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  outdir: "dist",
  outExtension: { ".js": ".cjs" },
  sourcemap: "linked",
  // A script run by vm has no module loader for import(): esbuild turns import() into require().
  supported: { "dynamic-import": false },
  define: { "import.meta.url": "__dumpdbgModuleUrl" },
  // "use strict" first, as esbuild would have it: a statement before it would make the script sloppy.
  banner: { js: '"use strict";\nvar __dumpdbgModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
  legalComments: "linked",
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
};

// What bin/dumpdbg.cjs loads first, as one small file (src/early.ts says why).
await build({ ...common, entryPoints: { early: "src/early.ts" } });

/** The modules dist/early.cjs holds, as source files: the CLI's bundle requires them from there. */
const EARLY = new Set(
  [...readFileSync("src/early.ts", "utf8").matchAll(/^export \* from "(.+)";$/gm)].map((m) => fileURLToPath(new URL(`src/${m[1].replace(/\.js$/, ".ts")}`, import.meta.url))),
);

/**
 * Imports of those modules become one module of the bundle that requires "#early" (package.json's
 * "imports": dist/early.cjs) once: Node resolves a "#" specifier again at every require call (33 of
 * them, ~1.5 ms of every start), where it caches others.
 */
const earlyShared = {
  name: "early-shared",
  setup(build) {
    build.onResolve({ filter: /^\./ }, (args) => {
      const target = path.resolve(args.resolveDir, args.path.replace(/\.js$/, ".ts"));
      return EARLY.has(target) ? { path: "early", namespace: "early-shared" } : undefined;
    });
    build.onResolve({ filter: /^#early$/ }, () => ({ path: "#early", external: true }));
    build.onLoad({ filter: /.*/, namespace: "early-shared" }, () => ({ contents: 'module.exports = require("#early");', loader: "js", resolveDir: "." }));
  },
};

/** LangGraph's checkpoint serializer gets `@langchain/core/load` evaluated when first called (src/build/langchain-load.ts says why). */
const lazyLangchainLoad = {
  name: "lazy-langchain-load",
  setup(build) {
    build.onResolve({ filter: /^@langchain\/core\/load$/ }, (args) =>
      /@langchain\/langgraph-checkpoint\/dist\/serde\/jsonplus\.js$/.test(args.importer) ? { path: fileURLToPath(new URL("src/build/langchain-load.ts", import.meta.url)) } : undefined,
    );
  },
};

/** @langchain/core's UUID v5 gets Node's SHA-1 (src/build/sha1.ts says why). */
const nativeSha1 = {
  name: "native-sha1",
  setup(build) {
    build.onResolve({ filter: /^\.\/sha1\.js$/ }, (args) =>
      /@langchain\/core\/dist\/utils\/uuid\/v5\.js$/.test(args.importer) ? { path: fileURLToPath(new URL("src/build/sha1.ts", import.meta.url)) } : undefined,
    );
  },
};

/** LangChain's ambient config gets a plain RunTree for the no-op storage it is handed to (src/build/run-tree.ts says why). */
const plainRunTree = {
  name: "plain-run-tree",
  setup(build) {
    build.onResolve({ filter: /^langsmith$/ }, (args) =>
      /@langchain\/core\/dist\/singletons\/async_local_storage\/index\.js$/.test(args.importer) ? { path: fileURLToPath(new URL("src/build/run-tree.ts", import.meta.url)) } : undefined,
    );
  },
};

/** zod's namespaces get English alone for their locales (src/build/zod-locales.ts says why). */
const englishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /zod\/v4\/(classic\/external|mini\/external|core\/index)\.js$/.test(args.importer) ? { path: fileURLToPath(new URL("src/build/zod-locales.ts", import.meta.url)) } : undefined,
    );
  },
};

const bundle = {
  ...common,
  loader: { ".md": "text" },
  // Native addons, loaded from node_modules at run time; BullMQ with its Redis client, loaded only
  // by `batch --queue` and `worker`; Graphviz (1.5 MB, most of it its WebAssembly), only when a
  // report draws a picture.
  external: ["better-sqlite3", "msgpackr-extract", "bullmq", "ioredis", "@viz-js/viz"],
  plugins: [earlyShared, lazyLangchainLoad, nativeSha1, plainRunTree, englishOnly],
};
const result = await build({ ...bundle, entryPoints: { dumpdbg: "src/cli/main.ts" }, metafile: true });
// A package update that moves the file an alias replaces would leave the alias unused, silently.
for (const alias of ["src/build/langchain-load.ts", "src/build/sha1.ts", "src/build/run-tree.ts", "src/build/zod-locales.ts"]) {
  if (!result.metafile.inputs[alias]) throw new Error(`build: ${alias} was not used; the package file it stands in for has moved`);
}
// ...and one that imports zod's locales by another path would bring them all back.
const locale = Object.keys(result.metafile.inputs).find((input) => /zod\/v4\/locales\/(?!en\.js$)/.test(input));
if (locale) throw new Error(`build: ${locale} is bundled; zod's locales come in through another path than src/build/zod-locales.ts replaces`);
// LangGraph's main entry installs a Node AsyncLocalStorage as LangChain's ambient config, and with it
// promise hooks that then run on every promise of the process: the code imports
// "@langchain/langgraph/web", the same API without it (src/workflows.ts says why).
if (result.metafile.inputs["node_modules/@langchain/langgraph/dist/node.js"]) {
  throw new Error('build: "@langchain/langgraph" is imported somewhere; import "@langchain/langgraph/web" instead');
}

// The lean bundle: the same command line, where each command that runs agents is a module that
// throws (bin/dumpdbg.cjs never runs one from here: code-cache.ts' cliBundle).
const { COMMANDS, LEAN_COMMANDS } = createRequire(import.meta.url)("./dist/early.cjs");
const agentCommands = COMMANDS.filter((command) => !LEAN_COMMANDS.includes(command));
const main = fileURLToPath(new URL("src/cli/main.ts", import.meta.url));
const stoodIn = new Set();
const agentCommandStandIns = {
  name: "agent-command-stand-ins",
  setup(build) {
    build.onResolve({ filter: /^\.\/[a-z-]+\.js$/ }, (args) => {
      const command = args.path.slice(2, -3);
      if (args.importer !== main || !agentCommands.includes(command)) return undefined;
      stoodIn.add(command);
      return { path: command, namespace: "agent-command" };
    });
    build.onLoad({ filter: /.*/, namespace: "agent-command" }, (args) => ({
      contents: `throw new Error("dumpdbg-lean.cjs does not hold the ${args.path} command: bin/dumpdbg.cjs runs it from dumpdbg.cjs");`,
      loader: "js",
    }));
  },
};
const lean = await build({ ...bundle, plugins: [...bundle.plugins, agentCommandStandIns], entryPoints: { "dumpdbg-lean": "src/cli/main.ts" }, metafile: true });
// A command whose module main.ts imports by another name would be in the lean bundle with all it uses.
const missed = agentCommands.filter((command) => !stoodIn.has(command));
if (missed.length > 0) throw new Error(`build: main.ts imports no ./${missed[0]}.js; the lean bundle would hold the ${missed[0]} command`);
const heavy = Object.keys(lean.metafile.inputs).find((input) => /node_modules\/(@langchain|@modelcontextprotocol|@anthropic-ai|openai|ollama)\//.test(input));
if (heavy) throw new Error(`build: the lean bundle (${LEAN_COMMANDS.join(", ")}) holds ${heavy}; the commands that run no agents must not import it`);
writeFileSync("dist/meta.json", JSON.stringify({ inputs: { ...lean.metafile.inputs, ...result.metafile.inputs }, outputs: { ...lean.metafile.outputs, ...result.metafile.outputs } }));

// The script gdb runs over CPython's gdb extension (src/runtimes/cpython/gdb-extension.ts), beside the bundles that name it.
copyFileSync("src/runtimes/cpython/gdb-python-threads.py", "dist/gdb-python-threads.py");

// Both bundles' last line names the build (their content), which the code caches' names carry (src/code-cache.ts).
const bundles = ["dist/dumpdbg.cjs", "dist/dumpdbg-lean.cjs"];
const id = createHash("sha256");
for (const file of bundles) id.update(readFileSync(file));
const buildId = id.digest("hex").slice(0, 16);
for (const file of bundles) writeFileSync(file, `${readFileSync(file, "utf8").replace(/\n?$/, "\n")}// dumpdbg build ${buildId}\n`);

// The layers the benches time directly (src/internals.ts), without a source map: not shipped for use.
await build({ ...bundle, entryPoints: { internals: "src/internals.ts" }, sourcemap: false });

