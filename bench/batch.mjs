#!/usr/bin/env node
// bench/batch: `dumpdbg batch` over many cores of the fixtures (several runs and builds each), with
// --jobs 1 and --jobs 2 and with two `dumpdbg worker`s (one dump at a time each) behind a real
// redis-server, against one `dumpdbg triage` process per dump, in this one invocation.
// Prints dumps per second and the ratios. BENCH_DUMPS sets how many (default 200).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import net from "node:net";
import { existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { freshOut, programs, requireBuild, root } from "./lib.mjs";

requireBuild("dumpdbg.cjs");
const wanted = Number(process.env.BENCH_DUMPS ?? 200);
const out = freshOut("batch");
const bin = join(root, "bin", "dumpdbg.cjs");
const names = ["null-deref", "null-write", "div-zero", "abort-msg", "wild-pointer", "illegal-instruction", "stack-smash", "double-free"];

// Cores: each program built in two ways, each build run a few times (fresh ASLR each run).
const cores = [];
const builds = names.flatMap((name) => [["-O0", "a"], ["-O1", "b"]].map(([flag, tag]) => ({ name, flag, tag })));
const runsPerBuild = Math.ceil(wanted / builds.length);
for (const { name, flag, tag } of builds) {
  const dir = join(out, `${name}-${tag}`);
  mkdirSync(dir, { recursive: true });
  const exe = join(dir, name);
  execFileSync("gcc", ["-g", flag, "-pthread", "-o", exe, join(programs, `${name}.c`)]);
  for (let run = 0; run < runsPerBuild && cores.length < wanted; run++) {
    const core = join(dir, `core.${run}`);
    spawnSync("gdb", ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "run", "-ex", `generate-core-file ${core}`, exe], { stdio: "ignore" });
    // A build that does not crash (the optimiser removed the bug) leaves no core.
    if (existsSync(core)) cores.push(core);
    else break;
  }
}
const folder = join(out, "dumps");
mkdirSync(folder);
cores.forEach((core, i) => symlinkSync(core, join(folder, `${i}.core`)));

/** A batch handed to two workers (one dump at a time each) through a redis-server started here. */
async function overRedis() {
  const port = await new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
  const redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", out], { stdio: ["ignore", "pipe", "ignore"] });
  await waitFor(redis.stdout, /Ready to accept connections/);
  const url = `redis://127.0.0.1:${port}`;
  const workers = [0, 1].map((i) =>
    spawn(process.execPath, [bin, "worker", "--queue", url, "--jobs", "1", "--out", join(out, `w${i}`), "--sessions-dir", join(out, `w${i}s`)], { stdio: ["ignore", "ignore", "pipe"] }),
  );
  try {
    await Promise.all(workers.map((worker) => waitFor(worker.stderr, /waiting for dumps/)));
    return time(["batch", folder, "--queue", url, "--json", "--out", join(out, "rq"), "--sessions-dir", join(out, "sq")]);
  } finally {
    for (const worker of workers) worker.kill("SIGKILL");
    redis.kill();
  }
}

function waitFor(stream, pattern) {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`no ${pattern} in 20 s: ${seen}`)), 20_000);
    stream.on("data", (chunk) => {
      seen += chunk;
      if (pattern.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

function time(args) {
  const started = performance.now();
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`dumpdbg ${args.join(" ")} failed: ${result.stderr}`);
  return { ms: performance.now() - started, stdout: result.stdout };
}

// Each batch its own sessions folder: none may reuse the triage of another.
const one = time(["batch", folder, "--jobs", "1", "--json", "--out", join(out, "r1"), "--sessions-dir", join(out, "s1")]);
const two = time(["batch", folder, "--jobs", "2", "--json", "--out", join(out, "r2"), "--sessions-dir", join(out, "s2")]);
const queued = await overRedis();
let each = 0;
for (const file of readdirSync(folder)) each += time(["triage", join(folder, file), "--json"]).ms;
const groups = JSON.parse(two.stdout).groups.length;
const rate = (ms) => (cores.length / (ms / 1000)).toFixed(1);
console.log(`bench/batch: ${cores.length} cores of ${names.length} programs (2 builds each), ${groups} groups`);
console.log(`  batch --jobs 1                 ${(one.ms / 1000).toFixed(1)} s  ${rate(one.ms)} dumps/s`);
console.log(`  batch --jobs 2                 ${(two.ms / 1000).toFixed(1)} s  ${rate(two.ms)} dumps/s`);
console.log(`  batch --queue, 2 workers       ${(queued.ms / 1000).toFixed(1)} s  ${rate(queued.ms)} dumps/s`);
console.log(`  one dumpdbg triage per dump    ${(each / 1000).toFixed(1)} s  ${rate(each)} dumps/s`);
console.log(`  ratio --jobs 2 / --jobs 1      ${(one.ms / two.ms).toFixed(2)}x faster`);
console.log(`  ratio 2 workers / --jobs 1     ${(one.ms / queued.ms).toFixed(2)}x faster`);
console.log(`  ratio batch --jobs 2 / per-dump ${(each / two.ms).toFixed(2)}x faster`);
const same = JSON.stringify(JSON.parse(queued.stdout).groups.map((g) => g.members)) === JSON.stringify(JSON.parse(two.stdout).groups.map((g) => g.members));
console.log(`  the queue's groups ${same ? "are" : "are NOT"} the local batch's`);
