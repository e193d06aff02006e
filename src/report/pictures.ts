/**
 * Pictures for the HTML report, where a person would rather look than read: where a memory fault's
 * address falls, a deadlock's wait-for graph of threads and locks, and a recursion's shape. Drawn offline by Graphviz compiled to
 * WebAssembly (loaded only when a report has a picture), inline SVG in the self-contained page.
 * Labels come from the dump: they are escaped for DOT, and Graphviz escapes them for SVG.
 */
import { basename } from "node:path";
import { waiterWord, type ReportDocument } from "./document.js";
import { escapeHtml } from "./escape-html.js";
import { thousands } from "./numbers.js";

export interface Picture {
  /** What the picture shows, as the figure's caption. */
  caption: string;
  /** The SVG element, as Graphviz drew it (no XML prolog, no script, no link). */
  svg: string;
}

/** Labels are cut to this many characters: a picture is for the shape, the text has the rest. */
const MAX_LABEL = 60;
/** A graph with more nodes than this is not drawn: the tables say it better. */
const MAX_NODES = 40;

export function deadlockGraph(doc: ReportDocument): string | null {
  const cycle = doc.report.crash.deadlock?.cycle ?? [];
  if (doc.report.crash.kind !== "deadlock" || cycle.length < 2 || cycle.length * 2 > MAX_NODES) return null;
  const lines = [
    "digraph deadlock {",
    // A cycle reads best as a ring.
    '  graph [layout=circo, bgcolor="transparent", fontname="Helvetica", mindist=0.6, size="7.5,4.5"];',
    '  node [fontname="Helvetica", fontsize=13];',
    '  edge [fontname="Helvetica", fontsize=11];',
  ];
  for (const edge of cycle) {
    const where = edge.file ? `${basename(edge.file)}:${edge.line ?? "?"}` : "";
    lines.push(`  t${edge.thread} [shape=box, style="rounded,filled", fillcolor="#fde2e1", color="#b42318", label=${dot([`${waiterWord(doc.report)} ${edge.thread}`, edge.function ?? "??", where])}];`);
  }
  for (const edge of cycle) {
    if (edge.lock === null) continue;
    lines.push(`  ${lockId(edge.lock)} [shape=ellipse, style=filled, fillcolor="#eef2f6", color="#475467", label=${dot([edge.lockName ?? "lock", edge.lock])}];`);
    lines.push(`  t${edge.thread} -> ${lockId(edge.lock)} [label="waits for", color="#b42318", fontcolor="#b42318", style=dashed];`);
    if (edge.heldByThread !== null) lines.push(`  ${lockId(edge.lock)} -> t${edge.heldByThread} [label="held by", color="#475467"];`);
  }
  lines.push("}");
  return lines.join("\n");
}

export function recursionGraph(doc: ReportDocument): string | null {
  const recursion = doc.details.recursion;
  if (!recursion || recursion.cycle.length === 0 || recursion.cycle.length > MAX_NODES) return null;
  const frames = doc.details.frames ?? [];
  const inCycle = new Set(recursion.cycle);
  // The first frame outside the cycle, from the innermost out: where the recursion was entered.
  const entry = frames.find((frame, i) => i > 0 && frame.function && !inCycle.has(frame.function) && frames.slice(0, i).some((f) => f.function && inCycle.has(f.function)));
  const lines = [
    "digraph recursion {",
    '  graph [rankdir=LR, bgcolor="transparent", fontname="Helvetica"];',
    '  node [shape=box, style="rounded,filled", fillcolor="#eef2f6", color="#475467", fontname="Helvetica", fontsize=13];',
    '  edge [fontname="Helvetica", fontsize=11, color="#475467"];',
  ];
  recursion.cycle.forEach((fn, i) => lines.push(`  c${i} [label=${dot([fn])}];`));
  if (entry?.function) lines.push(`  entry [label=${dot([entry.function, "entered here"])}, fillcolor="#ffffff"];`, "  entry -> c0;");
  for (let i = 0; i < recursion.cycle.length; i++) {
    const next = (i + 1) % recursion.cycle.length;
    const back = next === 0;
    lines.push(`  c${i} -> c${next}${back ? ` [label=${dot([`again: ${thousands(recursion.frames)} frames deep`])}, color="#b42318", fontcolor="#b42318"]` : ""};`);
  }
  lines.push("}");
  return lines.join("\n");
}

/**
 * Where a memory fault's address falls, as a bar: the stretch that holds it (the null page, the
 * stack, a section) with the offset from its start, or the gap between the nearest two with the
 * distance to each. One dimension on a linear scale: no layout to solve, so drawn directly.
 */
