/** The batch report: one row per bug, the biggest first, then the dumps that could not be read. */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { writing } from "../storage-errors.js";
import { basename, join } from "node:path";
import { escapeHtml } from "../report/escape-html.js";
import type { BatchDocument } from "./batch.js";

/** A group's kind, and for one no rule classifies, where its stops came from when that says it was no crash (a kill from outside, a dump on request). */
function kindText(group: BatchDocument["groups"][number]): string {
  if (group.kind !== "unknown") return group.kind;
  if (group.origin === "unreadable") return `${group.kind} (stop not readable by the debugger)`;
  return group.origin === "sent" || group.origin === "requested" ? `${group.kind} (${group.origin === "sent" ? "signal sent by another process" : "dump on request"})` : group.kind;
}

/** "3 files skipped" in words: how many, and the commonest reason. */
function skippedCount(doc: BatchDocument): string {
  const n = doc.skipped.length;
  return `${n} ${n === 1 ? "file" : "files"} skipped${n ? ` (${doc.skipped.filter((s) => s.reason === "not a crash dump").length} not dumps)` : ""}`;
}

export function batchMarkdown(doc: BatchDocument, id: string): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");
  const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;
  const dumps = doc.groups.reduce((n, g) => n + g.count, 0);
  const lines = [
    `# Batch ${id}: ${doc.groups.length} ${doc.groups.length === 1 ? "bug" : "bugs"} in ${dumps} ${dumps === 1 ? "dump" : "dumps"}`,
    "",
    doc.errors.length ? `${doc.errors.length} could not be read; ${skippedCount(doc)}.` : `${skippedCount(doc)}.`,
    "",
    "| Group | Kind | Exploitability | Culprit | Count | First modified | Last modified | Representative | Analysis |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...doc.groups.map((g) => {
      const culprit = g.culprit.function ? `${code(g.culprit.function)}${g.culprit.file ? ` at ${code(`${basename(g.culprit.file)}:${g.culprit.line ?? "?"}`)}` : ""}` : "—";
      return `| ${g.id} | ${kindText(g)} | ${g.exploitability ?? "—"} | ${culprit} | ${g.count} | ${g.firstModified.slice(0, 19).replace("T", " ")} | ${g.lastModified.slice(0, 19).replace("T", " ")} | ${cell(g.representative)} | ${g.analysis ? `[analysis](${g.analysis})` : "—"} |`;
    }),
    "",
    ...doc.groups.flatMap((g) => [`## ${g.id} · ${kindText(g)} · ${g.count} ${g.count === 1 ? "dump" : "dumps"}`, "", `Signature: ${code(g.signature)}`, "", ...g.members.map((m) => `- ${cell(m)}${m === g.representative ? " (representative)" : ""}`), ""]),
    ...(doc.errors.length ? ["## Could not be read", "", ...doc.errors.map((e) => `- ${cell(e.dump)}: ${cell(e.error)}`), ""] : []),
    ...(doc.skipped.length ? ["## Skipped", "", ...doc.skipped.map((s) => `- ${cell(s.path)}: ${cell(s.reason)}`), ""] : []),
  ];
  return `${lines.join("\n")}\n`;
}


/**
 * The batch as one self-contained HTML page: the groups' table, sortable by clicking a column and
 * filtered by a text box, with the little script it needs inside the file (nothing loaded from
 * anywhere), and the unreadable dumps below.
 */
