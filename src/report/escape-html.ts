/** Text as HTML (and SVG) character data or an attribute's value: the reports', the pictures' and the batch report's. */
const ESCAPED: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPED[c]!);
}
