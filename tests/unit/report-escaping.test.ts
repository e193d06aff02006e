/**
 * Dump and model strings are data. Every field a renderer shows carries the same hostile text;
 * none of it may become markup, a live link, or anything but the text it was.
 */
import { Marked, type MarkedToken } from "marked";
import { describe, expect, it } from "vitest";
import { renderHtml, renderMarkdown, type ReportDocument } from "../../src/report/index.js";
import { SECTION } from "../../src/report/markdown.js";

const HOSTILE = [
  "<script>document.title='PWNED'</script>",
  `<img src=x onerror="document.title='PWNED'">`,
  "[click](javascript:alert(1)) ![pixel](http://127.0.0.1:9/pixel.png)",
  "<http://127.0.0.1:9/auto> http://127.0.0.1:9/bare www.evil.example mail@evil.example",
  "[ref]\n\n[ref]: javascript:alert(1)",
  "&#106;avascript:alert(1) &lt;b&gt;",
  "# heading\n===\n> quote\n- item\n1. item\n    indented",
  "| a | b |\n| --- | --- |\n| c | d |",
  "`code` ``` _em_ **strong** ~~del~~ $x$ [^1] <!-- comment --> trailing\\",
].join("\n\n");

/** Values that open a block when they start a line or a list item. */
const LINE_STARTS = ["# lone-heading", "- lone-item", "1. lone-numbered", "> lone-quote", "+ lone-plus", "=== lone-setext"];

/** A terminal hyperlink (OSC 8) and a right-to-left override: both must be gone from the output. */
const TERMINAL = "\u001b]8;;http://127.0.0.1:9/\u0007link\u001b]8;;\u0007 \u202Eevil";

/** A function name with a pipe, which would split a GFM table cell even inside a code span. */
const PIPED = "f|<b>bold</b>";
const BACKSLASH_PIPED = "g\\|<b>bold</b>";

/**
 * Every string field that renders carries hostile text. Coverage over realism: a null dereference
 * that also has a deadlock cycle and a recursion, so every block is rendered.
 */
function hostileDocument(): ReportDocument {
  return {
    report: {
      schemaVersion: 1,
      session: {
        id: "hostile",
        dump: HOSTILE,
        executable: HOSTILE,
        debugger: HOSTILE,
        startedAt: HOSTILE,
        finishedAt: HOSTILE,
      },
      issue: HOSTILE,
      crash: {
        kind: "null-dereference",
        signal: HOSTILE,
        signalCode: HOSTILE,
        faultAddress: HOSTILE,
        access: "read",
        message: HOSTILE,
        thread: { id: 1, lwp: 2, name: HOSTILE },
        culprit: { function: HOSTILE, file: HOSTILE, line: 3, column: null, frame: 0, module: HOSTILE, language: null }, runtime: null,
        origin: { type: "fault", sender: null, evidence: HOSTILE },
        exploitability: { rating: "unknown", reasons: [HOSTILE] },
        annotations: { reportId: null, clientId: null, simple: { prod: HOSTILE }, modules: [{ module: HOSTILE, list: [HOSTILE], simple: {}, objects: {} }] },
        cut: { at: 4096, expectedBytes: 8192, lostBytes: 4096, segments: [{ start: "0x1000", end: "0x2000", permissions: "rw-", lostBytes: 4096, whole: true, holds: HOSTILE }], moreSegments: 0 },
        signature: HOSTILE,
        deadlock: {
          cycle: [
            { thread: 1, function: HOSTILE, file: HOSTILE, line: 4, lock: HOSTILE, heldByThread: 2 },
            { thread: 2, function: PIPED, file: BACKSLASH_PIPED, line: 5, lock: TERMINAL, heldByThread: 1 },
          ],
        },
      },
      hypotheses: [{ id: "H1", statement: HOSTILE, status: "confirmed", evidenceIds: ["e1", HOSTILE] }],
      conclusion: {
        summary: LINE_STARTS.join("\n\n"),
        rootCause: HOSTILE,
        confidence: 0.5,
        recommendations: [HOSTILE, ...LINE_STARTS],
      },
      critique: { rounds: [{ round: 1, issues: [HOSTILE] }], unresolved: [HOSTILE] },
      followUpQuestions: [HOSTILE, ...LINE_STARTS],
      evidence: [{ id: "e1", command: HOSTILE, summary: HOSTILE, bytes: 10, path: "/tmp/s/evidence/e1.txt" }],
      usage: { llmCalls: 1, local: { inputTokens: 1, outputTokens: 1 }, cloud: { inputTokens: 1, outputTokens: 1 } },
      timings: { totalMs: 1, debuggerMs: 1, llmMs: 1 },
    },
    details: {
      frames: [
        { level: 0, function: HOSTILE, file: HOSTILE, line: 3, module: HOSTILE },
        { level: 1, function: PIPED, file: BACKSLASH_PIPED, line: 9, module: TERMINAL },
      ],
      recursion: { frames: 100, cycle: [HOSTILE, PIPED] },
      registers: [{ name: HOSTILE, value: PIPED }],
      threads: [{ id: 1, name: HOSTILE, function: BACKSLASH_PIPED, state: HOSTILE }],
      modules: [{ path: HOSTILE, from: PIPED, to: TERMINAL }],
      sourceExcerpt: { file: HOSTILE, line: 2, lines: HOSTILE.split("\n").map((text, i) => ({ n: i + 1, text })) },
      evidenceExcerpts: { e1: `${HOSTILE}\n\`\`\`\`\nstill inside\n\`\`\`` },
      redactions: { count: 1, kinds: { [HOSTILE]: 1 } },
      chat: [{ question: HOSTILE, answer: HOSTILE, evidenceIds: [HOSTILE] }],
    },
  };
}

