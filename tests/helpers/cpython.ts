/**
 * Real CPython 3.11 processes for the tests, run on the machine's interpreters: Debian's stripped
 * /usr/bin/python3.11 and a 3.11 build under ~/.pyenv (its libpython shared). A program that
 * crashes in C under three Python frames, dumped by gdb where it faults; a program whose two
 * threads each wait for the lock the other holds, dumped alive by `gcore` once both are stuck. The
 * lines the tests look for are marked in the sources with `# CULPRIT` and `# WAITS …`.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A core of a Python process, the interpreter it ran, and the marked lines of its source by their marks. */
export interface PythonCore {
  core: string;
  python: string;
  /** The program's path, as its code objects name it. */
  program: string;
  /** `{ CULPRIT: 6 }`: each `# CULPRIT` or `# WAITS …` comment's text, with its line. */
  sourceLines: Record<string, number>;
}

/** A deadlocked process's core, with the kernel's id of each worker thread by the function it runs. */
export interface DeadlockCore extends PythonCore {
  lwps: Record<string, number>;
}

/** Reads a record's header from a buffer the caller hands over by address; the address it is given is 8. */
export const RECORD_READER = `"""Reads fixed-size record headers out of buffers handed over by address."""
import ctypes

HEADER_SIZE = 16


def parse_record(address):
    header = ctypes.string_at(address, HEADER_SIZE)  # CULPRIT
    return header.decode("ascii", "replace")


def handle(request):
    return parse_record(request["buffer"])


print(handle({"buffer": 0x8}))
`;

/** A restocker and an order desk taking the warehouse's two locks in opposite orders. */
export const WAREHOUSE = `"""Stock and pending orders, each behind its own lock."""
import threading

inventory = threading.Lock()
orders = threading.Lock()
both_hold_one = threading.Barrier(3)
stock = {"bolts": 10}
pending = []


def restock(amount):
    with inventory:
        both_hold_one.wait()
        with orders:  # WAITS restock
            stock["bolts"] += amount
            pending.clear()


def place_order(amount):
    with orders:
        both_hold_one.wait()
        with inventory:  # WAITS place_order
            stock["bolts"] -= amount
            pending.append(amount)


def start(name, job, amount):
    worker = threading.Thread(target=job, args=(amount,), name=name)
    worker.start()
    return worker


workers = [start("restocker", restock, 5), start("order-desk", place_order, 3)]
both_hold_one.wait()
for worker in workers:
    print(worker.name, worker.native_id, flush=True)
print("ready", flush=True)
for worker in workers:
    worker.join()  # WAITS main
`;

/** The machine's 3.11 interpreters: Debian's, and pyenv's 3.11 build; a missing one is left out. */
export function pythonInterpreters(): { name: string; python: string }[] {
  const found: { name: string; python: string }[] = [];
  if (existsSync("/usr/bin/python3.11")) found.push({ name: "Debian's /usr/bin/python3.11", python: "/usr/bin/python3.11" });
  const versions = path.join(os.homedir(), ".pyenv", "versions");
  const pyenv = existsSync(versions) ? readdirSync(versions).filter((v) => /^3\.11\.\d+$/.test(v)).sort().pop() : undefined;
  const python = pyenv ? path.join(versions, pyenv, "bin", "python3.11") : null;
  if (python && existsSync(python)) found.push({ name: `pyenv's ${pyenv}`, python });
  return found;
}

/** Whether gdb (and with it gcore) is here. */
export function hasGdb(): boolean {
  return ["/usr/bin/gdb", "/usr/local/bin/gdb"].some((file) => existsSync(file));
}

/**
 * How a core is written. `elfHeaders: false` leaves out the first page of each mapped ELF file
 * (coredump_filter bit 4 clear, which gdb's gcore honours as the kernel does): the core then does not
 * say which build of the interpreter ran, and the direct reader, which reads only that build, refuses.
 */
export interface CoreWriting {
  elfHeaders?: boolean;
}

/** The command run under `sh`, with the dump filter its process and children inherit: 0x3, anonymous memory only, where ELF headers are left out. */
function filtered(command: string[], { elfHeaders = true }: CoreWriting): [string, string[]] {
  if (elfHeaders) return [command[0]!, command.slice(1)];
  return ["sh", ["-c", 'echo 0x3 > /proc/self/coredump_filter && exec "$@"', "sh", ...command]];
}

/** RECORD_READER run under gdb, which dumps the process where ctypes reads address 8. */
export async function crashCore(dir: string, python: string, writing: CoreWriting = {}): Promise<PythonCore> {
  const program = path.join(dir, "app.py");
  writeFileSync(program, RECORD_READER);
  const core = path.join(dir, "core");
  const gdb = await run(...filtered(["gdb", "-nx", "-batch", "-ex", "run", "-ex", `generate-core-file ${core}`, "--args", python, program], writing), { cwd: dir, timeout: 60_000, encoding: "utf8" });
  if (!existsSync(core)) throw new Error(`gdb wrote no core of ${program} on ${python}:\n${gdb.stdout}${gdb.stderr}`);
  return { core, python, program, sourceLines: markedLines(RECORD_READER) };
}

