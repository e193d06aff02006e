/** A core cut short in one line for a person: where it ends, and what memory it lost. */
import { counted, listed, thousands } from "./numbers.js";
import type { Cut } from "./schema.js";

/** Lost segments named one by one; the rest are counted. */
const MAX_NAMED = 4;

/**
 * "cut short at byte 360,448 of 450,560: 2 segments lost (90,112 bytes): the stack of LWP 18423
 * (0x7fff…-0x7fff…, its last 67,584 bytes) and 0xffff…-0xffff… (4,096 bytes)".
 */
export function cutText(cut: Cut): string {
  const segments = cut.segments.length + cut.moreSegments;
  const named = cut.segments.slice(0, MAX_NAMED).map((segment) => {
    const range = `${segment.start}-${segment.end}`;
    const bytes = segment.whole ? `${thousands(segment.lostBytes)} bytes` : `its last ${thousands(segment.lostBytes)} bytes`;
    return segment.holds ? `${segment.holds} (${range}, ${bytes})` : `${segment.permissions} memory at ${range} (${bytes})`;
  });
  const others = segments - named.length;
  const list = others > 0 ? [...named, counted(others, "other segment")] : named;
  const lost = segments === 0 ? "no memory lost" : `${counted(segments, "segment")} lost (${thousands(cut.lostBytes)} bytes): ${listed(list)}`;
  return `cut short at byte ${thousands(cut.at)} of ${thousands(cut.expectedBytes)}: ${lost}`;
}
