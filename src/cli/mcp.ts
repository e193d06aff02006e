/** `dumpdbg mcp`: the MCP server on stdio, its folders and its idle limit from the flags. */
import { resolve } from "node:path";
import { serveMcp } from "../mcp/server.js";
import { sessionsRoot } from "./sessions-root.js";

export interface McpFlags {
  sessionsDir?: string;
  out: string;
  idleMinutes: number;
}

export async function mcp(flags: McpFlags): Promise<void> {
  await serveMcp({ sessionsDir: sessionsRoot(flags.sessionsDir), outDir: resolve(flags.out), idleMs: Math.round(flags.idleMinutes * 60_000), maxOutputChars: 8_000 });
  // The client is gone and every debugger closed: stdin may still hold the event loop open.
  process.exit(0);
}
