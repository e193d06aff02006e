// Accuracy on real-world cases: programs written like real code (bench/accuracy/cases, each with its
// expected kind and culprit, the culprit line marked `// CULPRIT`) and real Debian programs crashed,
// killed or hung (bench/accuracy/programs.mjs). Each case is dumped for real, then triaged and
// analysed offline by dumpdbg; the table says per case whether the kind, the culprit and its line
// are right and what the analysis concluded, with totals for the tuned cases and the held-out ones.
//
//   node bench/accuracy.mjs                 # this checkout's dumpdbg
//   DUMPDBG_BIN=/other/bin/dumpdbg.cjs node bench/accuracy.mjs   # another build, on the same cases
import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, extname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { freshOut, root } from "./lib.mjs";
import { PROGRAMS } from "./accuracy/programs.mjs";

const run = promisify(execFile);
const BIN = process.env.DUMPDBG_BIN ?? join(root, "bin", "dumpdbg.cjs");
const CASES = join(root, "bench", "accuracy", "cases");
const out = freshOut("accuracy");
const GDB = ["-nx", "-batch", "-iex", "set debuginfod enabled off"];

/** A case's header: `// set:`, `// expect: KIND CULPRIT`, `// flags:`. */
function describeSource(file) {
  const text = readFileSync(join(CASES, file), "utf8");
  const header = Object.fromEntries([...text.matchAll(/^\/\/ (set|expect|flags): (.*)$/gm)].map((m) => [m[1], m[2].trim()]));
  const [kind, culprit] = (header.expect ?? "").split(/\s+/);
  const line = text.split("\n").findIndex((l) => l.includes("// CULPRIT")) + 1;
  return { name: basename(file, extname(file)), file, set: header.set ?? "tuned", flags: header.flags?.split(/\s+/), expect: { kind, culprit: culprit === "-" ? null : culprit, line: line || null } };
}

function compile(spec) {
  const source = join(CASES, spec.file);
  const exe = join(out, spec.name);
  const ext = extname(spec.file);
  if (ext === ".rs") execFileSync("rustc", [...(spec.flags ?? ["-g", "-C", "opt-level=0", "-C", "panic=abort"]), "-o", exe, source], { stdio: "ignore" });
  else execFileSync(ext === ".cpp" ? "g++" : "gcc", [...(spec.flags ?? ["-g", "-O0", "-fno-stack-protector"]), "-pthread", "-o", exe, source], { stdio: "ignore" });
  return exe;
}

/** Runs argv under gdb to its fatal signal and writes the core there. */
function crashCore(name, argv) {
  const core = join(out, `${name}.core`);
  execFileSync("gdb", [...GDB, "-ex", "run", "-ex", `generate-core-file ${core}`, "--args", ...argv], { stdio: "ignore", timeout: 120_000 });
  return core;
}

/** Starts argv, lets it settle, and dumps it alive. */
async function hangCore(name, argv) {
  const core = join(out, `${name}.core`);
  const child = spawn(argv[0], argv.slice(1), { stdio: "ignore" });
  await sleep(1500);
  try {
    execFileSync("gdb", [...GDB, "-p", String(child.pid), "-ex", `generate-core-file ${core}`], { stdio: "ignore", timeout: 60_000 });
  } finally {
    child.kill("SIGKILL");
  }
  return core;
}

/** Starts argv under gdb and has another process send it `signal`; gdb writes the core at the signal. */
async function killedCore(name, argv, signal) {
  const core = join(out, `${name}.core`);
  const gdb = spawn("gdb", [...GDB, "-ex", "run", "-ex", `generate-core-file ${core}`, "--args", ...argv], { stdio: "ignore" });
  let pid = "";
  for (let waited = 0; pid === "" && waited < 20; waited++) {
    await sleep(500);
    try {
      // gdb runs the program by its resolved path (/bin/sleep is /usr/bin/sleep): match its name.
      pid = execFileSync("pgrep", ["-n", "-f", `(^|/)${[basename(argv[0] ?? ""), ...argv.slice(1)].join(" ")}$`], { encoding: "utf8" }).trim();
    } catch {
      pid = "";
    }
  }
  execFileSync("kill", [`-${signal.replace(/^SIG/, "")}`, pid]);
  await new Promise((resolve) => gdb.on("exit", resolve));
  return core;
}