/** How long the program may take to print "ready", and gcore to dump it. */
const READY_TIMEOUT_MS = 30_000;
const GCORE_TIMEOUT_MS = 60_000;

/** WAREHOUSE run until both workers hold one lock and wait for the other, dumped by gcore and killed, whatever happens (`sh` execs the program: same pid). */
export async function deadlockCore(dir: string, python: string, writing: CoreWriting = {}): Promise<DeadlockCore> {
  const program = path.join(dir, "warehouse.py");
  writeFileSync(program, WAREHOUSE);
  const child = spawn(...filtered([python, program], writing), { cwd: dir, stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise<void>((resolve) => {
    child.once("close", () => resolve());
    child.once("error", () => resolve());
  });
  try {
    const output = await readyOutput(child);
    const lwps: Record<string, number> = {};
    for (const [, name, id] of output.matchAll(/^(\S+) (\d+)$/gm)) lwps[name === "restocker" ? "restock" : "place_order"] = Number(id);
    // Barrier.wait returned in both workers: give each the moment it takes to block on its second lock.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const prefix = path.join(dir, "warehouse");
    const pid = child.pid!;
    const dumped = await run("gcore", ["-o", prefix, String(pid)], { timeout: GCORE_TIMEOUT_MS, encoding: "utf8" }).then(
      (result) => result.stdout + result.stderr,
      (error: { stdout?: string; stderr?: string; message: string }) => `${error.message}\n${error.stdout ?? ""}${error.stderr ?? ""}`,
    );
    const core = `${prefix}.${pid}`;
    if (!existsSync(core)) throw new Error(`gcore wrote no core of ${program} (pid ${pid}):\n${dumped}`);
    return { core, python, program, sourceLines: markedLines(WAREHOUSE), lwps };
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
}

function readyOutput(child: ReturnType<typeof spawn>): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`the program never printed "ready"; it printed:\n${output}`)), READY_TIMEOUT_MS);
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("ready\n")) {
        clearTimeout(timer);
        resolve(output);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the program exited (${code}) instead of hanging; it printed:\n${output}`));
    });
  });
}

/** The marked lines of a source by their marks: `# WAITS restock` on line 14 is `{ "WAITS restock": 14 }`. */
export function markedLines(source: string): Record<string, number> {
  const lines: Record<string, number> = {};
  source.split("\n").forEach((line, index) => {
    const mark = /# ((?:CULPRIT|WAITS)\b.*)$/.exec(line);
    if (mark) lines[mark[1]!] = index + 1;
  });
  return lines;
}

/** What Python itself says of the code objects of a source's functions, by qualified name: their first line, line table, and each code unit's line. */
export interface CodeLines {
  firstLine: number;
  /** `co_linetable`, in hex. */
  table: string;
  /** `co_positions()`'s start line of each code unit, null for none. */
  unitLines: (number | null)[];
  /** `co_lines()`: byte ranges and their lines, merged as Python merges them. */
  lines: [number, number, number | null][];
}

const CODE_LINES = `import json, sys, types

def walk(code, found):
    found[code.co_qualname] = {
        "firstLine": code.co_firstlineno,
        "table": code.co_linetable.hex(),
        "unitLines": [p[0] for p in code.co_positions()],
        "lines": [list(r) for r in code.co_lines()],
    }
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            walk(const, found)
    return found

source = sys.stdin.read()
print(json.dumps(walk(compile(source, "<tested>", "exec"), {})))
`;

/** Compiles `source` with `python` and reads what it says of each code object's lines. */
export async function codeLines(python: string, source: string): Promise<Record<string, CodeLines>> {
  const child = spawn(python, ["-c", CODE_LINES], { stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  let errors = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
  child.stdin.end(source);
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  if (code !== 0) throw new Error(`${python} could not compile the source (${code}):\n${errors}`);
  return JSON.parse(output) as Record<string, CodeLines>;
}

const PAGE = 4096n;

/** A process's memory made by a test: bytes written at addresses, by 4 KiB page; a page never written, or taken away, is unknown. */
export class PagedMemory {
  private readonly pages = new Map<bigint, Buffer>();

  write(address: bigint, bytes: Buffer): void {
    for (let done = 0; done < bytes.length; ) {
      const at = address + BigInt(done);
      const page = at - (at % PAGE);
      let held = this.pages.get(page);
      if (!held) this.pages.set(page, (held = Buffer.alloc(Number(PAGE))));
      const skip = Number(at - page);
      const size = Math.min(bytes.length - done, Number(PAGE) - skip);
      bytes.copy(held, skip, done, done + size);
      done += size;
    }
  }

  /** Forgets the page holding `address`, as a core that left it out. */
  takeAway(address: bigint): void {
    this.pages.delete(address - (address % PAGE));
  }

  read(address: bigint, length: number): Buffer | null {
    const out = Buffer.alloc(length);
    for (let done = 0; done < length; ) {
      const at = address + BigInt(done);
      const page = this.pages.get(at - (at % PAGE));
      if (!page) return null;
      const skip = Number(at % PAGE);
      const size = Math.min(length - done, Number(PAGE) - skip);
      page.copy(out, done, skip, skip + size);
      done += size;
    }
    return out;
  }
}
