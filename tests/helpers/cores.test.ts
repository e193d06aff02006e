import { execFile } from "node:child_process";
import { open, readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { buildCore, buildProgram, culpritLine, fixtureNames } from "./cores.js";

const execFileAsync = promisify(execFile);

const SIGILL = 4;
const SIGTRAP = 5;
const SIGABRT = 6;
const SIGBUS = 7;
const SIGFPE = 8;
const SIGSEGV = 11;
/** gdb stops a process with SIGSTOP to attach to it, and its dump of a hung process records that. */
const SIGSTOP = 19;

/** Per fixture: the signal its core records and the function of its culprit frame. */
const EXPECTED: Record<string, { signal: number; culprit: string }> = {
  "null-deref": { signal: SIGSEGV, culprit: "send_to_client" },
  "null-arg": { signal: SIGSEGV, culprit: "log_line_length" },
  "null-write": { signal: SIGSEGV, culprit: "cache_store" },
  "bad-jump": { signal: SIGSEGV, culprit: "dispatch_command" },
  "dangling-callback": { signal: SIGSEGV, culprit: "publish" },
  "wild-pointer": { signal: SIGSEGV, culprit: "buffer_length" },
  "bit-flip": { signal: SIGSEGV, culprit: "total_traffic" },
  "index-out-of-bounds": { signal: SIGSEGV, culprit: "claim_slot" },
  "write-rodata": { signal: SIGSEGV, culprit: "normalize_header_name" },
  "stack-overflow": { signal: SIGSEGV, culprit: "parse_value" },
  "huge-frame": { signal: SIGSEGV, culprit: "render_scanline" },
  "stack-smash": { signal: SIGABRT, culprit: "parse_login" },
  "double-free": { signal: SIGABRT, culprit: "connection_destroy" },
  "off-by-one-free": { signal: SIGABRT, culprit: "message_free" },
  "heap-corruption": { signal: SIGABRT, culprit: "copy_request_body" },
  assert: { signal: SIGABRT, culprit: "ring_buffer_write" },
  abort: { signal: SIGABRT, culprit: "validate_config" },
  "abort-msg": { signal: SIGABRT, culprit: "release_token" },
  "div-zero": { signal: SIGFPE, culprit: "average_latency" },
  "illegal-instruction": { signal: SIGILL, culprit: "decode_message" },
  "bus-error": { signal: SIGBUS, culprit: "count_lines" },
  fortify: { signal: SIGABRT, culprit: "set_greeting" },
  "thread-crash": { signal: SIGSEGV, culprit: "process_job" },
  "many-threads": { signal: SIGSEGV, culprit: "count_request" },
  deadlock: { signal: SIGSTOP, culprit: "transfer_funds" },
  "deadlock-3": { signal: SIGSTOP, culprit: "hand_over_item" },
  "lost-wakeup": { signal: SIGSTOP, culprit: "pool_shutdown" },
  "debug-break": { signal: SIGTRAP, culprit: "texture_bytes" },
  "uncaught-exception": { signal: SIGABRT, culprit: "read_field" },
  "out-of-range": { signal: SIGABRT, culprit: "score_at_rank" },
  "pure-virtual": { signal: SIGABRT, culprit: "OutputStream::close" },
  "cpp-null-deref": { signal: SIGSEGV, culprit: "Session::idle_seconds" },
  "rust-panic": { signal: SIGABRT, culprit: "rust_panic::price_of" },
  "rust-null": { signal: SIGSEGV, culprit: "rust_null::nth_value" },
  "rust-stack-overflow": { signal: SIGABRT, culprit: "rust_stack_overflow::load" },
};

async function gdb(exe: string, core: string, commands: string[]): Promise<string> {
  const args = ["-nx", "-batch", "-iex", "set debuginfod enabled off", ...commands.flatMap((c) => ["-ex", c]), exe, core];
  const { stdout, stderr } = await execFileAsync("gdb", args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout + stderr;
}

async function elfType(file: string): Promise<string> {
  const handle = await open(file, "r");
  try {
    const head = Buffer.alloc(18);
    await handle.read(head, 0, head.length, 0);
    if (head.subarray(0, 4).toString("latin1") !== "\x7fELF") return "not ELF";
    return ({ 2: "executable", 3: "shared object", 4: "core" } as Record<number, string>)[head.readUInt16LE(16)] ?? "other";
  } finally {
    await handle.close();
  }
}

/** gdb 13 only compares the program's name, so executables and cores are matched by build-id. */
async function coreHoldsBuildId(core: string, exe: string): Promise<boolean> {
  const { stdout } = await execFileAsync("readelf", ["-n", exe]);
  const buildId = /Build ID: ([0-9a-f]+)/.exec(stdout)?.[1];
  if (!buildId) throw new Error(`${exe} has no build-id`);
  // Both the kernel and gdb dump the first page of every mapped ELF file, where the build-id note lives.
  return (await readFile(core)).includes(Buffer.from(buildId, "hex"));
}

describe("fixture programs", () => {
  it("have an expectation each", () => {
    expect(fixtureNames()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.concurrent.each(fixtureNames())("%s leaves a core with its signal and culprit", async (name) => {
    const expected = EXPECTED[name];
    if (!expected) throw new Error(`no expectation for ${name}`);
    const built = await buildCore(name);
    expect(await elfType(built.core)).toBe("core");
    expect(await coreHoldsBuildId(built.core, built.exe)).toBe(true);
    if (expected.signal === SIGSTOP) expect(built.how).toBe("gdb");

    const output = await gdb(built.exe, built.core, ["p $_siginfo.si_signo", "thread apply all bt 40"]);
    expect(output).toMatch(new RegExp(`^\\$1 = ${expected.signal}$`, "m"));
    const culprit = expected.culprit.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const file = path.basename(built.source).replace(".", "\\.");
    expect(output).toMatch(new RegExp(`\\b${culprit} \\(.*\\) at .*/${file}:${culpritLine(name)}$`, "m"));
  });
});

describe("buildCore and buildProgram", () => {
  it("serve the same build again from the cache", async () => {
    const first = await buildCore("null-deref");
    expect(await buildCore("null-deref")).toEqual(first);
    expect(first).toMatchObject({ name: "null-deref", dir: path.dirname(first.exe) });
    expect(path.dirname(first.core)).toBe(first.dir);
  });

  it("make a separate build for a variant, with a build-id of its own", async () => {
    const first = await buildCore("null-deref");
    const second = await buildCore("null-deref", { variant: "second-build" });
    expect(second.dir).not.toBe(first.dir);
    expect(await coreHoldsBuildId(second.core, second.exe)).toBe(true);
    expect(await coreHoldsBuildId(first.core, second.exe)).toBe(false);
  });

  it("compile with the extra flags", async () => {
    const built = await buildCore("div-zero", { flags: ["-g0"] });
    const output = await gdb(built.exe, built.core, ["bt 1"]);
    expect(output).toContain("average_latency");
    expect(output).not.toContain("div-zero.c:");
  });

  it("build a program alone, whose build-id no core holds", async () => {
    const program = await buildProgram("null-deref");
    expect(await elfType(program.exe)).toBe("shared object");
    expect(await coreHoldsBuildId((await buildCore("null-deref")).core, program.exe)).toBe(false);
  });
});
