#!/usr/bin/env node
// bench/answers: what dumpdbg answers on every test fixture's core, kept so that a change meant to
// make it faster (or to touch one reader) can be shown to change no other answer. For the newest
// build of each C/C++/Rust/Go fixture program in the tests' core cache (os.tmpdir()/dumpdbg-fixtures,
// filled by running the tests), or with --compare the baseline's own cores, it runs `triage --json` and `analyze --provider offline --json`,
// drops what differs from run to run (times, session ids, temporary paths) and writes one JSON file.
//   node bench/answers.mjs OUT.json                 write this build's answers
//   node bench/answers.mjs OUT.json --compare A.json  and say every case whose answer differs from A's
// Exit status 1 when --compare found a difference. BENCH_ANSWERS_ONLY=regex limits the programs
// (Node.js cores, whose llnode reading takes tens of seconds each, are left out unless named).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import { basename, join } from "node:path";
import { requireBuild, root } from "./lib.mjs";

requireBuild("dumpdbg.cjs");
const [outFile, flag, baseline] = process.argv.slice(2);
if (!outFile || (flag !== undefined && (flag !== "--compare" || !baseline))) {
  console.error("usage: node bench/answers.mjs OUT.json [--compare BASELINE.json]");
  process.exit(2);
}
const cache = join(os.tmpdir(), "dumpdbg-fixtures");
const only = process.env.BENCH_ANSWERS_ONLY ? new RegExp(process.env.BENCH_ANSWERS_ONLY) : null;

/** The newest cached build of each program: a folder `<program>-<hash>…` holding `core` and the program. */
function fixtures() {
  const newest = new Map();
  for (const name of existsSync(cache) ? readdirSync(cache) : []) {
    const program = /^(.+?)-[0-9a-f]{16}/.exec(name)?.[1];
    if (!program || (only ? !only.test(program) : program.startsWith("node-"))) continue;
    const dir = join(cache, name);
    if (!statSync(dir).isDirectory()) continue;
    const core = join(dir, "core");
    const exe = programIn(dir, program);
    if (!existsSync(core) || !exe) continue;
    const at = statSync(core).mtimeMs;
    if ((newest.get(program)?.at ?? -1) < at) newest.set(program, { program, core, exe, at });
  }
  return [...newest.values()].sort((a, b) => a.program.localeCompare(b.program));
}

/** The program beside the core: the one named as the fixture, else the folder's only other executable (a Go build's `svc`). */
function programIn(dir, program) {
  if (existsSync(join(dir, program))) return join(dir, program);
  const executables = readdirSync(dir).filter((f) => f !== "core" && statSync(join(dir, f)).isFile() && (statSync(join(dir, f)).mode & 0o111) !== 0);
  return executables.length === 1 ? join(dir, executables[0]) : null;
}

const VOLATILE = new Set(["timings", "usage", "startedAt", "finishedAt", "id", "ms", "totalMs", "debuggerMs", "llmMs", "lwp", "pid"]);

/** The answer without what changes from run to run: times, ids, and the run's own temporary folders. */
function stable(value, work) {
  if (Array.isArray(value)) return value.map((v) => stable(v, work));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).filter(([key]) => !VOLATILE.has(key)).map(([key, v]) => [key, stable(v, work)]));
  }
  if (typeof value === "string") return value.replaceAll(work, "<work>").replace(/\b\d+(\.\d+)? ms\b/g, "<ms>").replace(/\d{8}-\d{6}-[\w.-]+-[0-9a-f]{4}/g, "<session>");
  return value;
}

function run(args, work) {
  const result = spawnSync(process.execPath, [join(root, "bin/dumpdbg.cjs"), ...args], { encoding: "utf8", maxBuffer: 64 << 20, timeout: 300_000 });
  if (result.status !== 0) return { exit: result.status, error: stable(result.stderr.trim().split("\n").at(-1) ?? "", work) };
  return stable(JSON.parse(result.stdout), work);
}

const answers = {};
// Compared on the baseline's own cores: the cache gains builds while tests run.
const before = baseline ? JSON.parse(readFileSync(baseline, "utf8")) : null;
const cases = before ? Object.entries(before).map(([program, { core, exe }]) => ({ program, core, exe })).filter((c) => existsSync(c.core) && existsSync(c.exe)) : fixtures();
console.log(`bench/answers: ${cases.length} programs from ${cache}`);
for (const { program, core, exe } of cases) {
  const work = mkdtempSync(join(os.tmpdir(), "dumpdbg-answers-"));
  try {
    answers[program] = {
      core,
      exe,
      triage: run(["triage", core, "--exe", exe, "--json"], work),
      analyze: run(["analyze", core, "--exe", exe, "--issue", "it crashed", "--provider", "offline", "--json", "--out", join(work, "r"), "--sessions-dir", join(work, "s")], work),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(".");
}
process.stdout.write("\n");
writeFileSync(outFile, `${JSON.stringify(answers, null, 1)}\n`);
console.log(`wrote ${outFile}`);

if (before) {
  let differ = 0;
  for (const program of new Set([...Object.keys(before), ...Object.keys(answers)])) {
    for (const command of ["triage", "analyze"]) {
      const [a, b] = [JSON.stringify(before[program]?.[command]), JSON.stringify(answers[program]?.[command])];
      if (a === b) continue;
      differ++;
      console.log(`${program} ${command}: differs from ${basename(baseline)}`);
      const [left, right] = [JSON.parse(a ?? "null"), JSON.parse(b ?? "null")];
      for (const key of new Set([...Object.keys(left ?? {}), ...Object.keys(right ?? {})])) {
        const [x, y] = [JSON.stringify(left?.[key]), JSON.stringify(right?.[key])];
        if (x !== y) console.log(`  ${key}:\n    before ${x?.slice(0, 300)}\n    now    ${y?.slice(0, 300)}`);
      }
    }
  }
  console.log(differ === 0 ? "every answer is the same" : `${differ} answers differ`);
  process.exitCode = differ === 0 ? 0 : 1;
}
