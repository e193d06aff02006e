/**
 * Compressed cores as users hold them: a real core of a crashing C program compressed with the real
 * zstd, lz4, xz and gzip tools, triaged, analysed and opened by exec through the CLI; recognised by
 * content (a misleading name changes nothing); the user's file and folder never changed; nothing
 * left in the temporary folder after a run, a refused bomb, or Ctrl+C mid-decompression. Breakpad
 * and Windows minidumps compressed with zstd and gzip read as the plain ones; a temporary folder
 * without room (a small tmpfs as TMPDIR) is the machine's fault, exit 6.
 */
import { execFileSync, execSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { breakpadMinidumpFromCore } from "../helpers/breakpad.js";
import { runCli } from "../helpers/cli.js";
import { buildCore, type BuiltCore } from "../helpers/cores.js";
import { tempDirs } from "../helpers/temp-dirs.js";
import { mountingAllowed, mountTmpfs, remountReadOnly, unmount } from "../helpers/tmpfs.js";
import { buildMinidump, missingWindowsTools } from "../helpers/windows.js";

const tempDir = tempDirs();

let built: BuiltCore;
let dir: string;
/** The runs' own temporary folder: what dumpdbg leaves there is seen exactly. */
let tmp: string;
const env = () => ({ TMPDIR: tmp, DUMPDBG_CODE_CACHE: "off" });

/** What a folder holds, with each file's hash and modification time: a change of any shows. */
function snapshot(folder: string): string[] {
  return readdirSync(folder)
    .sort()
    .map((name) => {
      const file = path.join(folder, name);
      const stats = statSync(file);
      return `${name} ${stats.size} ${stats.mtimeMs} ${stats.mode} ${createHash("sha256").update(readFileSync(file)).digest("hex")}`;
    });
}

beforeAll(async () => {
  built = await buildCore("null-deref");
  dir = tempDir("dumpdbg-packed-");
  tmp = tempDir("dumpdbg-packed-tmp-");
  const core = path.join(dir, "core");
  copyFileSync(built.core, core);
  execFileSync("zstd", ["-q", "-k", core, "-o", path.join(dir, "core.zst")]);
  execFileSync("lz4", ["-q", "-k", core, path.join(dir, "core.lz4")]);
  writeFileSync(path.join(dir, "core.xz"), execFileSync("xz", ["-c", core]));
  writeFileSync(path.join(dir, "core.gz"), execFileSync("gzip", ["-c", core]));
  // A name that says nothing: the content decides.
  copyFileSync(path.join(dir, "core.zst"), path.join(dir, "crash-report.bin"));
}, 300_000);

describe("compressed cores", () => {
  for (const name of ["core.zst", "core.lz4", "core.xz", "core.gz", "crash-report.bin"]) {
    it(`triages ${name} as the plain core, naming the file it was decompressed from`, async () => {
      const before = snapshot(dir);
      const result = await runCli(["triage", path.join(dir, name), "--exe", built.exe, "--json"], { env: env() });
      expect(result.stderr).toMatch(new RegExp(`${name.replace(".", "\\.")}: (zstd|lz4|xz|gzip)-compressed, decompressed \\(.* to 440 KiB`));
      expect(result.code).toBe(0);
      const crash = JSON.parse(result.stdout) as { kind: string; culprit: { function: string } };
      expect(crash.kind).toBe("null-dereference");
      expect(crash.culprit.function).toBe("send_to_client");
      expect(snapshot(dir)).toEqual(before);
      expect(readdirSync(tmp)).toEqual([]);
    });
  }

  it("runs exec and an offline analysis on a compressed core; the session names the user's file", async () => {
    const work = tempDir("dumpdbg-packed-run-");
    const exec = await runCli(["exec", path.join(dir, "core.xz"), "--exe", built.exe, "-c", "bt 1"], { env: env(), cwd: work });
    expect(exec.code).toBe(0);
    expect(exec.stdout).toContain("send_to_client");
    const analysis = await runCli(["analyze", path.join(dir, "core.lz4"), "--exe", built.exe, "--provider", "offline", "--json"], { env: env(), cwd: work });
    expect(analysis.code).toBe(0);
    const report = JSON.parse(analysis.stdout) as { session: { dump: string }; crash: { kind: string } };
    expect(report.session.dump).toBe(path.join(dir, "core.lz4"));
    expect(report.crash.kind).toBe("null-dereference");
    const markdown = readFileSync(path.join(work, "reports", `${(report.session as { id?: string }).id}.md`), "utf8");
    expect(markdown).toContain("### The dump as it was found");
    expect(markdown).toMatch(/core\.lz4: lz4-compressed, decompressed \(.* to 440 KiB/);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("reads a compressed core gdb wrote (its section headers after the segments)", async () => {
    const hung = await buildCore("deadlock-3");
    expect(hung.how).toBe("gdb");
    const packed = path.join(tempDir("dumpdbg-gcore-"), "core.zst");
    execSync(`zstd -q -c ${hung.core} > ${packed}`);
    const result = await runCli(["triage", packed, "--exe", hung.exe, "--json"], { env: env() });
    expect(result.stderr).not.toMatch(/bomb/);
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { kind: string }).kind).toBe("deadlock");
  });

  it("refuses a compression bomb in one line, by the limit and by the core's own headers", async () => {
    const bomb = path.join(tempDir("dumpdbg-bomb-"), "core.zst");
    // From a pipe, zstd declares no size: only dumpdbg's bounds stop it.
    execSync(`head -c 64M /dev/zero | zstd -q -c > ${bomb}`);
    const limited = await runCli(["triage", bomb], { env: { ...env(), DUMPDBG_UNPACK_LIMIT: "8M" } });
    expect(limited.code).toBe(3);
    expect(limited.stderr).toMatch(/^dumpdbg: .*core\.zst decompresses to more than the limit of 8\.0 MiB \(DUMPDBG_UNPACK_LIMIT\): a damaged file or a compression bomb; it was not unpacked\n$/);
    // A real core followed by 16 MiB of zeros: more than its program headers describe.
    const padded = path.join(path.dirname(bomb), "padded.zst");
    execSync(`(cat ${built.core}; head -c 16M /dev/zero) | zstd -q -c > ${padded}`);
    const beyond = await runCli(["triage", padded], { env: env() });
    expect(beyond.code).toBe(3);
    expect(beyond.stderr).toMatch(/decompresses to more than the 440 KiB its ELF headers describe/);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("without prlimit (or gzip), reads the output through its own bound: the same verdict, a bomb refused", async () => {
    const noPrlimit = { ...env(), DUMPDBG_PRLIMIT: "/nonexistent/prlimit" };
    const plain = await runCli(["triage", path.join(dir, "core"), "--exe", built.exe, "--json"], { env: env() });
    const zlib = { ...env(), DUMPDBG_GZIP: "/nonexistent/gzip" };
    for (const [name, without] of [["core.zst", noPrlimit], ["core.lz4", noPrlimit], ["core.xz", noPrlimit], ["core.gz", noPrlimit], ["core.gz", zlib]] as const) {
      const result = await runCli(["triage", path.join(dir, name), "--exe", built.exe, "--json"], { env: without });
      expect(result.code, result.stderr).toBe(0);
      expect(verdictOf(result.stdout)).toEqual(verdictOf(plain.stdout));
    }
    const bomb = path.join(tempDir("dumpdbg-piped-bomb-"), "core.zst");
    execSync(`head -c 64M /dev/zero | zstd -q -c > ${bomb}`);
    const limited = await runCli(["triage", bomb], { env: { ...noPrlimit, DUMPDBG_UNPACK_LIMIT: "8M" } });
    expect(limited.code).toBe(3);
    expect(limited.stderr).toMatch(/core\.zst decompresses to more than the limit of 8\.0 MiB \(DUMPDBG_UNPACK_LIMIT\)/);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("says which package to install when a decompressor is missing, and refuses damaged data", async () => {
    const missing = await runCli(["triage", path.join(dir, "core.zst")], { env: { ...env(), DUMPDBG_ZSTD: "/nonexistent/zstd" } });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/core\.zst is zstd-compressed and \/nonexistent\/zstd is not installed: install Debian's zstd package \(apt-get install zstd\)/);
    const cut = path.join(tempDir("dumpdbg-cut-"), "core.gz");
    writeFileSync(cut, readFileSync(path.join(dir, "core.gz")).subarray(0, 4000));
    const damaged = await runCli(["triage", cut], { env: env() });
    expect(damaged.code).toBe(3);
    expect(damaged.stderr.trim().split("\n")).toHaveLength(1);
    expect(damaged.stderr).toMatch(/core\.gz is gzip-compressed but cannot be decompressed/);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("removes the half-written file when interrupted mid-decompression", async () => {
    const slow = path.join(tempDir("dumpdbg-slow-"), "zstd");
    // Less than any core the test builds declares, so the size bound never ends the run before the interrupt does.
    writeFileSync(slow, "#!/bin/sh\nhead -c 65536 /dev/zero\nexec sleep 60\n");
    chmodSync(slow, 0o755);
    let sawFile = false;
    const result = await runCli(["triage", path.join(dir, "core.zst")], {
      env: { ...env(), DUMPDBG_ZSTD: slow },
      onSpawn: (child) => {
        child.once("close", () => clearInterval(poll));
        const poll = setInterval(() => {
          const folders = readdirSync(tmp).filter((n) => n.startsWith("dumpdbg-dump-"));
          const written = folders.flatMap((f) => readdirSync(path.join(tmp, f)));
          if (written.length === 0) return;
          sawFile = true;
          clearInterval(poll);
          child.kill("SIGINT");
        }, 20);
      },
    });
    expect(sawFile, `the run ended (${result.code}) before the plain copy was seen: ${result.stderr}`).toBe(true);
    expect(result.code).toBe(130);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("batch triages compressed cores in a folder with the plain one, one bug", async () => {
    const folder = tempDir("dumpdbg-packed-batch-");
    for (const name of ["core", "core.zst", "core.lz4", "core.xz", "core.gz"]) copyFileSync(path.join(dir, name), path.join(folder, name));
    writeFileSync(path.join(folder, "notes.txt"), "not a dump\n");
    mkdirSync(path.join(folder, "out"));
    const before = snapshot(dir);
    const result = await runCli(["batch", folder, "--jobs", "2", "--json", "--out", path.join(folder, "out"), "--sessions-dir", path.join(folder, "out", "sessions")], { env: env() });
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout) as { groups: { kind: string; count: number }[]; errors?: unknown[] };
    expect(doc.groups).toHaveLength(1);
    expect(doc.groups[0]).toMatchObject({ kind: "null-dereference", count: 5 });
    expect(snapshot(dir)).toEqual(before);
    expect(readdirSync(tmp)).toEqual([]);
  });
});

/** What a triage says of a dump that does not depend on where the file lies. */
function verdictOf(stdout: string): unknown {
  const crash = JSON.parse(stdout) as { kind: string; signal: string; faultAddress: string | null; access: string | null; culprit: { function: string | null; line: number | null }; signature: string; message: string | null };
  return { kind: crash.kind, signal: crash.signal, faultAddress: crash.faultAddress, access: crash.access, culprit: crash.culprit.function, line: crash.culprit.line, signature: crash.signature, message: crash.message };
}

/** The minidump triaged plain, then zstd- and gzip-compressed: the same verdict, from a decompressed copy left nowhere. */
async function sameCompressed(dump: string, args: string[]): Promise<unknown> {
  const folder = path.dirname(dump);
  execFileSync("zstd", ["-q", "-k", dump, "-o", `${dump}.zst`]);
  writeFileSync(`${dump}.gz`, execFileSync("gzip", ["-c", dump]));
  const plain = await runCli(["triage", dump, ...args, "--json"], { env: env() });
  expect(plain.code, plain.stderr).toBe(0);
  const before = snapshot(folder);
  for (const [file, format] of [[`${dump}.zst`, "zstd"], [`${dump}.gz`, "gzip"]] as const) {
    const packed = await runCli(["triage", file, ...args, "--json"], { env: env() });
    expect(packed.code, packed.stderr).toBe(0);
    expect(packed.stderr).toContain(`${path.basename(file)}: ${format}-compressed, decompressed`);
    expect(verdictOf(packed.stdout)).toEqual(verdictOf(plain.stdout));
  }
  expect(snapshot(folder)).toEqual(before);
  expect(readdirSync(tmp)).toEqual([]);
  return verdictOf(plain.stdout);
}

describe("compressed minidumps", () => {
  it("a Breakpad minidump compressed with zstd and gzip is read as the plain one", async () => {
    const dump = path.join(tempDir("dumpdbg-packed-breakpad-"), "crash.dmp");
    await breakpadMinidumpFromCore(built.core, built.exe, dump);
    const verdict = await sameCompressed(dump, ["--exe", built.exe]);
    expect(verdict).toMatchObject({ kind: "null-dereference", culprit: "send_to_client" });
  }, 120_000);

  it.skipIf(missingWindowsTools().length > 0)("a Windows minidump compressed with zstd and gzip is read as the plain one", async () => {
    const windows = await buildMinidump("null-method");
    const dump = path.join(tempDir("dumpdbg-packed-windows-"), "crash.dmp");
    copyFileSync(windows.dump, dump);
    // LLDB finds the program beside the dump, as a user keeps them.
    copyFileSync(windows.exe, path.join(path.dirname(dump), path.basename(windows.exe)));
    const verdict = await sameCompressed(dump, ["--debugger", "lldb"]);
    expect(verdict).toMatchObject({ kind: "null-dereference", culprit: "Connection::queued", faultAddress: "0x20" });
  }, 300_000);
});

describe.skipIf(!mountingAllowed())("a temporary folder without room for the decompressed core", () => {
  /** A tmpfs of `size` as TMPDIR for `run`, unmounted after. */
  async function onTmpfs<T>(size: string, run: (mount: string) => Promise<T>): Promise<T> {
    const mount = mountTmpfs(path.join(tempDir("dumpdbg-packed-tmpfs-"), "tmp"), size);
    try {
      return await run(mount);
    } finally {
      unmount(mount);
    }
  }

  it("a core larger than the free space: exit 6, one line naming the folder, nothing left, the original untouched", async () => {
    await onTmpfs("256k", async (mount) => {
      const before = snapshot(dir);
      const result = await runCli(["triage", path.join(dir, "core.zst"), "--exe", built.exe], { env: { TMPDIR: mount, DUMPDBG_CODE_CACHE: "off" } });
      expect(result.code).toBe(6);
      expect(result.stderr).toMatch(
        new RegExp(`^dumpdbg: cannot write ${mount}: no space left on device for the decompressed dump \\(256 KiB free, 64 MiB of it kept for everything else\\); free some space there or set TMPDIR to a folder with room that this user may write; ${path.join(dir, "core.zst")} was not unpacked\n$`),
      );
      expect(readdirSync(mount)).toEqual([]);
      expect(snapshot(dir)).toEqual(before);
    });
  });

  it("a disk another process fills while the core is decompressed: exit 6, the refusal in one line, nothing of ours left", async () => {
    // The bounds leave the core room on a 70m tmpfs (6 MiB past the reserve); then, before the real
    // zstd writes a byte, a neighbour takes all of it but 8 KiB (outside the file size limit the
    // decompressor runs under, which root may raise).
    await onTmpfs("70m", async (mount) => {
      const zstd = path.join(tempDir("dumpdbg-neighbour-"), "zstd");
      writeFileSync(zstd, `#!/bin/sh\nprlimit --fsize=unlimited -- head -c $(( $(df --output=avail -B1 ${mount} | tail -1) - 8192 )) /dev/zero > ${mount}/neighbour\nexec zstd "$@"\n`);
      chmodSync(zstd, 0o755);
      const before = snapshot(dir);
      const result = await runCli(["triage", path.join(dir, "core.zst"), "--exe", built.exe], { env: { TMPDIR: mount, DUMPDBG_CODE_CACHE: "off", DUMPDBG_ZSTD: zstd } });
      expect(result.code).toBe(6);
      expect(result.stderr).toBe(`dumpdbg: cannot write ${mount}: no space left on device; free some space there or set TMPDIR to a folder with room that this user may write; ${path.join(dir, "core.zst")} was not unpacked\n`);
      expect(readdirSync(mount)).toEqual(["neighbour"]);
      expect(snapshot(dir)).toEqual(before);
    });
  });

  it("a read-only temporary folder: exit 6, read-only file system", async () => {
    await onTmpfs("256k", async (mount) => {
      remountReadOnly(mount);
      const result = await runCli(["triage", path.join(dir, "core.gz"), "--exe", built.exe], { env: { TMPDIR: mount, DUMPDBG_CODE_CACHE: "off" } });
      expect(result.code).toBe(6);
      expect(result.stderr).toBe(`dumpdbg: cannot create ${mount}: read-only file system; use a folder on a writable file system or set TMPDIR to a folder with room that this user may write\n`);
    });
  });

  it("a compression bomb past its declared size on a small disk is still a bomb: exit 3", async () => {
    // Two frames: the first declares the core's size, the second adds 16 MiB the declaration does not cover.
    const bomb = path.join(tempDir("dumpdbg-tight-bomb-"), "core.zst");
    execSync(`(zstd -q -c ${built.core}; head -c 16M /dev/zero | zstd -q -c) > ${bomb}`);
    await onTmpfs("66m", async (mount) => {
      const result = await runCli(["triage", bomb], { env: { TMPDIR: mount, DUMPDBG_CODE_CACHE: "off" } });
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/^dumpdbg: .*core\.zst decompresses to more than the 440 KiB its header declares: a damaged file or a compression bomb; it was not unpacked\n$/);
      expect(readdirSync(mount)).toEqual([]);
    });
  });
});
