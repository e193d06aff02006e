/**
 * The HTML report: the report's blocks (layout.ts) in one self-contained file, the same content as
 * the Markdown report, written straight from the blocks rather than by parsing that Markdown.
 *
 * Every value is escaped, so nothing from a dump can make markup, and only in-document anchors and
 * relative links are made; the CSP forbids scripts and every load from outside even if that
 * escaping ever failed.
 */
import type { ReportDocument } from "./document.js";
import { escapeHtml } from "./escape-html.js";
import { anchorOf, oneLine, plainText, type Inline } from "./inline.js";
import { reportBlocks, SECTION, verdict, type Block, type RenderOptions } from "./layout.js";
import type { Picture } from "./pictures.js";

/** Marks a file as ours for `writeReports`. */
export const HTML_MARKER = '<meta name="generator" content="dumpdbg">';

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/** Sections whose subsections fold away: long outputs a reader opens on demand. */
const COLLAPSED: ReadonlySet<string> = new Set([SECTION.evidence, SECTION.technical]);

/** `#anchor`, or a relative path of plain URL characters: no scheme, no host, nothing a browser would reinterpret. */
const SAFE_HREF = /^(?:#[\p{L}\p{N}_-]+|[\w.~!*'%-]+(?:\/[\w.~!*'%-]+)*)$/u;

export function renderHtml(doc: ReportDocument, options: RenderOptions & { pictures?: Picture[] } = {}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
${HTML_MARKER}
<title>${escapeHtml(plainText(verdict(doc.report)))} · dumpdbg</title>
<style>${CSS}</style>
</head>
<body>
<main>
${renderBody(options.blocks ?? reportBlocks(doc, options), options.pictures ?? [])}</main>
</body>
</html>
`;
}

/**
 * Block by block. Each level-3 subsection of a collapsed section becomes a `<details>` whose
 * summary is its heading and, when one follows, its first paragraph (an evidence's finding); the
 * pictures come after the verdict and its summary, before the first section.
 */
function renderBody(blocks: Block[], pictures: Picture[]): string {
  const out: string[] = [];
  let section = "";
  let open = false;
  let pictured = pictures.length === 0;
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]!;
    if (block.kind === "heading" && block.depth <= 3 && open) {
      out.push("</details>\n");
      open = false;
    }
    if (block.kind === "heading" && block.depth === 2) {
      section = plainText(block.spans);
      if (!pictured) out.push(figures(pictures));
      pictured = true;
    }
    if (block.kind === "heading" && block.depth === 3 && COLLAPSED.has(section)) {
      const next = blocks[i + 1];
      const lead = next?.kind === "paragraph" ? blockHtml(blocks[++i]!) : "";
      out.push(`<details><summary>${blockHtml(block)}${lead}</summary>\n`);
      open = true;
      continue;
    }
    out.push(blockHtml(block));
  }
  if (open) out.push("</details>\n");
  if (!pictured) out.push(figures(pictures));
  return out.join("");
}

function figures(pictures: Picture[]): string {
  return `${pictures.map((p) => `<figure class="picture">${p.svg}<figcaption>${escapeHtml(p.caption)}</figcaption></figure>`).join("\n")}\n`;
}

function blockHtml(block: Block): string {
  switch (block.kind) {
    case "heading":
      // The anchor the Markdown report's links use (GitHub's, from the heading's Markdown).
      return `<h${block.depth} id="${escapeHtml(anchorOf(block.spans))}">${inlineHtml(block.spans)}</h${block.depth}>\n`;
    case "paragraph":
      return `<p>${inlineHtml(block.spans)}</p>\n`;
    case "list": {
      const tag = block.ordered ? "ol" : "ul";
      return `<${tag}>\n${block.items.map((item) => `<li>${inlineHtml(item)}</li>\n`).join("")}</${tag}>\n`;
    }
    case "table": {
      const row = (cells: Inline[], tag: "th" | "td") => `<tr>\n${cells.map((cell) => `<${tag}>${inlineHtml(cell)}</${tag}>\n`).join("")}</tr>\n`;
      const body = block.rows.length ? `<tbody>${block.rows.map((r) => row(r, "td")).join("")}</tbody>` : "";
      return `<table>\n<thead>\n${row(block.head, "th")}</thead>\n${body}</table>\n`;
    }
    case "fence":
      return `<pre><code class="language-text">${escapeHtml(block.text)}\n</code></pre>\n`;
  }
}

function inlineHtml(spans: Inline): string {
  return spans
    .map((span) => {
      switch (span.kind) {
        case "plain":
        case "text":
          return escapeHtml(span.value);
        case "code": {
          const body = oneLine(span.value);
          return body === "" ? "" : `<code>${escapeHtml(body)}</code>`;
        }
        case "strong":
          return `<strong>${inlineHtml(span.spans)}</strong>`;
        case "link": {
          const label = inlineHtml(span.spans);
          return SAFE_HREF.test(span.href) ? `<a href="${escapeHtml(span.href)}">${label}</a>` : label;
        }
      }
    })
    .join("");
}

const CSS = `
:root {
  color-scheme: light dark;
  --fg: #1f2328; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa; --border: #d1d9e0; --link: #0969da;
}
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --panel: #161b22; --border: #3d444d; --link: #4493f8; }
}
* { box-sizing: border-box; }
figure.picture { margin: 1.2rem 0; padding: 0.8rem; background: #ffffff; border: 1px solid var(--border); border-radius: 8px; overflow-x: auto; }
figure.picture svg { display: block; margin: 0 auto; max-width: 100%; height: auto; }
figure.picture figcaption { color: #59636e; font-size: 0.9rem; text-align: center; margin-top: 0.5rem; }
body {
  margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
}
main { max-width: 62rem; margin: 0 auto; padding: 2rem 1.25rem 4rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 .5rem; }
h1 + p { color: var(--muted); font-size: .9rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .75rem; padding-bottom: .3rem; border-bottom: 1px solid var(--border); }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .5rem; }
a { color: var(--link); }
code, pre {
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: .875em;
}
code { background: var(--panel); padding: .1em .3em; border-radius: 4px; overflow-wrap: break-word; white-space: pre-wrap; }
pre {
  background: var(--panel); border: 1px solid var(--border); border-radius: 6px;
  padding: .75rem 1rem; overflow-x: auto; line-height: 1.4;
}
pre code { background: none; padding: 0; font-size: inherit; overflow-wrap: normal; }
table { border-collapse: collapse; margin: .5rem 0 1rem; display: block; overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid var(--border); padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--panel); }
details { border: 1px solid var(--border); border-radius: 6px; margin: .5rem 0; padding: 0 .75rem; }
details[open] { padding-bottom: .25rem; }
summary { cursor: pointer; padding: .5rem 0; }
summary h3 { display: inline; margin: 0; font-size: 1rem; }
summary p { margin: .25rem 0 0 1.1rem; color: var(--muted); }
@media print {
  :root { color-scheme: light; --fg: #000; --muted: #444; --bg: #fff; --panel: #f6f8fa; --border: #bbb; --link: #000; }
  main { max-width: none; padding: 0; }
  a { text-decoration: none; }
  details { border: none; padding: 0; }
  details::details-content { content-visibility: visible; }
  summary { list-style: none; cursor: auto; }
  summary::-webkit-details-marker { display: none; }
  pre { white-space: pre-wrap; overflow-wrap: break-word; }
  table { display: table; }
  h2, h3, summary { break-after: avoid; }
  tr { break-inside: avoid; }
}
@page { margin: 1.5cm; }
`;
