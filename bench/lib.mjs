// What the benches share: the project root, a fresh output folder, a crash core made with gdb
// (which works whatever the kernel's core_pattern), and the median of repeated measurements.
import { execFileSync, spawnSync } from "node:child_process";
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

/**
 * What Node spends at start on NODE_EXTRA_CA_CERTS, as a line for a bench to print, or null when it
 * is unset. Node 20 reads and parses that CA bundle before any script runs, in every process
 * (66 ms of a 101 ms `node -e 0` on the machine this was written on), so every ratio of ours
 * against a debugger's own batch mode carries it, and none of our code can avoid it.
 */
export function extraCaCertsNote(runs = 9) {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (!file) return null;
  const { NODE_EXTRA_CA_CERTS: _, ...without } = process.env;
  const start = (env) => {
    const started = process.hrtime.bigint();
    spawnSync(process.execPath, ["-e", ""], { env, stdio: "ignore" });
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  const withCerts = [];
  const bare = [];
  for (let i = 0; i < runs; i++) {
    withCerts.push(start(process.env));
    bare.push(start(without));
  }
  const cost = median(withCerts) - median(bare);
  return `NODE_EXTRA_CA_CERTS=${file} is set: Node parses it at every start, ${cost.toFixed(0)} ms of each of our runs (node -e 0: ${median(withCerts).toFixed(0)} ms with it, ${median(bare).toFixed(0)} ms without)`;
}
