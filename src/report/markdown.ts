/**
 * The Markdown report: the report's blocks (layout.ts) written as GitHub-flavoured Markdown, every
 * value from the dump or a model escaped (inline.ts) so it is shown as the text it was.
 */
import type { ReportDocument } from "./document.js";
import { inlineMarkdown, longestRun, plainText } from "./inline.js";
import { reportBlocks, verdict, type Block, type RenderOptions } from "./layout.js";
import type { Report } from "./schema.js";

export { SECTION, type RenderOptions } from "./layout.js";

/** First line of every Markdown report: how `writeReports` knows a file is ours to replace. */
export const MARKDOWN_MARKER = "<!-- dumpdbg report -->";

export function renderMarkdown(doc: ReportDocument, options: RenderOptions = {}): string {
  return `${MARKDOWN_MARKER}\n\n${(options.blocks ?? reportBlocks(doc, options)).map(blockMarkdown).join("\n\n")}\n`;
}

/** The verdict as a line of text, for a terminal. */
export function verdictText(report: Report): string {
  return plainText(verdict(report));
}

function blockMarkdown(block: Block): string {
  switch (block.kind) {
    case "heading":
      return `${"#".repeat(block.depth)} ${inlineMarkdown(block.spans)}`;
    case "paragraph":
      return inlineMarkdown(block.spans);
    case "list":
      return block.items.map((item, i) => `${block.ordered ? `${i + 1}.` : "-"} ${inlineMarkdown(item)}`).join("\n");
    case "table": {
      const row = (cells: string[]) => `| ${cells.join(" | ")} |`;
      const cells = (run: typeof block.head) => run.map((cell) => inlineMarkdown(cell, true));
      return [row(cells(block.head)), row(block.head.map(() => "---")), ...block.rows.map((r) => row(cells(r)))].join("\n");
    }
    case "fence": {
      // The fence is longer than any backtick run inside, so nothing can close it early.
      const ticks = "`".repeat(Math.max(3, longestRun(block.text, "`") + 1));
      return `${ticks}text\n${block.text}\n${ticks}`;
    }
  }
}