export function faultBar(doc: ReportDocument): Picture | null {
  const place = doc.details.faultPlace;
  if (!place) return null;
  const address = BigInt(place.address);
  const W = 760;
  const left = 20;
  const right = W - 20;
  const y = 46;
  const h = 28;
  const parts: string[] = [];
  const text = (x: number, ty: number, s: string, anchor: "start" | "middle" | "end", colour = "#1f2328") =>
    `<text x="${x.toFixed(1)}" y="${ty}" text-anchor="${anchor}" font-family="Helvetica, Arial, sans-serif" font-size="12" fill="${colour}">${escapeHtml(cutLabel(s))}</text>`;
  let marker: number;
  let caption: string;
  if (place.within) {
    const start = BigInt(place.within.start);
    const end = BigInt(place.within.end);
    const span = end > start ? end - start : 1n;
    marker = left + Number(((address - start) * 10_000n) / span) / 10_000 * (right - left);
    parts.push(`<rect x="${left}" y="${y}" width="${right - left}" height="${h}" rx="4" fill="#eef2f6" stroke="#475467"/>`);
    parts.push(text(left, y - 8, `${place.within.label}`, "start"));
    parts.push(text(left, y + h + 16, place.within.start, "start", "#59636e"), text(right, y + h + 16, place.within.end, "end", "#59636e"));
    caption = `The fault address ${place.address} is ${offsetText(address - start)} into ${place.within.label}.`;
  } else {
    const gapStart = place.below ? BigInt(place.below.end) : address;
    const gapEnd = place.above ? BigInt(place.above.start) : address + 1n;
    const third = (right - left) / 3;
    parts.push(`<rect x="${left}" y="${y}" width="${third.toFixed(1)}" height="${h}" rx="4" fill="#eef2f6" stroke="#475467"/>`);
    parts.push(`<rect x="${(right - third).toFixed(1)}" y="${y}" width="${third.toFixed(1)}" height="${h}" rx="4" fill="#eef2f6" stroke="#475467"/>`);
    parts.push(`<line x1="${(left + third).toFixed(1)}" y1="${y + h / 2}" x2="${(right - third).toFixed(1)}" y2="${y + h / 2}" stroke="#98a2b3" stroke-dasharray="4 4"/>`);
    if (place.below) parts.push(text(left, y - 8, place.below.label, "start"), text(left + third, y + h + 16, place.below.end, "end", "#59636e"));
    if (place.above) parts.push(text(right, y - 8, place.above.label, "end"), text(right - third, y + h + 16, place.above.start, "start", "#59636e"));
    const span = gapEnd > gapStart ? gapEnd - gapStart : 1n;
    marker = left + third + (Number(((address - gapStart) * 10_000n) / span) / 10_000) * third;
    const distances = [place.below ? `${offsetText(address - gapStart)} past the end of ${place.below.label}` : null, place.above ? `${offsetText(gapEnd - address)} before ${place.above.label}` : null].filter(Boolean);
    caption = `The fault address ${place.address} is in no mapping: ${distances.join(", and ")}.`;
  }
  const x = Math.min(right, Math.max(left, marker));
  parts.push(`<line x1="${x.toFixed(1)}" y1="${y - 4}" x2="${x.toFixed(1)}" y2="${y + h + 4}" stroke="#b42318" stroke-width="3"/>`);
  parts.push(text(x, y + h + 34, `fault ${place.address}`, x < W / 4 ? "start" : x > (3 * W) / 4 ? "end" : "middle", "#b42318"));
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="122" viewBox="0 0 ${W} 122" role="img" aria-label="${escapeHtml(caption)}">${parts.join("")}</svg>`;
  return { caption, svg };
}

function offsetText(n: bigint): string {
  const value = n < 0n ? -n : n;
  const units: [bigint, string][] = [[1n << 30n, "GiB"], [1n << 20n, "MiB"], [1n << 10n, "KiB"]];
  for (const [size, unit] of units) if (value >= size) return `0x${value.toString(16)} bytes (${(Number(value) / Number(size)).toFixed(1)} ${unit})`;
  return `0x${value.toString(16)} bytes (${value} B)`;
}

function cutLabel(s: string): string {
  return s.length > 70 ? `${s.slice(0, 69)}…` : s;
}

/** The pictures a report has, drawn; none when nothing in it is worth a picture. */
export async function drawPictures(doc: ReportDocument): Promise<Picture[]> {
  const bar = faultBar(doc);
  const wanted = [
    { caption: `Who waits for whom: each ${waiterWord(doc.report)} waits for a lock that the next one holds.`, dot: deadlockGraph(doc) },
    { caption: "The recursion's shape: one turn of the cycle of calls, repeated until the stack ran out.", dot: recursionGraph(doc) },
  ].filter((w): w is { caption: string; dot: string } => w.dot !== null);
  if (wanted.length === 0) return bar ? [bar] : [];
  const { instance } = await import("@viz-js/viz");
  const viz = await instance();
  return [...(bar ? [bar] : []), ...wanted.map(({ caption, dot: source }) => ({ caption, svg: svgElement(viz.renderString(source, { format: "svg" })) }))];
}

/** The `<svg>` element alone: Graphviz's output starts with an XML prolog and a doctype. */
function svgElement(document: string): string {
  const start = document.indexOf("<svg");
  return start < 0 ? "" : document.slice(start).trim();
}

/** A DOT string literal of lines, each cut and escaped. */
function dot(lines: string[]): string {
  const text = lines
    .filter((line) => line !== "")
    .map((line) => (line.length > MAX_LABEL ? `${line.slice(0, MAX_LABEL - 1)}…` : line))
    .map((line) => line.replace(/[\u0000-\u001f\u007f]/g, " ").replace(/\\/g, "\\\\").replace(/"/g, '\\"'))
    .join("\\n");
  return `"${text}"`;
}

function lockId(address: string): string {
  return `l_${address.replace(/[^0-9a-zA-Z]/g, "")}`;
}
