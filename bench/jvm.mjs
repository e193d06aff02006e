#!/usr/bin/env node
// bench/jvm: what reading a JVM's core costs. A Java program whose Unsafe read of 0 + 8 faults under
// the VM's signal handler is run once on the machine's JDK and its core taken at the handler's abort;
// then, interleaved, BENCH_RUNS times each:
//   - `jhsdb jstack --core CORE --exe JAVA` alone: the JDK's own reading of the Java threads;
//   - the floor a person types to see what triage shows: that jhsdb jstack, then gdb -batch over the
//     same core (all threads' stacks, registers, the signal, the mappings, the instructions at the pc);
//   - `dumpdbg triage CORE --exe JAVA --json`.
// Prints the medians and the ratios of triage to each. Needs java, javac, jhsdb and gdb.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freshOut, median, requireBuild, root } from "./lib.mjs";

const runs = Number(process.env.BENCH_RUNS ?? 5);
requireBuild("dumpdbg.cjs");
for (const tool of ["java", "javac", "jhsdb", "gdb"]) {
  if (spawnSync(tool, ["-version"], { stdio: "ignore" }).error) {
    console.log(`bench/jvm: ${tool} is not installed (Debian: openjdk-17-jdk-headless, gdb)`);
    process.exit(2);
  }
}
const out = freshOut("jvm");
const BIN = join(root, "bin", "dumpdbg.cjs");

const SOURCE = `import java.lang.reflect.Field;
import sun.misc.Unsafe;

public class HeaderReader {
    static Unsafe unsafe() throws Exception {
        Field field = Unsafe.class.getDeclaredField("theUnsafe");
        field.setAccessible(true);
        return (Unsafe) field.get(null);
    }
    static long readHeader(Unsafe unsafe, long record) { return unsafe.getLong(record + 8); }
    static long handle(Unsafe unsafe, long record) { return readHeader(unsafe, record); }
    public static void main(String[] args) throws Exception { System.out.println(handle(unsafe(), 0L)); }
}
`;
writeFileSync(join(out, "HeaderReader.java"), SOURCE);
execFileSync("javac", ["-nowarn", "-d", out, join(out, "HeaderReader.java")], { stdio: "ignore" });
const java = execFileSync("readlink", ["-f", execFileSync("which", ["java"], { encoding: "utf8" }).trim()], { encoding: "utf8" }).trim();
const core = join(out, "jvm.core");
const vm = ["-Xmx32m", "-Xss512k", "-XX:ReservedCodeCacheSize=16m", "-XX:CompressedClassSpaceSize=16m", "-XX:+UseSerialGC", "-XX:-UsePerfData", `-XX:ErrorFile=${join(out, "logs", "hs_err_pid%p.log")}`];
const gdbRun = ["gdb", "-nx", "-batch", "-iex", "set debuginfod enabled off", "-ex", "handle SIGSEGV nostop noprint pass", "-ex", "run", "-ex", `generate-core-file ${core}`, "--args", java, ...vm, "-cp", out, "HeaderReader"];
execFileSync("sh", ["-c", `echo 0x33 > /proc/self/coredump_filter; exec ${gdbRun.map((a) => `'${a}'`).join(" ")}`], { stdio: "ignore", cwd: out, env: { ...process.env, MALLOC_ARENA_MAX: "1" } });
if (!existsSync(core)) throw new Error("no core was written");

function ms(command, args) {
  const started = performance.now();
  const result = spawnSync(command, args, { stdio: ["ignore", "ignore", "ignore"], cwd: out });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}`);
  return performance.now() - started;
}

const jstack = () => ms("jhsdb", ["jstack", "--core", core, "--exe", java]);
const gdbFloor = () =>
  ms("gdb", ["-nx", "-q", "-batch", "-iex", "set debuginfod enabled off", "-ex", "thread apply all bt", "-ex", "info registers", "-ex", "p $_siginfo", "-ex", "info proc mappings", "-ex", "x/8i $pc", java, core]);
const triage = () => ms(process.execPath, [BIN, "triage", core, "--exe", java, "--json"]);

// One warm-up of each: the page cache holds the core and the JDK after it.
jstack();
gdbFloor();
triage();
const times = { jstack: [], floor: [], triage: [] };
for (let run = 0; run < runs; run++) {
  const alone = jstack();
  times.jstack.push(alone);
  times.floor.push(alone + gdbFloor());
  times.triage.push(triage());
}
const [j, f, t] = [median(times.jstack), median(times.floor), median(times.triage)];
console.log(`JVM core (Unsafe read near NULL, caught by the VM's handler), medians of ${runs} interleaved runs:`);
console.log(`  jhsdb jstack alone                 ${j.toFixed(0)} ms`);
console.log(`  jhsdb jstack + gdb -batch floor    ${f.toFixed(0)} ms`);
console.log(`  dumpdbg triage --json              ${t.toFixed(0)} ms`);
console.log(`  ratio triage / jhsdb jstack        ${(t / j).toFixed(2)}`);
console.log(`  ratio triage / jstack + gdb floor  ${(t / f).toFixed(2)}`);
