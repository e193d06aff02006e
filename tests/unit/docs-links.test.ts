/**
 * The README's and the manual's relative links: every file they name exists, and every `#anchor`
 * is a heading of the page it points into (GitHub's slugs).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const pages = ["README.md", "ARCHITECTURE.md", ...readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** The text outside fenced blocks and code spans, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of markdown.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** The broken relative links of one page, as `target: why`. */
function brokenLinks(page: string, read: (file: string) => string | null): string[] {
  const text = read(page);
  if (text === null) return [`${page}: missing`];
  const broken: string[] = [];
  for (const [, target] of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue;
    const [file, anchor] = target!.split("#") as [string, string | undefined];
    const into = file === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
    const body = read(into);
    if (body === null) broken.push(`${target}: ${into} does not exist`);
    else if (anchor !== undefined && into.endsWith(".md") && !anchorsOf(body).has(anchor)) broken.push(`${target}: ${into} has no heading #${anchor}`);
  }
  return broken;
}

const readRepo = (file: string): string | null => {
  const full = path.join(root, file);
  if (!existsSync(full)) return null;
  return file.endsWith(".md") ? readFileSync(full, "utf8") : "";
};

describe("the docs' relative links", () => {
  it.each(pages)("%s links only to files and headings that exist", (page) => {
    expect(brokenLinks(page, readRepo)).toEqual([]);
  });

  it("every page of the manual is linked from its index", () => {
    const index = readFileSync(path.join(root, "docs/README.md"), "utf8");
    for (const page of pages.filter((p) => p.startsWith("docs/") && p !== "docs/README.md")) expect(index).toContain(`(${path.basename(page)}`);
  });

  it("finds a missing file, a missing heading, and no link inside code", () => {
    const files: Record<string, string> = {
      "docs/a.md": "# Title\n\n## `exec`: your own commands\n\n[ok](b.md#cdb-and-net) [self](#exec-your-own-commands) [gone](c.md) [bad](b.md#nope)\n\n```sh\n[not a link](x.md)\n```\n`[nor](y.md)`\n",
      "docs/b.md": "# B\n\n## cdb and .NET\n",
    };
    expect(brokenLinks("docs/a.md", (f) => files[f] ?? null)).toEqual(["c.md: docs/c.md does not exist", "b.md#nope: docs/b.md has no heading #nope"]);
  });

  it("makes GitHub's anchors", () => {
    expect([...anchorsOf("# Hung processes and `--pid`\n## Exit codes\n## Exit codes\n")]).toEqual(["hung-processes-and---pid", "exit-codes", "exit-codes-1"]);
  });
});
