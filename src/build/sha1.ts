/**
 * What @langchain/core's UUID v5 (LangGraph's task ids, one per node run) gets for its SHA-1
 * (build.mjs): Node's own, rather than the package's JavaScript one, which runs cold in every
 * process (~2–4 ms of an analysis). The same digest, as the same 20 bytes.
 */
import { createHash } from "node:crypto";

export default function sha1(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha1").update(bytes).digest());
}
