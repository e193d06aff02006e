/** The batch report: one row per bug, the biggest first, then the dumps that could not be read. */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { BatchDocument } from "./batch.js";

export function batchMarkdown(doc: BatchDocument, id: string): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");
  const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;
  const dumps = doc.groups.reduce((n, g) => n + g.count, 0);
  const lines = [
    `# Batch ${id}: ${doc.groups.length} ${doc.groups.length === 1 ? "bug" : "bugs"} in ${dumps} ${dumps === 1 ? "dump" : "dumps"}`,
    "",
    doc.errors.length ? `${doc.errors.length} could not be read; ${doc.skipped.length} files were not dumps.` : `${doc.skipped.length} files were not dumps.`,
    "",
    "| Group | Kind | Culprit | Count | First modified | Last modified | Representative |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...doc.groups.map((g) => {
      const culprit = g.culprit.function ? `${code(g.culprit.function)}${g.culprit.file ? ` at ${code(`${basename(g.culprit.file)}:${g.culprit.line ?? "?"}`)}` : ""}` : "—";
      return `| ${g.id} | ${g.kind} | ${culprit} | ${g.count} | ${g.firstModified.slice(0, 19).replace("T", " ")} | ${g.lastModified.slice(0, 19).replace("T", " ")} | ${cell(g.representative)} |`;
    }),
    "",
    ...doc.groups.flatMap((g) => [`## ${g.id} · ${g.kind} · ${g.count} ${g.count === 1 ? "dump" : "dumps"}`, "", `Signature: ${code(g.signature)}`, "", ...g.members.map((m) => `- ${cell(m)}${m === g.representative ? " (representative)" : ""}`), ""]),
    ...(doc.errors.length ? ["## Could not be read", "", ...doc.errors.map((e) => `- ${cell(e.dump)}: ${cell(e.error)}`), ""] : []),
    ...(doc.skipped.length ? ["## Not dumps", "", ...doc.skipped.map((s) => `- ${cell(s)}`), ""] : []),
  ];
  return `${lines.join("\n")}\n`;
}

/** Writes `batch-<id>.md` and `.json` into `outDir`, each atomically; returns their paths. */
export function writeBatchReports(doc: BatchDocument, id: string, outDir: string): string[] {
  mkdirSync(outDir, { recursive: true });
  const files = [
    [join(outDir, `batch-${id}.md`), batchMarkdown(doc, id)],
    [join(outDir, `batch-${id}.json`), `${JSON.stringify(doc, null, 2)}\n`],
  ] as const;
  for (const [file, text] of files) {
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
  }
  return files.map(([file]) => file);
}
