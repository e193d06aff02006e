#!/usr/bin/env node
// bench/node: what reading a Node.js process's core costs with llnode. The program of
// tests/helpers/node.ts run by the machine's node with --abort-on-uncaught-exception (parseUser reads
// a property of undefined, two calls deep), dumped by gdb where V8 aborts. Then, interleaved,
// BENCH_RUNS times each:
//   - `lldb --batch` loading the core with llnode and running `v8 bt`: the JavaScript frames alone;
//   - `dumpdbg triage CORE --json`: the native verdict by gdb while an lldb session of its own,
//     started with it, reads llnode's frames, the heap's error object and where it was thrown.
// Prints the medians and the ratio. Needs gdb, lldb and llnode (see `dumpdbg doctor`).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freshOut, median, requireBuild, root } from "./lib.mjs";

const runs = Number(process.env.BENCH_RUNS ?? 3);
const node = process.env.BENCH_NODE ?? "/usr/bin/node";
requireBuild("dumpdbg.cjs");
const lldb = ["lldb", "lldb-16"].find((name) => !spawnSync(name, ["--version"], { stdio: "ignore" }).error);
const llnode = process.env.DUMPDBG_LLNODE ?? "/usr/lib/node_modules/llnode/llnode.so";
if (!lldb || !existsSync(llnode) || spawnSync("gdb", ["--version"], { stdio: "ignore" }).error) {
  console.log("bench/node: needs gdb, lldb and llnode (see dumpdbg doctor)");
  process.exit(2);
}
const out = freshOut("node");
const BIN = join(root, "bin", "dumpdbg.cjs");

const SERVER = `function parseUser(request) { return request.user.name; }
function handle(request) { return parseUser(request); }
handle({ body: "{}" });
`;

function uncaughtCore() {
  const script = join(out, "server.js");
  writeFileSync(script, SERVER);
  const core = join(out, "server.core");
  execFileSync("gdb", ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "run", "-ex", `generate-core-file ${core}`, "--args", node, "--abort-on-uncaught-exception", script], { cwd: out, stdio: "ignore" });
  if (!existsSync(core)) throw new Error("gdb wrote no core of the uncaught exception");
  return core;
}

function ms(command, args) {
  const started = performance.now();
  const result = spawnSync(command, args, { stdio: ["ignore", "ignore", "ignore"] });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}`);
  return performance.now() - started;
}

const core = uncaughtCore();
const backtrace = () => ms(lldb, ["--batch", "-o", `plugin load ${llnode}`, "-o", "v8 bt", "-c", core, node]);
const triage = () => ms(process.execPath, [BIN, "triage", core, "--json"]);
// One warm-up of each: the page cache holds the core and node after it.
backtrace();
triage();
const times = { bt: [], triage: [] };
for (let run = 0; run < runs; run++) {
  times.bt.push(backtrace());
  times.triage.push(triage());
}
const [b, t] = [median(times.bt), median(times.triage)];
console.log(`bench/node: ${node}, uncaught TypeError core, medians of ${runs} interleaved runs:`);
console.log(`  ${lldb} --batch, llnode's v8 bt     ${b.toFixed(0)} ms`);
console.log(`  dumpdbg triage --json             ${t.toFixed(0)} ms`);
console.log(`  ratio triage / v8 bt              ${(t / b).toFixed(2)}`);
