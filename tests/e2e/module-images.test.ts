/**
 * A Windows minidump read away from its machine lacks the system DLLs' files, so the debugger
 * cannot unwind out of them. A Microsoft symbol server (or store) keeps those images by their
 * timestamp and size: named with --symbols, it gives them to the debugger, and the stack is the
 * one the DLLs themselves give (--modules-path with the same DLLs), not a scan's.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readPeIdentity } from "../../src/debuggers/dumpfile/pe.js";
import type { Crash } from "../../src/report/schema.js";
import { runCli } from "../helpers/cli.js";
import { buildMinidump, missingWindowsTools, WINE_DLLS, type BuiltMinidump } from "../helpers/windows.js";

const missing = missingWindowsTools();
const dir = mkdtempSync(path.join(os.tmpdir(), "dumpdbg-images-"));
let built: BuiltMinidump;
let server: Server;
let url = "";
const requests: string[] = [];

beforeAll(async () => {
  if (missing.length > 0) return;
  built = await buildMinidump("format-check");
  // The store: every Wine DLL filed as symstore files an image, `<name>/<TIMESTAMP><SIZE>/<name>`.
  const store = path.join(dir, "store");
  for (const name of readdirSync(WINE_DLLS).filter((n) => n.endsWith(".dll"))) {
    let codeId: string;
    try {
      codeId = readPeIdentity(path.join(WINE_DLLS, name)).codeId;
    } catch {
      continue;
    }
    mkdirSync(path.join(store, name, codeId), { recursive: true });
    // A link, not a copy: the store would be ~600 MB of Wine's DLLs.
    symlinkSync(path.join(WINE_DLLS, name), path.join(store, name, codeId, name));
  }
  server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const file = path.join(store, decodeURIComponent((req.url ?? "/").slice(1)));
    if (!file.startsWith(store) || !existsSync(file) || file === store) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/octet-stream" }).end(readFileSync(file));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 600_000);

afterAll(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function triage(args: string[]): Promise<{ crash: Crash; stderr: string }> {
  const run = await runCli(["triage", built.dump, "--json", "--debugger", "lldb", ...args]);
  expect(run.code, run.stderr).toBe(0);
  return { crash: JSON.parse(run.stdout) as Crash, stderr: run.stderr };
}

describe.skipIf(missing.length > 0)("system DLLs' images from a symbol server", () => {
  it("give the same stack and culprit as the DLLs named with --modules-path, and say where they came from", async () => {
    const withModules = await triage(["--modules-path", WINE_DLLS]);
    const cache = path.join(dir, "cache");
    const fetched = await triage(["--symbols", url, "--symbols-cache", cache]);
    expect(fetched.crash.culprit).toEqual(withModules.crash.culprit);
    expect(fetched.crash.signature).toBe(withModules.crash.signature);
    expect(fetched.stderr).toMatch(/symbols: .*\d+ module images from http:\/\/127\.0\.0\.1:\d+/);
    // kernelbase.dll, where the exception was raised, was asked for by its timestamp and size.
    expect(requests.some((r) => /^\/kernelbase\.dll\/[0-9A-F]{8}[0-9a-f]+\/kernelbase\.dll$/.test(r))).toBe(true);
    // A second run takes them from the cache, asking nothing.
    const before = requests.length;
    const again = await triage(["--symbols", url, "--symbols-cache", cache, "--offline"]);
    expect(again.crash.culprit).toEqual(withModules.crash.culprit);
    expect(requests.length).toBe(before);
  }, 180_000);

  it("without them the debugger lacks kernelbase.dll's unwind information, and with them it has it", async () => {
    const bare = await runCli(["triage", built.dump, "--debugger", "lldb"]);
    expect(bare.stdout).toMatch(/kernelbase\.dll, whose unwind information this machine lacks/);
    const fetched = await runCli(["triage", built.dump, "--debugger", "lldb", "--symbols", url, "--symbols-cache", path.join(dir, "cache2")]);
    const withModules = await runCli(["triage", built.dump, "--debugger", "lldb", "--modules-path", WINE_DLLS]);
    expect(fetched.stdout).not.toMatch(/whose unwind information this machine lacks/);
    const notes = (text: string) => text.split("\n").filter((line) => line.startsWith("Note:"));
    expect(notes(fetched.stdout)).toEqual(notes(withModules.stdout));
  }, 180_000);
});
