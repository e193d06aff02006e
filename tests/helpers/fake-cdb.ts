/**
 * Scripts for the cdb stand-in (fake-cdb.mjs): one dump each, answered with the transcripts of
 * cdb-transcripts.ts, and the folder that holds the script, its log and a file for `-z`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MANAGED_CRASH, MANAGED_DEADLOCK, NATIVE } from "./cdb-transcripts.js";
import { tempDirs } from "./temp-dirs.js";

export const FAKE_CDB = fileURLToPath(new URL("./fake-cdb.mjs", import.meta.url));

export interface FakeCdbScript {
  banner?: string;
  eventThread?: number;
  threadIds?: number[];
  ecxr?: string;
  ecxrFrames?: string[];
  exception?: Record<string, string>;
  threads?: Record<string, Record<string, string | string[]>>;
  commands?: Record<string, string>;
  patterns?: [string, string][];
  hang?: string[];
  hangOutput?: string;
  stuck?: boolean;
  die?: string[];
  dieOutput?: string;
  slow?: Record<string, number>;
  exitAtStart?: string;
  log?: string;
}

/** Rows of a `kn` listing, for the stand-in's `.frame`. */
function rowsOf(stack: string): string[] {
  return stack.split("\n").filter((line) => /^[0-9a-f]{2} /.test(line));
}

/** The native crash (config_null.exe, a null `port` read in listen_port) as cdb shows it after loading. */
export function nativeCrashScript(): FakeCdbScript {
  const waiting = (frame: string) => ` # Child-SP          RetAddr               Call Site\n${frame}`;
  return {
    banner: NATIVE.banner,
    eventThread: 0,
    threadIds: [0, 1, 2],
    ecxr: NATIVE.registers,
    ecxrFrames: rowsOf(NATIVE.stack),
    exception: {
      "kn 0x29": NATIVE.stack,
      kn: NATIVE.stack,
      r: NATIVE.registers,
      "r $ip": "$ip=00007ff61a2b1012",
      "u @$scopeip L0x1": NATIVE.instructions.split("\n").slice(0, 2).join("\n"),
      "u @$scopeip L0x4": NATIVE.instructions,
      "uf @$scopeip": NATIVE.function,
      "dv /i /t /v": NATIVE.variables,
      "?? config->count": NATIVE.evaluateInt,
    },
    threads: {
      "0": { frames: ["00 00000000`0014f1a8 00007ffb`11b2a8c5     ntdll!NtGetContextThread+0x14"], "kn 0x29": waiting("00 00000000`0014f1a8 00007ffb`11b2a8c5     ntdll!NtGetContextThread+0x14") },
      "1": { frames: ["00 00000000`0024fa38 00007ffb`134227c7     ntdll!NtWaitForWorkViaWorkerFactory+0x14"], "kn 0x29": waiting("00 00000000`0024fa38 00007ffb`134227c7     ntdll!NtWaitForWorkViaWorkerFactory+0x14") },
      "2": { frames: ["00 00000000`0034f8c8 00007ffb`11b3f0be     ntdll!NtWaitForSingleObject+0x14"], "kn 0x29": waiting("00 00000000`0034f8c8 00007ffb`11b3f0be     ntdll!NtWaitForSingleObject+0x14") },
    },
    commands: {
      "~": NATIVE.threads,
      "~*kn 1": NATIVE.threadsWithFrames,
      "~*kn": NATIVE.threadsWithFrames,
      lm: NATIVE.modules,
      lmf: NATIVE.moduleFiles,
      "!address": NATIVE.regions,
      ".exr -1": NATIVE.exceptionRecord,
      ".lastevent": NATIVE.lastEvent,
      "!analyze -v": NATIVE.analyze,
      "dq 0x14fa10 L0x4": NATIVE.memory,
      "da 0x7ff61a2c3e40": NATIVE.string,
      "ln 0x7ff61a2b1012": NATIVE.symbol,
      'lsf "C:\\src\\service\\config-null.c"': "",
      "ls 0n43, 0n3": NATIVE.source,
      "?? nosuch": NATIVE.evaluateError,
    },
    patterns: [["^\\?\\? ", NATIVE.evaluateError]],
  };
}

