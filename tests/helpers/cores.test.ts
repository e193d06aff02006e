import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { buildCore, buildProgram, culpritLine, fixtureNames } from "./cores.js";

const execFileAsync = promisify(execFile);

const SIGILL = 4;
const SIGABRT = 6;
const SIGBUS = 7;
const SIGFPE = 8;
const SIGSEGV = 11;
/** gdb stops a process with SIGSTOP to attach to it, and its dump of a hung process records that. */
const SIGSTOP = 19;

/** Per fixture: the signal its core records and the function of its culprit frame. */
const EXPECTED: Record<string, { signal: number; culprit: string }> = {
  "null-deref": { signal: SIGSEGV, culprit: "send_to_client" },
  "null-write": { signal: SIGSEGV, culprit: "cache_store" },
  "bad-jump": { signal: SIGSEGV, culprit: "dispatch_command" },
  "wild-pointer": { signal: SIGSEGV, culprit: "buffer_length" },
  "write-rodata": { signal: SIGSEGV, culprit: "normalize_header_name" },
  "stack-overflow": { signal: SIGSEGV, culprit: "parse_array" },
  "stack-smash": { signal: SIGABRT, culprit: "parse_login" },
  "double-free": { signal: SIGABRT, culprit: "connection_destroy" },
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
  "uncaught-exception": { signal: SIGABRT, culprit: "read_field" },
  "pure-virtual": { signal: SIGABRT, culprit: "OutputStream::close" },
  "cpp-null-deref": { signal: SIGSEGV, culprit: "Session::idle_seconds" },
  "rust-panic": { signal: SIGABRT, culprit: "rust_panic::price_of" },
  "rust-null": { signal: SIGSEGV, culprit: "rust_null::nth_value" },
};

async function gdb(exe: string, core: string, commands: string[]): Promise<string> {
  const args = ["-nx", "-batch", "-iex", "set debuginfod enabled off", ...commands.flatMap((c) => ["-ex", c]), exe, core];
  const { stdout, stderr } = await execFileAsync("gdb", args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout + stderr;
}

describe("fixture programs", () => {
  it("have an expectation each", () => {
    expect(fixtureNames()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.concurrent.each(fixtureNames())("%s leaves a core with its signal and culprit", async (name) => {
    const expected = EXPECTED[name];
    if (!expected) throw new Error(`no expectation for ${name}`);
    const built = await buildCore(name);
    const head = await readFile(built.core);
    expect(head.subarray(0, 4).toString("latin1")).toBe("\x7fELF");
    expect(head.readUInt16LE(16)).toBe(4);

    const output = await gdb(built.exe, built.core, ["p $_siginfo.si_signo", "thread apply all bt 40"]);
    console.log(name, built.how, output);
    expect(output).toMatch(new RegExp(`^\\$1 = ${expected.signal}$`, "m"));
    const frame = new RegExp(`\\b${expected.culprit} \\([^\\n]*\\) at [^\\n]*${path.basename(built.source)}:${culpritLine(name)}$`, "m");
    expect(output).toMatch(frame);
  });
});