async function dumpdbg(args) {
  try {
    const { stdout } = await run(process.execPath, [BIN, ...args], { maxBuffer: 64 << 20, timeout: 300_000 });
    return JSON.parse(stdout);
  } catch (error) {
    return { error: String(error.stderr ?? error.message).trim().split("\n")[0] };
  }
}

function matches(expected, actual) {
  if (expected === null || expected === undefined) return null;
  if (expected instanceof RegExp) return actual !== null && actual !== undefined && expected.test(String(actual));
  return actual === expected;
}

async function judge(name, set, core, exe, expect) {
  const withExe = exe ? ["--exe", exe] : [];
  const crash = await dumpdbg(["triage", core, ...withExe, "--json"]);
  const report = await dumpdbg(["analyze", core, ...withExe, "--provider", "offline", "--json", "--out", join(out, "reports"), "--sessions-dir", join(out, "sessions")]);
  const culprit = crash.culprit?.function ?? (crash.culprit?.module ? basename(crash.culprit.module) : null);
  const confirmed = (report.hypotheses ?? []).filter((h) => h.status === "confirmed").length;
  return {
    name,
    set,
    kind: crash.error ? false : crash.kind === expect.kind,
    culprit: matches(expect.culprit, culprit),
    line: expect.line ? crash.culprit?.line === expect.line : null,
    message: expect.message ? matches(expect.message, crash.message) : null,
    analysis: report.error ? "error" : `${report.crash?.kind === expect.kind ? "" : "kind differs, "}${confirmed} confirmed, ${Math.round((report.conclusion?.confidence ?? 0) * 100)}%`,
    got: crash.error ?? `${crash.kind} in ${culprit ?? "?"}${crash.culprit?.line ? `:${crash.culprit.line}` : ""}`,
  };
}

const rows = [];
for (const file of readdirSync(CASES).sort()) {
  const spec = describeSource(file);
  try {
    const exe = compile(spec);
    rows.push(await judge(spec.name, spec.set, crashCore(spec.name, [exe]), exe, spec.expect));
  } catch (error) {
    rows.push({ name: spec.name, set: spec.set, kind: false, culprit: false, line: false, message: null, analysis: "-", got: `could not be dumped: ${String(error.message).split("\n")[0]}` });
  }
}
for (const program of PROGRAMS) {
  if (!existsSync(program.argv[0])) continue;
  try {
    const core =
      program.how === "hang" ? await hangCore(program.name, program.argv) : program.how === "killed" ? await killedCore(program.name, program.argv, program.signal) : crashCore(program.name, program.argv);
    rows.push(await judge(program.name, program.set, core, null, program.expect));
  } catch (error) {
    rows.push({ name: program.name, set: program.set, kind: false, culprit: false, line: false, message: null, analysis: "-", got: `could not be dumped: ${String(error.message).split("\n")[0]}` });
  }
}

const mark = (value) => (value === null ? "·" : value ? "✓" : "✗");
console.log(`dumpdbg: ${BIN}\n`);
console.log("| case | set | kind | culprit | line | message | analysis | triage said |");
console.log("|---|---|---|---|---|---|---|---|");
for (const row of rows) console.log(`| ${row.name} | ${row.set} | ${mark(row.kind)} | ${mark(row.culprit)} | ${mark(row.line)} | ${mark(row.message)} | ${row.analysis} | ${row.got} |`);
console.log("");
for (const set of ["tuned", "held-out"]) {
  const of = rows.filter((row) => row.set === set);
  const score = (key) => {
    const judged = of.filter((row) => row[key] !== null);
    return `${judged.filter((row) => row[key]).length}/${judged.length}`;
  };
  console.log(`${set}: ${of.length} cases · kind ${score("kind")} · culprit ${score("culprit")} · line ${score("line")} · message ${score("message")}`);
}
