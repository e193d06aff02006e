// What the benches share: the project root, a fresh output folder, a crash core made with gdb
// (which works whatever the kernel's core_pattern), and the median of repeated measurements.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = dirname(dirname(fileURLToPath(import.meta.url)));
export const programs = join(root, "tests", "fixtures", "programs");

/** Exits with a hint when the project has not been built (the benches import `dist/`). */
export function requireBuild(relative) {
  if (!existsSync(join(root, "dist", relative))) {
    console.error("bench: build first (npm run build)");
    process.exit(2);
  }
}

/** `bench/out/<name>`, emptied. */
export function freshOut(name) {
  const out = join(root, "bench", "out", name);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  return out;
}

/** Compiles a C program into `out` and dumps its crash with gdb. */
export function crashCore(out, name, source) {
  const exe = join(out, name);
  const core = join(out, `${name}.core`);
  execFileSync("gcc", ["-g", "-O0", "-pthread", "-o", exe, source]);
  execFileSync("gdb", ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "run", "-ex", `generate-core-file ${core}`, exe], { stdio: "ignore" });
  return { exe, core };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