/** Every token marked (GFM) finds, nested ones included; renderMarkdown makes no extension tokens. */
function allTokens(markdown: string): MarkedToken[] {
  const marked = new Marked({ gfm: true });
  const tokens: MarkedToken[] = [];
  marked.walkTokens(marked.lexer(markdown), (token) => {
    tokens.push(token as MarkedToken);
  });
  return tokens;
}

/** What a reader sees: the text between the tags of <main>, entities decoded once, whitespace collapsed. */
function visibleText(html: string): string {
  const main = html.slice(html.indexOf("<main>"), html.indexOf("</main>"));
  return collapse(
    main
      .replace(/<[^>]*>/g, "")
      .replace(/&(#\d+|lt|gt|amp|quot);/g, (_, name: string) =>
        name.startsWith("#") ? String.fromCharCode(Number(name.slice(1))) : { lt: "<", gt: ">", amp: "&", quot: '"' }[name]!,
      ),
  );
}

function collapse(s: string): string {
  return s.replace(/\s+/g, " ");
}

describe("Markdown escaping", () => {
  const md = renderMarkdown(hostileDocument(), { linkBase: "/tmp/reports" });
  const tokens = allTokens(md);

  it("has no HTML but its own marker comment", () => {
    expect(tokens.filter((t) => t.type === "html").map((t) => t.raw.trim())).toEqual(["<!-- dumpdbg report -->"]);
  });

  it("makes no image, emphasis, quote or extra heading out of data", () => {
    const types = new Set(tokens.map((t) => t.type));
    for (const type of ["image", "em", "del", "blockquote", "hr", "def"]) expect(types).not.toContain(type);
    const headings = tokens.flatMap((t) => (t.type === "heading" ? [`${t.depth} ${t.text.slice(0, 24)}`] : []));
    expect(headings.filter((h) => h.startsWith("1 "))).toHaveLength(1);
    expect(headings.filter((h) => h.startsWith("2 ")).map((h) => h.slice(2))).toEqual(Object.values(SECTION));
    expect(headings.filter((h) => h.startsWith("3 ")).map((h) => h.slice(0, 8))).toEqual(
      ["Source", "Wait-for", "Stack", "e1 · ```", "Register", "Threads ", "Modules "].map((h) => `3 ${h}`.slice(0, 8)),
    );
    expect(tokens.filter((t) => t.type === "strong").map((t) => t.text)).not.toContain("strong");
  });

  it("links only to its own anchors and evidence files", () => {
    const hrefs = tokens.flatMap((t) => (t.type === "link" ? [t.href] : []));
    // H1 cites e1 and an id that names no evidence, which stays text; e1 links to its output file.
    expect(hrefs).toHaveLength(2);
    expect(hrefs[0]).toMatch(/^#e1--[\p{L}\p{N}_-]+$/u);
    expect(hrefs[1]).toBe("../s/evidence/e1.txt");
  });

  it("keeps tables to their columns when a value holds pipes", () => {
    const tables = tokens.filter((t) => t.type === "table");
    expect(tables.map((t) => t.header.length)).toEqual([2, 4, 4, 2, 4, 3]);
    for (const table of tables) {
      for (const row of table.rows) expect(row).toHaveLength(table.header.length);
    }
  });

  it("fences outputs beyond any backtick run inside them", () => {
    const blocks = tokens.filter((t) => t.type === "code").map((t) => t.text);
    expect(blocks).toContain(`${HOSTILE}\n\`\`\`\`\nstill inside\n\`\`\``);
  });

  it("drops terminal escapes and direction overrides", () => {
    expect(md).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(md).toContain("\uFFFD]8;;");
  });
});

describe("HTML escaping", () => {
  const html = renderHtml(hostileDocument(), { linkBase: "/tmp/reports" });

  it("contains only the elements and attributes the renderer makes", () => {
    const tags = [...html.matchAll(/<([a-zA-Z][\w-]*)([^>]*)>/g)];
    expect(new Set(tags.map((m) => m[1]))).toEqual(
      new Set([
        ...["html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "p", "strong", "code", "pre"],
        ...["table", "thead", "tbody", "tr", "th", "td", "ol", "ul", "li", "a", "details", "summary"],
      ]),
    );
    const attributes = new Set(tags.flatMap((m) => [...m[2]!.matchAll(/\s([\w-]+)(?:="[^"]*")?/g)].map((a) => a[1])));
    expect(attributes).toEqual(new Set(["lang", "charset", "http-equiv", "content", "name", "id", "class", "href"]));
  });

  it("links only to in-document anchors and relative evidence files", () => {
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
    expect(hrefs).toHaveLength(2);
    for (const href of hrefs) expect(href).toMatch(/^(#[\w-]+|\.\.\/s\/evidence\/e1\.txt)$/);
  });

  it("shows every hostile string as the text it was", () => {
    const text = visibleText(html);
    expect(text).toContain(collapse(HOSTILE));
    expect(text).toContain(PIPED);
    expect(text).toContain(BACKSLASH_PIPED);
    for (const value of LINE_STARTS) expect(text.split(value).length - 1).toBe(3);
    expect(text.split(collapse(HOSTILE)).length - 1).toBeGreaterThan(30);
  });
});

describe("code spans in agent prose", () => {
  it("keep identifiers as code, their content inert and their spacing intact", () => {
    const doc = hostileDocument();
    doc.report.conclusion.rootCause = "`session->client` held `<img src=x onerror=alert(1)>`; the value was `\"   POST\"` [x](javascript:1)";
    const md = renderMarkdown(doc);
    expect(md).toContain("`session->client` held `<img src=x onerror=alert(1)>`; the value was `\"   POST\"` \\[x\\](javascript:1)");
    const html = renderHtml(doc);
    expect(html).toContain("<code>session-&gt;client</code> held <code>&lt;img src=x onerror=alert(1)&gt;</code>; the value was <code>&quot;   POST&quot;</code>");
    expect(html).not.toMatch(/<img/);
    expect(html).not.toMatch(/href="javascript/);
  });
});
