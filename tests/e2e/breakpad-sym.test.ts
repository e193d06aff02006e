/**
 * Breakpad symbol files written from DWARF by tests/helpers/breakpad-sym.ts, checked against
 * binutils and read by real lldb: fixture programs built with real gcc/g++ -g, real cores of
 * their crashes, copies stripped with real `strip -s` (their build id stays), and lldb-16
 * naming the stripped program's frames with file:line only once `target symbols add` has the
 * .sym.
 *
 * lldb-16 does not hold a .sym to its module id: `target symbols add` attaches a .sym whose id
 * matches no module to the executable all the same. So the id is checked here against
 * `readelf -n` (and the id's computation in tests/unit/breakpad-sym.test.ts), not through lldb.
 */
import { execFile, spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { breakpadModuleId, readLineRows, writeBreakpadSymbols } from "../helpers/breakpad-sym.js";

const exec = promisify(execFile);
const PROGRAMS = fileURLToPath(new URL("../fixtures/programs/", import.meta.url));
const dirs: string[] = [];

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "dumpdbg-breakpad-sym-"));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** The 1-based line of a fixture's `// CULPRIT` marker. */
async function culpritLine(source: string): Promise<number> {
  const index = (await readFile(source, "utf8")).split("\n").findIndex((l) => l.includes("// CULPRIT"));
  if (index < 0) throw new Error(`${source} has no // CULPRIT line`);
  return index + 1;
}

async function buildId(elf: string): Promise<string> {
  const { stdout } = await exec("readelf", ["-n", elf]);
  const m = /Build ID: ([0-9a-f]+)/.exec(stdout);
  if (!m?.[1]) throw new Error(`readelf -n shows no build id for ${elf}`);
  return m[1];
}

/**
 * Runs a crashing program in its folder with core dumps on: the kernel writes `core` (or
 * core.PID) there on this machine. Where it does not (a core_pattern that pipes to a
 * collector), gdb runs it and writes the core.
 */
async function crashCore(exe: string, dir: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn("sh", ["-c", 'ulimit -c unlimited && exec "$0"', exe], { cwd: dir, stdio: "ignore" });
    child.on("error", reject);
    child.on("close", () => resolve());
  });
  const kernel = (await readdir(dir)).find((f) => /^core(\.\d+)?$/.test(f));
  if (kernel) return path.join(dir, kernel);
  await exec("gdb", ["-batch", "-ex", "run", "-ex", "generate-core-file core", exe], { cwd: dir, timeout: 60_000 });
  return path.join(dir, "core");
}

