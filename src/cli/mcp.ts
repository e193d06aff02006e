/** `dumpdbg mcp`: the MCP server on stdio, its folders and its idle limit from the flags. */
import { resolve } from "node:path";
import { serveMcp } from "../mcp/server.js";
import { ExitCode, ExitError } from "./exit.js";
import { sessionsRoot } from "./sessions-root.js";

export interface McpFlags {
  sessionsDir?: string;
  out: string;
  idleMinutes: string;
}

export async function mcp(flags: McpFlags): Promise<void> {
  const minutes = Number(flags.idleMinutes);
  if (!Number.isFinite(minutes) || minutes <= 0) throw new ExitError(ExitCode.usage, `--idle-minutes must be a positive number, got "${flags.idleMinutes}"`);
  await serveMcp({ sessionsDir: sessionsRoot(flags.sessionsDir), outDir: resolve(flags.out), idleMs: Math.round(minutes * 60_000), maxOutputChars: 8_000 });
  // The client is gone and every debugger closed: stdin may still hold the event loop open.
  process.exit(0);
}
