#!/usr/bin/env node
// bench/compressed: what a compressed core costs beyond its plain twin. A 200-thread server's core
// (tests/fixtures/programs/many-threads.c, about 50 MiB) is compressed with zstd, lz4, xz and gzip;
// for each format, interleaved, BENCH_RUNS times each (default 5):
//   - the floor: the format's own tool decompressing to a file, then `dumpdbg triage` of that file;
//   - `dumpdbg triage CORE.EXT`, which decompresses into its private folder and reads the plain copy.
// Prints the medians and the ratio of each to its floor. Needs gdb, gcc, zstd, lz4, xz and gzip.
import { spawnSync } from "node:child_process";
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { crashCore, freshOut, median, programs, requireBuild, root } from "./lib.mjs";

requireBuild("dumpdbg.cjs");
const runs = Math.max(3, Number(process.env.BENCH_RUNS ?? 5));
const out = freshOut("compressed");
const BIN = join(root, "bin", "dumpdbg.cjs");
const { exe, core } = crashCore(out, "many-threads", join(programs, "many-threads.c"));

const TOOL = { zst: "zstd", lz4: "lz4", xz: "xz", gz: "gzip" };
const FORMATS = [
  ["zst", (file) => ["zstd", "-q", "-f", "-T0", "-3", file, "-o", `${file}.zst`], (file, to) => ["zstd", "-q", "-f", "-d", file, "-o", to]],
  ["lz4", (file) => ["lz4", "-q", "-f", file, `${file}.lz4`], (file, to) => ["lz4", "-q", "-f", "-d", file, to]],
  ["xz", (file) => ["xz", "-k", "-f", "-T0", "-1", file], (file, to) => ["sh", "-c", `xz -d -c -T0 '${file}' > '${to}'`]],
  ["gz", (file) => ["gzip", "-k", "-f", "-1", file], (file, to) => ["sh", "-c", `gzip -d -c '${file}' > '${to}'`]],
];

function run([file, ...args]) {
  const started = performance.now();
  const result = spawnSync(file, args, { stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 });
  if (result.status !== 0) throw new Error(`${file} ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return { ms: performance.now() - started, stdout: result.stdout.toString() };
}

const triage = (dump) => run([process.execPath, BIN, "triage", dump, "--exe", exe, "--json"]);
const verdict = (stdout) => {
  const crash = JSON.parse(stdout);
  return `${crash.kind} in ${crash.culprit?.function ?? "?"}`;
};

console.log(`bench/compressed: the core is ${(statSync(core).size / 2 ** 20).toFixed(0)} MiB; medians of ${runs} runs, sides alternating`);
const plain = verdict(triage(core).stdout);
for (const [ext, compress, decompress] of FORMATS) {
  const packed = `${core}.${ext}`;
  run(compress(core));
  const floors = [];
  const ours = [];
  let read = "";
  for (let i = 0; i < runs; i++) {
    const sides = [
      () => {
        const to = join(out, `plain.${ext}.core`);
        const unpacked = run(decompress(packed, to));
        const triaged = triage(to);
        rmSync(to);
        floors.push(unpacked.ms + triaged.ms);
      },
      () => {
        const triaged = triage(packed);
        ours.push(triaged.ms);
        read = verdict(triaged.stdout);
      },
    ];
    if (i % 2) sides.reverse();
    for (const side of sides) side();
  }
  if (read !== plain) throw new Error(`the .${ext} core read as ${read}, its plain twin as ${plain}`);
  const [o, f] = [median(ours), median(floors)];
  console.log(`.${ext} (${(statSync(packed).size / 2 ** 20).toFixed(1)} MiB): triage ${o.toFixed(0)} ms, ${TOOL[ext]} -d + plain triage ${f.toFixed(0)} ms, ratio ${(o / f).toFixed(2)}`);
}