/** lldb-16's `bt` of a core, after `target symbols add SYM` when a .sym is given (stdout and stderr). */
async function lldbBacktrace(core: string, exe: string, sym?: string): Promise<string> {
  const args = ["--batch", "-c", core, exe];
  if (sym) args.push("-o", `target symbols add "${sym}"`);
  args.push("-o", "bt");
  const { stdout, stderr } = await exec("lldb-16", args, { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
  return `${stdout}${stderr}`;
}

function frame0(bt: string): string {
  return bt.split("\n").find((l) => /^\s*\* frame #0:/.test(l)) ?? "";
}

interface Sym {
  module: string[];
  info: string[];
  files: Map<number, string>;
  funcs: Array<{ address: bigint; size: bigint; name: string; lines: Array<{ address: bigint; size: bigint; line: number; file: number }> }>;
  publics: Array<{ address: bigint; name: string }>;
}

/** Reads a .sym back, checking each line is one of the records this writer makes. */
function parseSym(text: string): Sym {
  const sym: Sym = { module: [], info: [], files: new Map(), funcs: [], publics: [] };
  const lines = text.split("\n");
  expect(lines.pop()).toBe(""); // ends with a newline
  for (const line of lines) {
    let m: RegExpExecArray | null;
    if ((m = /^MODULE (\S+) (\S+) ([0-9A-F]{33}) (.+)$/.exec(line))) sym.module = m.slice(1);
    else if ((m = /^INFO CODE_ID ([0-9A-F]+)$/.exec(line))) sym.info = m.slice(1);
    else if ((m = /^FILE (\d+) (.+)$/.exec(line))) sym.files.set(Number(m[1]), m[2]!);
    else if ((m = /^FUNC ([0-9a-f]+) ([0-9a-f]+) 0 (.+)$/.exec(line)))
      sym.funcs.push({ address: BigInt(`0x${m[1]}`), size: BigInt(`0x${m[2]}`), name: m[3]!, lines: [] });
    else if ((m = /^([0-9a-f]+) ([0-9a-f]+) (\d+) (\d+)$/.exec(line))) {
      const func = sym.funcs.at(-1);
      expect(func, `a line record before any FUNC: ${line}`).toBeDefined();
      func?.lines.push({ address: BigInt(`0x${m[1]}`), size: BigInt(`0x${m[2]}`), line: Number(m[3]), file: Number(m[4]) });
    } else if ((m = /^PUBLIC ([0-9a-f]+) 0 (.+)$/.exec(line))) sym.publics.push({ address: BigInt(`0x${m[1]}`), name: m[2]! });
    else throw new Error(`not a .sym record: ${JSON.stringify(line)}`);
  }
  return sym;
}

/** `nm --defined-only -S`: the sizes of the symbols in code (T, t, W, w) that have one, by address. */
async function nmSizes(elf: string): Promise<Map<bigint, bigint>> {
  const { stdout } = await exec("nm", ["--defined-only", "-S", elf], { maxBuffer: 64 * 1024 * 1024 });
  const sizes = new Map<bigint, bigint>();
  for (const line of stdout.split("\n")) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) [TtWw] /.exec(line);
    if (m?.[1] && m[2] && m[1].length === m[2].length) sizes.set(BigInt(`0x${m[1]}`), BigInt(`0x${m[2]}`));
  }
  return sizes;
}

/** The p_vaddr of the first PT_LOAD, from `readelf -lW`. */
async function firstLoad(elf: string): Promise<bigint> {
  const { stdout } = await exec("readelf", ["-lW", elf]);
  const m = /^\s*LOAD\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)/m.exec(stdout);
  if (!m?.[1]) throw new Error(`readelf -lW shows no LOAD segment for ${elf}`);
  return BigInt(m[1]);
}

/** What every .sym must hold together: its ranges inside their FUNC, its FILE numbers defined, its FUNCs apart. */
function expectConsistent(sym: Sym): void {
  let previousEnd = 0n;
  for (const f of sym.funcs) {
    expect(f.address >= previousEnd, `FUNC ${f.name} overlaps the one before`).toBe(true);
    previousEnd = f.address + f.size;
    let at = f.address;
    for (const l of f.lines) {
      expect(l.size > 0n).toBe(true);
      expect(l.address >= at, `line records of ${f.name} out of order or overlapping`).toBe(true);
      expect(l.address + l.size <= f.address + f.size, `a line record outside ${f.name}`).toBe(true);
      expect(sym.files.has(l.file), `FILE ${l.file} is not defined`).toBe(true);
      at = l.address + l.size;
    }
  }
  expect([...sym.files.keys()]).toEqual([...sym.files.keys()].map((_, i) => i));
}

const CRASHES = [
  { fixture: "null-deref.c", compiler: "gcc", culpritFunction: "send_to_client", caller: "broadcast" },
  { fixture: "cpp-null-deref.cpp", compiler: "g++", culpritFunction: "Session::idle_seconds(long) const", caller: "should_expire" },
] as const;

