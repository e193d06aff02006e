// A second process for the session tests: it uses a session the way an analysis does, and the test
// kills it (kill -9) or runs two at once.
//
//   node kill-writer.mjs write <root> <id> <count|forever>
//       takes the session lock and adds evidence in a loop; after each commit prints
//       "committed <evidence-id> <sha256 of the output>"; prints "done" after <count> rows
//   node kill-writer.mjs hold <root> <id>
//       takes the session lock, prints "locked", and waits to be killed
//
// It imports the TypeScript sources directly: a loader hook transpiles them with the project's
// own TypeScript, so the test exercises the same code as the tests themselves, with no build step.

import { createHash } from "node:crypto";
import { register } from "node:module";

const loader = `
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from ${JSON.stringify(import.meta.resolve("typescript"))};

export async function resolve(specifier, context, next) {
  if (specifier.endsWith(".js") && context.parentURL?.endsWith(".ts")) {
    try {
      return await next(specifier, context);
    } catch {
      return next(specifier.slice(0, -3) + ".ts", context);
    }
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.endsWith(".ts")) return next(url, context);
  const { outputText } = ts.transpileModule(readFileSync(fileURLToPath(url), "utf8"), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  return { format: "module", source: outputText, shortCircuit: true };
}
`;
register(`data:text/javascript,${encodeURIComponent(loader)}`);

const { acquireSessionLock, sessionPaths, Transcript } = await import("../../src/evidence/sessions.ts");
const { EvidenceStore } = await import("../../src/evidence/store.ts");

const [mode, root, id, count] = process.argv.slice(2);
const release = acquireSessionLock(root, id);

if (mode === "hold") {
  process.stdout.write("locked\n");
  setInterval(() => {}, 60_000);
} else if (mode === "write") {
  // A small inline limit, so the loop also writes output files and a kill can land in one.
  const store = EvidenceStore.open(sessionPaths(root, id).evidenceDb, { inlineLimit: 4096, chunkSize: 1024 });
  const transcript = Transcript.open(root, id);
  const total = count === "forever" ? Infinity : Number(count);
  for (let n = 1; n <= total; n++) {
    const output = backtrace(n);
    const record = store.add({
      command: `frame ${n}`,
      backend: "gdb",
      context: { thread: 1, frame: n },
      output,
      ok: true,
      summary: `writer ${process.pid} row ${n}`,
      findings: { writer: process.pid, n },
      ms: 1,
      source: "exec",
    });
    transcript.append({ type: "command", command: record.command, evidenceId: record.id });
    process.stdout.write(`committed ${record.id} ${createHash("sha256").update(output).digest("hex")}\n`);
  }
  store.close();
  transcript.close();
  release();
  process.stdout.write("done\n");
} else {
  throw new Error(`unknown mode ${mode}`);
}

/** gdb-like text; every fifth output is tens of kilobytes, over the inline limit. */
function backtrace(n) {
  const frames = n % 5 === 0 ? 400 + n : 3;
  const lines = [];
  for (let f = 0; f < frames; f++) {
    const pc = (0x401000 + f * 16 + n).toString(16).padStart(16, "0");
    lines.push(`#${f}  0x${pc} in handler_${n}_${f} (ctx=0x${(n * 4096).toString(16)}) at server.c:${f + 10}`);
    lines.push(`        depth = ${f}`);
  }
  return `${lines.join("\n")}\n`;
}
