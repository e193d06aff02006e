/**
 * The HTML report: the Markdown report rendered by marked into one self-contained file.
 *
 * Raw HTML in the Markdown is shown as text and only in-document anchors and relative links
 * survive, so nothing from a dump can run or link out; the CSP forbids scripts and every load from
 * outside even if that escaping ever failed.
 */
import { Marked, type Token, type Tokens } from "marked";
import type { ReportDocument } from "./document.js";
import { markdownBody, SECTION, slug, verdict, type RenderOptions } from "./markdown.js";
import type { Picture } from "./pictures.js";

/** Marks a file as ours for `writeReports`. */
export const HTML_MARKER = '<meta name="generator" content="dumpdbg">';

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/** Sections whose subsections fold away: long outputs a reader opens on demand. */
const COLLAPSED: ReadonlySet<string> = new Set([SECTION.evidence, SECTION.technical]);

/** `#anchor`, or a relative path of plain URL characters: no scheme, no host, nothing a browser would reinterpret. */
const SAFE_HREF = /^(?:#[\p{L}\p{N}_-]+|[\w.~!*'%-]+(?:\/[\w.~!*'%-]+)*)$/u;

const marked = new Marked({
  gfm: true,
  renderer: {
    html: ({ text }) => escapeHtml(text),
    heading({ tokens, depth, text }) {
      return `<h${depth} id="${escapeHtml(slug(text))}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
    },
    link({ href, tokens }) {
      const label = this.parser.parseInline(tokens);
      return SAFE_HREF.test(href) ? `<a href="${escapeHtml(href)}">${label}</a>` : label;
    },
    image: ({ text }) => escapeHtml(text),
  },
});

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
<title>${escapeHtml(verdict(doc.report, (s) => s))} · dumpdbg</title>
<style>${CSS}</style>
</head>
<body>
<main>
${withPictures(renderBody(markdownBody(doc, options)), options.pictures ?? [])}</main>
</body>
</html>
`;
}

/** The pictures as figures, after the verdict and its summary (before the first section). */
function withPictures(body: string, pictures: Picture[]): string {
  if (pictures.length === 0) return body;
  const figures = pictures.map((p) => `<figure class="picture">${p.svg}<figcaption>${escapeHtml(p.caption)}</figcaption></figure>`).join("\n");
  const at = body.indexOf("<h2");
  return at < 0 ? `${body}${figures}\n` : `${body.slice(0, at)}${figures}\n${body.slice(at)}`;
}

/**
 * Renders token by token so each level-3 subsection of a collapsed section becomes a `<details>`
 * whose summary is its heading and, when one follows, its first paragraph (an evidence's finding).
 */
function renderBody(markdown: string): string {
  const tokens = marked.lexer(markdown).filter((token) => token.type !== "space");
  const out: string[] = [];
  let section = "";
  let open = false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (isHeading(token) && token.depth <= 3 && open) {
      out.push("</details>\n");
      open = false;
    }
    if (isHeading(token) && token.depth === 2) section = token.text;
    if (isHeading(token) && token.depth === 3 && COLLAPSED.has(section)) {
      const lead: Token[] = [token];
      if (tokens[i + 1]?.type === "paragraph") lead.push(tokens[++i]!);
      out.push(`<details><summary>${marked.parser(lead)}</summary>\n`);
      open = true;
      continue;
    }
    out.push(marked.parser([token]));
  }
  if (open) out.push("</details>\n");
  return out.join("");
}

function isHeading(token: Token): token is Tokens.Heading {
  return token.type === "heading";
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
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