export function batchHtml(doc: BatchDocument, id: string): string {
  const rows = doc.groups
    .map((g) => {
      const culprit = g.culprit.function ? `${g.culprit.function}${g.culprit.file ? ` at ${basename(g.culprit.file)}:${g.culprit.line ?? "?"}` : ""}` : "—";
      const analysis = g.analysis ? `<a href="${escapeHtml(g.analysis.replace(/\.md$/, ".html"))}">analysis</a>` : "";
      return `<tr><td>${escapeHtml(g.id)}</td><td>${escapeHtml(kindText(g))}</td><td>${escapeHtml(g.exploitability ?? "—")}</td><td><code>${escapeHtml(culprit)}</code></td><td data-n="${g.count}">${g.count}</td><td>${escapeHtml(g.firstModified.slice(0, 19).replace("T", " "))}</td><td>${escapeHtml(g.lastModified.slice(0, 19).replace("T", " "))}</td><td title="${escapeHtml(g.members.join("\n"))}">${escapeHtml(basename(g.representative))}</td><td>${analysis}</td></tr>`;
    })
    .join("\n");
  const errors = doc.errors.map((e) => `<li><code>${escapeHtml(e.dump)}</code>: ${escapeHtml(e.error)}</li>`).join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dumpdbg batch ${escapeHtml(id)}</title>
<meta name="color-scheme" content="light dark">
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem}
table{border-collapse:collapse;width:100%}th,td{padding:.35rem .6rem;border-bottom:1px solid #8884;text-align:left;vertical-align:top}
th{cursor:pointer;user-select:none;white-space:nowrap}th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
input{font:inherit;padding:.3rem .5rem;margin:.5rem 0 1rem;width:20rem;max-width:100%}code{font-size:.92em}
</style></head><body>
<h1>Batch ${escapeHtml(id)}: ${doc.groups.length} ${doc.groups.length === 1 ? "bug" : "bugs"} in ${doc.groups.reduce((n, g) => n + g.count, 0)} dumps</h1>
<label>Filter <input id="filter" type="search" placeholder="kind, function, file…"></label>
<table id="groups"><thead><tr><th>Group</th><th>Kind</th><th>Exploitability</th><th>Culprit</th><th aria-sort="descending">Count</th><th>First modified</th><th>Last modified</th><th>Representative</th><th>Analysis</th></tr></thead>
<tbody>
${rows}
</tbody></table>
${errors ? `<h2>Could not be read (${doc.errors.length})</h2><ul>${errors}</ul>` : ""}
${doc.skipped.length ? `<h2>Skipped (${doc.skipped.length})</h2><ul>${doc.skipped.map((s) => `<li><code>${escapeHtml(s.path)}</code>: ${escapeHtml(s.reason)}</li>`).join("\n")}</ul>` : ""}
<script>
const table = document.getElementById("groups");
const body = table.tBodies[0];
document.getElementById("filter").addEventListener("input", (event) => {
  const wanted = event.target.value.toLowerCase();
  for (const row of body.rows) row.hidden = wanted !== "" && !row.textContent.toLowerCase().includes(wanted);
});
for (const [index, header] of [...table.tHead.rows[0].cells].entries()) {
  header.addEventListener("click", () => {
    const ascending = header.getAttribute("aria-sort") !== "ascending";
    for (const other of table.tHead.rows[0].cells) other.removeAttribute("aria-sort");
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const key = (row) => { const cell = row.cells[index]; return cell.dataset.n !== undefined ? Number(cell.dataset.n) : cell.textContent; };
    const rows = [...body.rows].sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1); });
    body.append(...rows);
  });
}
</script>
</body></html>
`;
}

/** Writes `batch-<id>.md`, `.html` and `.json` into `outDir`, all three or none; returns their paths. */
export function writeBatchReports(doc: BatchDocument, id: string, outDir: string): string[] {
  const elsewhere = { elsewhere: "or choose another --out folder" };
  writing(outDir, () => mkdirSync(outDir, { recursive: true }), { ...elsewhere, verb: "create" });
  const files = [
    [join(outDir, `batch-${id}.md`), batchMarkdown(doc, id)],
    [join(outDir, `batch-${id}.html`), batchHtml(doc, id)],
    [join(outDir, `batch-${id}.json`), `${JSON.stringify(doc, null, 2)}\n`],
  ] as const;
  const written: string[] = [];
  try {
    for (const [file, text] of files) {
      writing(
        file,
        () => {
          try {
            writeFileSync(`${file}.tmp`, text);
            renameSync(`${file}.tmp`, file);
          } catch (error) {
            rmSync(`${file}.tmp`, { force: true });
            throw error;
          }
        },
        elsewhere,
      );
      written.push(file);
    }
  } catch (error) {
    // The three formats are one report: all of them, or none.
    for (const file of written) rmSync(file, { force: true });
    throw error;
  }
  return written;
}