describe.each(CRASHES)("a stripped $fixture's core in lldb-16, with and without its .sym", ({ fixture, compiler, culpritFunction, caller }) => {
  const source = path.join(PROGRAMS, fixture);
  const name = fixture.replace(/\.\w+$/, "");
  let dir = "";
  let exe = "";
  let stripped = "";
  let core = "";
  let culprit = 0;
  let written: { file: string; id: string; name: string };

  beforeAll(async () => {
    dir = await tempDir();
    exe = path.join(dir, name);
    await exec(compiler, ["-g", "-O0", "-o", exe, source]);
    core = await crashCore(exe, dir);
    culprit = await culpritLine(source);
    // the program as it ships: the same build, stripped, in a folder of its own
    await mkdir(path.join(dir, "stripped"));
    stripped = path.join(dir, "stripped", name);
    await copyFile(exe, stripped);
    await exec("strip", ["-s", stripped]);
    written = await writeBreakpadSymbols(exe, path.join(dir, "symbols"));
  });

  it("writes <store>/<name>/<module id>/<name>.sym, the id from the build id that strip keeps", async () => {
    const id = await buildId(exe);
    expect(await buildId(stripped)).toBe(id);
    expect(written.name).toBe(name);
    expect(written.id).toBe(breakpadModuleId(id));
    expect(written.id).toMatch(/^[0-9A-F]{32}0$/);
    expect(written.file).toBe(path.join(dir, "symbols", name, written.id, `${name}.sym`));

    const sym = parseSym(await readFile(written.file, "utf8"));
    expect(sym.module).toEqual(["Linux", "x86_64", written.id, name]);
    expect(sym.info).toEqual([id.toUpperCase()]);
    expect([...sym.files.values()]).toContain(source);
    expect(sym.funcs.map((f) => f.name)).toEqual(expect.arrayContaining([culpritFunction, caller, "main"]));
    expect(sym.publics.map((p) => p.name)).toContain("_start");
    expectConsistent(sym);
    // the culprit line is in the culprit function's line records
    const func = sym.funcs.find((f) => f.name === culpritFunction);
    const sourceFile = [...sym.files].find(([, p]) => p === source)?.[0];
    expect(func?.lines.some((l) => l.line === culprit && l.file === sourceFile)).toBe(true);
  });

  it("the stripped program has no symbols of its own", async () => {
    const { stdout, stderr } = await exec("nm", [stripped]);
    expect(`${stdout}${stderr}`).toMatch(/no symbols/);
  });

  it("lldb names the crashing frame with file:line only with the .sym", async () => {
    const where = `${path.basename(source)}:${culprit}`;

    const without = await lldbBacktrace(core, stripped);
    expect(without).toMatch(/stop reason = signal SIGSEGV/);
    expect(frame0(without)).not.toBe("");
    expect(without).not.toContain(culpritFunction);
    expect(without).not.toContain(where);
    expect(frame0(without)).toMatch(/___lldb_unnamed_symbol/);

    const withSym = await lldbBacktrace(core, stripped, written.file);
    expect(withSym).toContain(`symbol file '${written.file}' has been added to '${stripped}'`);
    expect(frame0(withSym)).toContain(`${name}\`${culpritFunction} at ${where}`);
    expect(withSym).toMatch(new RegExp(`frame #1: .*\`${caller} at ${path.basename(source).replace(".", "\\.")}:\\d+`));
    expect(withSym).not.toMatch(new RegExp(`frame #[012]: .*___lldb_unnamed_symbol`));
  });
});

