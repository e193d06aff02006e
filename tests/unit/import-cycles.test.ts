/**
 * No module of src/ may import itself back through others: a cycle makes load order matter (a
 * module sees another's exports before they exist) and hides which layer depends on which.
 * Type-only imports count too: they still tie the two modules' designs together.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** Every .ts file under src/, relative to it, mapped to the files of src/ it imports. */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts")).map((file) => file.split(path.sep).join("/"));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(path.join(SRC, file), "utf8"), true, true);
    const targets = importedFiles
      .map((imported) => imported.fileName)
      .filter((name) => name.startsWith("."))
      .map((name) => path.posix.join(path.posix.dirname(file), name).replace(/\.js$/, ".ts"));
    graph.set(file, targets.filter((target) => known.has(target)));
  }
  return graph;
}

/** The first cycle a depth-first walk meets, as the files around it (the first repeated at the end); null when there is none. */
function findCycle(graph: Map<string, string[]>): string[] | null {
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (file: string): string[] | null => {
    const at = onPath.indexOf(file);
    if (at >= 0) return [...onPath.slice(at), file];
    if (done.has(file)) return null;
    onPath.push(file);
    for (const target of graph.get(file) ?? []) {
      const cycle = visit(target);
      if (cycle) return cycle;
    }
    onPath.pop();
    done.add(file);
    return null;
  };
  for (const file of [...graph.keys()].sort()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return null;
}

describe("imports in src/", () => {
  it("form no cycle", () => {
    const cycle = findCycle(importGraph());
    expect(cycle, cycle ? `import cycle: ${cycle.join(" → ")}` : "").toBeNull();
  });

  it("are read: the walk sees the imports between layers", () => {
    expect(importGraph().get("agents/executor.ts")).toContain("evidence/store.ts");
  });
});