/** A .NET process that died of a NullReferenceException; `sos` says whether SOS loads. */
export function managedCrashScript(sos: boolean): FakeCdbScript {
  const failed = "The call to LoadLibrary(sos) failed, Win32 error 0n126\n    \"The specified module could not be found.\"\nPlease check your debugger configuration and/or network access.";
  return {
    banner: "This dump file has an exception of interest stored in it.\n(1a2c.1b3c): CLR exception - code e0434352 (first/second chance not available)",
    eventThread: 0,
    threadIds: [0, 1, 2, 3, 4],
    ecxr: "rax=0000000000000000",
    exception: {
      // JIT-compiled frames have no symbols for cdb: SOS's !clrstack names them.
      "kn 0x29": ` # Child-SP          RetAddr               Call Site
00 00000000\`0014ee30 00007ffa\`1a1c4d2e     KERNELBASE!RaiseException+0x69
01 00000000\`0014ef10 00007ffa\`1a1c3b4f     coreclr!RaiseTheExceptionInternalOnly+0x26b
02 00000000\`0014f020 00007ffa\`1b2c3d4e     coreclr!IL_Throw+0xb7
03 00000000\`0014f2b0 00007ffa\`1b2c3c10     0x00007ffa\`1b2c3d4e
04 00000000\`0014f300 00007ffa\`1a2f1d83     0x00007ffa\`1b2c3c10
05 00000000\`0014f5e8 00007ffb\`12347614     coreclr!CallDescrWorkerInternal+0x83
06 00000000\`0014f620 00007ffb\`134226a1     KERNEL32!BaseThreadInitThunk+0x14
07 00000000\`0014f650 00000000\`00000000     ntdll!RtlUserThreadStart+0x21`,
      "!pe": MANAGED_CRASH.printException,
    },
    commands: {
      lmf: MANAGED_CRASH.moduleFiles,
      "~": MANAGED_CRASH.threadList,
      "~*kn 1": MANAGED_CRASH.threadsWithFrames,
      ".exr -1": MANAGED_CRASH.exceptionRecord,
      lm: MANAGED_CRASH.modules,
      ".loadby sos coreclr": sos ? "" : failed,
      ".load sos": failed,
      "!threads": MANAGED_CRASH.threads,
      "!clrstack -a": MANAGED_CRASH.clrstack,
      "!pe": MANAGED_CRASH.printException,
      "!dumpheap -stat": MANAGED_CRASH.heap,
      "!analyze -v": MANAGED_CRASH.analyze,
      "!syncblk": "Index         SyncBlock MonitorHeld Recursion Owning Thread Info          SyncBlock Owner\n-----------------------------\nTotal           0",
    },
  };
}

/** A hung .NET process: threads 5 and 6 each hold one account's monitor and wait for the other's. */
export function managedDeadlockScript(): FakeCdbScript {
  return {
    eventThread: 0,
    threadIds: [0, 1, 2, 3, 4, 5, 6],
    commands: {
      "~": MANAGED_DEADLOCK.threadList,
      "~*kn 1": MANAGED_DEADLOCK.threadsWithFrames,
      r: MANAGED_DEADLOCK.registers,
      lm: MANAGED_CRASH.modules,
      lmf: MANAGED_CRASH.moduleFiles,
      ".loadby sos coreclr": "",
      "!threads": MANAGED_DEADLOCK.threads,
      "!dumpheap -stat": MANAGED_CRASH.heap,
      "!syncblk": MANAGED_DEADLOCK.syncblk,
      "~*e !clrstack -a": MANAGED_DEADLOCK.clrstacks,
    },
  };
}

export interface FakeDump {
  dir: string;
  /** The file given to `-z` (the stand-in only checks it exists, unless a test uses a real dump). */
  dump: string;
  script: string;
  log: string;
  /** The lines the stand-in read, and `pid N ...` at each start. */
  lines(): string[];
}

/** The folders fakeDump makes for the test file that imports this, removed once its tests are done. */
const tempDir = tempDirs();

/** Writes a script beside a dump: `DUMP.fake-cdb.json`, where the stand-in looks for it. */
export function fakeDump(script: FakeCdbScript, dump?: string): FakeDump {
  const dir = tempDir("dumpdbg-fake-cdb-");
  const file = dump ?? join(dir, "crash.dmp");
  if (!dump) writeFileSync(file, "MDMP");
  const log = join(dir, "cdb.log");
  writeFileSync(log, "");
  const path = `${file}.fake-cdb.json`;
  writeFileSync(path, JSON.stringify({ ...script, log }));
  return { dir, dump: file, script: path, log, lines: () => readFileSync(log, "utf8").split("\n").filter(Boolean) };
}