describe("the .sym against binutils", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await tempDir();
  });

  /** Builds a fixture into the temp folder with the given flags and writes its .sym. */
  async function build(fixture: string, out: string, flags: string[]): Promise<{ exe: string; sym: Sym; id: string }> {
    const exe = path.join(dir, out);
    await exec(fixture.endsWith(".cpp") ? "g++" : "gcc", [...flags, "-o", exe, path.join(PROGRAMS, fixture)]);
    const written = await writeBreakpadSymbols(exe, path.join(dir, "symbols"));
    return { exe, sym: parseSym(await readFile(written.file, "utf8")), id: written.id };
  }

  it.each([
    ["null-deref.c", "nd-O0", ["-g", "-O0"]],
    ["cpp-null-deref.cpp", "cpp-O2", ["-g", "-O2"]],
    ["cpp-null-deref.cpp", "cpp-dwarf4", ["-gdwarf-4", "-O1"]],
    ["uncaught-exception.cpp", "exc-O2-gz", ["-g", "-O2", "-gz"]],
  ])("%s (%s): the line rows are objdump's decoded rows, the FUNC sizes nm's", async (fixture, out, flags) => {
    const { exe, sym } = await build(fixture, out, flags);

    const { stdout } = await exec("objdump", ["-w", "--dwarf=decodedline", exe], { maxBuffer: 64 * 1024 * 1024 });
    const objdumpRows = [...stdout.matchAll(/^(\S+)\s+(\d+)\s+(0x[0-9a-f]+)\b/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
    const ours = (await readLineRows(exe)).map((r) => `${path.basename(r.file)} ${r.line} 0x${r.address.toString(16)}`);
    expect(objdumpRows.length).toBeGreaterThan(20);
    expect(ours).toEqual(objdumpRows);

    const sizes = await nmSizes(exe);
    const checked = sym.funcs.filter((f) => sizes.has(f.address));
    expect(checked.length).toBeGreaterThan(3);
    for (const f of checked) expect([f.name, f.size]).toEqual([f.name, sizes.get(f.address)]);
    expectConsistent(sym);
  });

  it("at -O2 a function split into main and main.cold has a FUNC named main for each part", async () => {
    const { exe, sym } = await build("cpp-null-deref.cpp", "split-O2", ["-g", "-O2"]);
    const { stdout } = await exec("nm", ["--defined-only", exe]);
    const cold = /^([0-9a-f]+) t main\.cold$/m.exec(stdout);
    expect(cold, "g++ -O2 put no main.cold in this program").not.toBeNull();
    const mains = sym.funcs.filter((f) => f.name === "main").map((f) => f.address);
    expect(mains).toContain(BigInt(`0x${cold?.[1]}`));
    expect(mains).toHaveLength(2);
    expect(sym.publics.map((p) => p.name)).not.toContain("main.cold");
  });

  it("a non-PIE executable's addresses are relative to its first PT_LOAD", async () => {
    const { exe, sym } = await build("null-deref.c", "nd-nopie", ["-g", "-O0", "-no-pie"]);
    const base = await firstLoad(exe);
    expect(base).toBe(0x400000n);
    const { stdout } = await exec("nm", ["--defined-only", exe]);
    const main = /^([0-9a-f]+) T main$/m.exec(stdout);
    expect(sym.funcs.find((f) => f.name === "main")?.address).toBe(BigInt(`0x${main?.[1]}`) - base);
    const start = /^([0-9a-f]+) T _start$/m.exec(stdout);
    expect(sym.publics.find((p) => p.name === "_start")?.address).toBe(BigInt(`0x${start?.[1]}`) - base);
  });

  it("a shared object: same records, its addresses as they are", async () => {
    const { exe, sym } = await build("null-deref.c", "libnd.so", ["-g", "-O0", "-shared", "-fPIC"]);
    expect(await firstLoad(exe)).toBe(0n);
    expect(sym.module[3]).toBe("libnd.so");
    const { stdout } = await exec("nm", ["--defined-only", exe]);
    const fn = /^([0-9a-f]+) t send_to_client$/m.exec(stdout);
    expect(sym.funcs.find((f) => f.name === "send_to_client")?.address).toBe(BigInt(`0x${fn?.[1]}`));
  });

  it("a build id the linker is told puts the .sym under the id worked out by hand", async () => {
    const { id } = await build("null-deref.c", "fixed-id", ["-g", "-Wl,--build-id=0x000102030405060708090a0b0c0d0e0f10111213"]);
    expect(id).toBe("030201000504070608090A0B0C0D0E0F0");
  });
});
