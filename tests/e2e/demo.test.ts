/**
 * The README's quick start, as a new user runs it after the build: `npm run demo` (demo/run.sh)
 * compiles the demo's chat server, makes a real core of its crash and analyses it offline with the
 * built CLI. Its extra arguments go to `analyze`: `--json` puts the report on stdout.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import type { Report } from "../../src/report/schema.js";

const script = fileURLToPath(new URL("../../demo/run.sh", import.meta.url));

describe("the demo", () => {
  it("builds the crashing server, dumps its core and analyses it offline", async () => {
    const { stdout, stderr } = await promisify(execFile)("bash", [script, "--json"], { maxBuffer: 16 * 1024 * 1024 });
    expect(stderr).toMatch(/demo: analysing .*crash\.core/);
    const report = JSON.parse(stdout) as Report;
    expect(report.crash.kind).toBe("null-dereference");
    expect(report.crash.culprit.function).toBe("queue_message");
    expect(report.usage.llmCalls).toBe(0);
  }, 60_000);
});
