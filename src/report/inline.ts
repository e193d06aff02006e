/**
 * The report's inline content: runs of our own words, values from the dump or a model, code,
 * emphasis and in-document links; and how each is written in Markdown.
 *
 * Everything that came from the dump or a model is data. In Markdown, inline values are escaped so
 * they cannot make links, images, HTML, headings, lists or tables; identifiers go in code spans and
 * outputs in fences longer than any backtick run they contain. (The HTML renderer escapes the same
 * spans for HTML.)
 */

export type Span =
  /** Our own words: fixed text and numbers, written as they are. */
  | { kind: "plain"; value: string }
  /** A value from the dump or a model, on one line, verbatim; `startsLine`: escaped as if it began a line. */
  | { kind: "text"; value: string; startsLine: boolean }
  | { kind: "code"; value: string }
  | { kind: "strong"; spans: Inline }
  /** `href` is an in-document anchor (`#…`) or a path relative to the report's folder, percent-encoded. */
  | { kind: "link"; href: string; spans: Inline };

export type Inline = Span[];

/** A run of inline content: strings are our own words, null and "" are skipped. */
export function line(...parts: (string | Span | Inline | null)[]): Inline {
  const spans: Inline = [];
  for (const part of parts) {
    if (part === null || part === "") continue;
    if (typeof part === "string") spans.push({ kind: "plain", value: part });
    else if (Array.isArray(part)) spans.push(...part);
    else spans.push(part);
  }
  return spans;
}

/** Runs joined by our own separator. */
export function joined(runs: Inline[], separator: string): Inline {
  return runs.flatMap((run, i) => (i === 0 ? run : [{ kind: "plain" as const, value: separator }, ...run]));
}

/**
 * A value from the dump or a model, inline on one line, verbatim: line breaks become spaces, but
 * runs of spaces stay (they can be part of a value: `"   POST"`).
 */
export function text(s: string): Span {
  return { kind: "text", value: clean(s).replace(/[\t\n]+/g, " ").trim(), startsLine: true };
}

/**
 * Inline prose written by an agent or a model: verbatim like `text`, except that `code` spans stay
 * code spans, as agents quote identifiers and values that way. A code span is literal by definition.
 */
export function words(s: string): Inline {
  return clean(s)
    .replace(/[\t\n]+/g, " ")
    .trim()
    .split(/`([^`]+)`/)
    .flatMap((part, i): Inline => (i % 2 === 1 ? [code(part)] : part === "" ? [] : [{ kind: "text", value: part, startsLine: i === 0 }]));
}

/** Paragraphs of agent or model prose: one run of `words` each, the empty ones left out. */
export function paragraphsOf(s: string): Inline[] {
  return clean(s)
    .split(/\n\s*\n/)
    .filter((paragraph) => paragraph.replace(/[\t\n]+/g, " ").trim() !== "")
    .map(words);
}

export function code(s: string): Span {
  return { kind: "code", value: s };
}

export function strong(...parts: (string | Span | Inline | null)[]): Span {
  return { kind: "strong", spans: line(...parts) };
}

export function link(href: string, ...parts: (string | Span | Inline | null)[]): Span {
  return { kind: "link", href, spans: line(...parts) };
}

/** The text a reader sees, with no markup: a terminal's headline, the HTML page's title. */
export function plainText(spans: Inline): string {
  return spans.map((span) => (span.kind === "strong" || span.kind === "link" ? plainText(span.spans) : span.kind === "code" ? oneLine(span.value) : span.value)).join("");
}

// --- Markdown ---

/** Inline content in Markdown; in a table cell, code spans also keep GFM from splitting the cell. */
export function inlineMarkdown(spans: Inline, inCell = false): string {
  return spans
    .map((span) => {
      switch (span.kind) {
        case "plain":
          return span.value;
        case "text":
          return escapeInline(span.value, span.startsLine);
        case "code":
          return inCell ? cellCode(span.value) : codeSpan(span.value);
        case "strong":
          return `**${inlineMarkdown(span.spans, inCell)}**`;
        case "link":
          return `[${inlineMarkdown(span.spans, inCell)}](${span.href})`;
      }
    })
    .join("");
}

/**
 * GitHub's heading anchor for a heading's Markdown source (its text, lower-cased, punctuation
 * dropped, spaces made hyphens), so in-document links work on GitHub and in our HTML alike.
 */
function slug(headingSource: string): string {
  return headingSource
    .replace(/\\(.)/g, "$1")
    .replace(/`/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchor of a heading whose content is `spans`. */
export function anchorOf(spans: Inline): string {
  return slug(inlineMarkdown(spans));
}

/**
 * Control characters could drive a terminal that `cat`s the report, and bidirectional overrides
 * could make the text read differently than it is: both become U+FFFD.
 */
const UNSAFE_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function clean(s: string): string {
  return s.replace(/\r\n?/g, "\n").replace(UNSAFE_CHARS, "\uFFFD");
}

export function oneLine(s: string): string {
  return clean(s).replace(/\s*\n\s*/g, " ");
}

function escapeInline(s: string, startsLine: boolean): string {
  const escaped = s
    .replace(/[\\`*[\]<&|~$]/g, "\\$&")
    // An underscore between letters or digits cannot start or end emphasis: identifiers stay legible.
    .replace(/(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, "\\_")
    // GFM links bare URLs and e-mail addresses; breaking the pattern keeps them text.
    .replace(/:\/\//g, "\\://")
    .replace(/\bwww\./gi, (m) => `${m.slice(0, 3)}\\.`)
    .replace(/@/g, "\\@");
  // A value placed at the start of a line or list item must not open a heading or a list.
  return startsLine ? escaped.replace(/^[#+=>-]/, "\\$&").replace(/^(\d+)([.)])/, "$1\\$2") : escaped;
}

/** A code span on one line: its delimiter is one backtick longer than any run inside. */
function codeSpan(s: string): string {
  const body = oneLine(s);
  if (body === "") return "";
  const ticks = "`".repeat(longestRun(body, "`") + 1);
  const pad = /^[`\s]|[`\s]$/.test(body) ? " " : "";
  return `${ticks}${pad}${body}${pad}${ticks}`;
}

/**
 * A code span in a table cell. GFM splits cells at every pipe not preceded by a backslash, even
 * inside code, and no escape yields a literal `\|` in code there, so such a value becomes text.
 */
function cellCode(s: string): string {
  return oneLine(s).includes("\\|") ? inlineMarkdown([text(s)]) : codeSpan(s).replaceAll("|", "\\|");
}

export function longestRun(s: string, char: string): number {
  let longest = 0;
  let run = 0;
  for (const c of s) {
    run = c === char ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}
