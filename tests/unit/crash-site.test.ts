/**
 * The crash site is read once: a resumed run reasons from the sources as they were when the
 * analysis started, so the rules its checkpointed hypotheses name still exist after an edit.
 */
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { crashSiteOf } from "../../src/agents/playbooks/crash-site.js";
import { factsOf } from "../../src/agents/playbooks/facts.js";
import { playbookFor } from "../../src/agents/playbooks/index.js";
import type { TriageResult } from "../../src/analyzers/index.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const PROGRAMS_DIR = fileURLToPath(new URL("../fixtures/programs", import.meta.url));

/** The null-deref triage recorded for the judges' tests, its sources in `dir`. */
function triageIn(dir: string): TriageResult {
  const text = readFileSync(new URL("../fixtures/evidence/null-deref.json", import.meta.url), "utf8");
  return (JSON.parse(text.split("<programs>").join(dir)) as { triage: TriageResult }).triage;
}

describe("the crash site", () => {
  it("keeps the sources as they were read, so an edit since changes no rule", () => {
    const dir = tempDir("dumpdbg-crash-site-");
    const source = path.join(dir, "null-deref.c");
    copyFileSync(path.join(PROGRAMS_DIR, "null-deref.c"), source);
    const triage = triageIn(dir);
    const site = crashSiteOf(triage, 1);
    const rules = () => playbookFor(factsOf(triage, site)).hypotheses.map((h) => h.rule);
    const before = rules();
    expect(before).toContain("null:session->client");

    writeFileSync(source, "int main(void) { return 0; }\n");

    expect(rules()).toEqual(before);
    expect(factsOf(triage, site).line).toMatch(/session->client->fd/);
    expect(JSON.parse(JSON.stringify(site))).toEqual(site);
  });

  it("holds no source it could not read", () => {
    const triage = triageIn(path.join(os.tmpdir(), "dumpdbg-no-such-folder"));
    const site = crashSiteOf(triage, 1);
    expect(site.sources).toEqual({});
    expect(playbookFor(factsOf(triage, site)).hypotheses.map((h) => h.rule)).not.toContain("corrupted-owner");
  });
});

describe("probes in a scanned stack", () => {
  // A stack scan numbers the frames it found on the stack (the crash reporter's and the runtime's
  // frames included); the debugger's unwind numbers them otherwise. Probes go by the debugger's number.
  function scanned(unwound: number | null): TriageResult {
    const triage = triageIn(path.join(os.tmpdir(), "dumpdbg-no-such-folder"));
    const frames = triage.frames.map((frame, i) => ({ ...frame, level: frame.level + 2, found: "scan" as const, unwound: unwound === null ? null : unwound + i }));
    return { ...triage, frames, crash: { ...triage.crash, culprit: { ...triage.crash.culprit, frame: (frames[0]?.level ?? 0) } } };
  }

  it("places a probe in the culprit by the debugger's number for its frame", () => {
    const triage = scanned(1);
    const facts = factsOf(triage, crashSiteOf(triage, 1));
    expect(facts.culprit?.level).toBe(2);
    expect(facts.culpritLevel).toBe(1);
    expect(facts.inCulprit({ kind: "locals" })).toMatchObject({ frame: 1 });
    expect(facts.inCaller({ kind: "locals" })).toMatchObject({ frame: 2 });
  });

  it("keeps the scan's number where the debugger's unwind did not reach the frame", () => {
    const triage = scanned(null);
    const facts = factsOf(triage, crashSiteOf(triage, 1));
    expect(facts.culpritLevel).toBe(2);
    expect(facts.inCulprit({ kind: "locals" })).toMatchObject({ frame: 2 });
  });
});
