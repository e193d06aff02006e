/**
 * `dumpdbg batch` over a folder of a Python service's cores, as an SRE holds them after a bad
 * deploy: the same ctypes crash dumped twice, and a worker that aborted. Python cores are grouped
 * by their Python frames (the interpreter's evaluation loops are not in the signature), so the two
 * crashes in `parse_record` are one bug and the abort in `take_job` another.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

import { runCli } from "../helpers/cli.js";
import { crashCore, hasGdb, pythonInterpreters } from "../helpers/cpython.js";
import { JOB_WORKER, pythonCore } from "../helpers/cpython-native.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();
const interpreter = pythonInterpreters()[0];

describe.skipIf(!hasGdb() || !interpreter)("dumpdbg batch over Python cores", () => {
  it("groups the same Python crash dumped twice as one bug, apart from another, by the Python frames", async () => {
    const { python } = interpreter!;
    const [first, second, aborted] = await Promise.all([crashCore(tempDir("dumpdbg-pybatch-"), python), crashCore(tempDir("dumpdbg-pybatch-"), python), pythonCore(tempDir("dumpdbg-pybatch-"), python, JOB_WORKER)]);
    const dir = tempDir("dumpdbg-pybatch-");
    const dumps = path.join(dir, "cores");
    mkdirSync(dumps);
    copyFileSync(first.core, path.join(dumps, "reader-1.core"));
    copyFileSync(second.core, path.join(dumps, "reader-2.core"));
    copyFileSync(aborted.core, path.join(dumps, "worker-1.core"));

    const result = await runCli(["batch", dumps, "--jobs", "2", "--exe", python, "--json", "--out", path.join(dir, "reports"), "--sessions-dir", path.join(dir, "sessions")]);
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout) as { groups: { kind: string; signature: string; count: number; culprit: { function: string | null; language?: string | null } }[]; errors: unknown[] };
    expect(doc.errors).toEqual([]);
    const bySignature = Object.fromEntries(doc.groups.map((g) => [g.signature, g]));
    expect(Object.keys(bySignature).sort()).toEqual(["abort | take_job | work | <module>", "null-dereference | parse_record | handle | <module>"]);
    expect(bySignature["null-dereference | parse_record | handle | <module>"]).toMatchObject({ kind: "null-dereference", count: 2, culprit: { function: "parse_record" } });
    expect(bySignature["abort | take_job | work | <module>"]).toMatchObject({ kind: "abort", count: 1, culprit: { function: "take_job" } });
  }, 180_000);
});
