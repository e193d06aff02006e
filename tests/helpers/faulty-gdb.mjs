#!/usr/bin/env node
// A gdb for fault-injection tests, given to dumpdbg as --gdb: it runs the real gdb with the same
// arguments, passes every command line through, and at the Nth command does one thing to it:
//
//   FAULTY_GDB_AT=N            the command that sets it off (1-based, counted per dump loaded: from
//                              the -gdb-version a session starts with, as a batch's gdb loads dump
//                              after dump)
//   FAULTY_GDB_ON=TEXT         or the first command that holds TEXT
//   FAULTY_GDB_DO=kill         kill the real gdb with SIGKILL (this wrapper then dies the same way)
//   FAULTY_GDB_DO=hang         stop the real gdb (SIGSTOP): it hangs on this command until killed
//   FAULTY_GDB_DO=fill:PATH    write zeros to PATH until the disk it is on is full, then go on
//   FAULTY_GDB_DO=replace:PATH:OTHER   rename OTHER over PATH (the dump replaced), then go on
//   FAULTY_GDB_DO=cut:PATH:BYTES       truncate PATH in place to BYTES, then go on
//   FAULTY_GDB_DO=delete:PATH          remove PATH, then go on
//   FAULTY_GDB_ONCE=FILE       do it only if FILE does not exist, and create it (a fault that a
//                              restarted gdb does not meet again); without it, every gdb meets it
//   FAULTY_GDB_NEXT_AT=N       with FAULTY_GDB_ONCE: once the fault has happened, every gdb started
//                              after it is killed at its command N (a gdb that cannot be started again)
//   FAULTY_GDB_LOG=FILE        append each command, numbered, to FILE
//   FAULTY_GDB_CORE=TEXT       only while a core-file command holding TEXT is the one loaded does
//                              the fault happen (one dump of a batch)
import { spawn } from "node:child_process";
import { appendFileSync, closeSync, existsSync, openSync, renameSync, truncateSync, unlinkSync, writeFileSync, writeSync } from "node:fs";

const at = Number(process.env.FAULTY_GDB_AT ?? "0");
const on = process.env.FAULTY_GDB_ON;
const action = process.env.FAULTY_GDB_DO ?? "";
const once = process.env.FAULTY_GDB_ONCE;
const log = process.env.FAULTY_GDB_LOG;
const core = process.env.FAULTY_GDB_CORE;
let armed = core === undefined;
const next = once && existsSync(once) ? Number(process.env.FAULTY_GDB_NEXT_AT ?? "0") : 0;

const gdb = spawn(process.env.FAULTY_GDB_REAL ?? "gdb", process.argv.slice(2), { stdio: ["pipe", "inherit", "inherit"] });
gdb.on("exit", (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 0);
});
gdb.stdin.on("error", () => undefined);

let count = 0;
let pending = "";
process.stdin.on("data", (chunk) => {
  pending += chunk.toString("utf8");
  for (let newline = pending.indexOf("\n"); newline >= 0; newline = pending.indexOf("\n")) {
    const line = pending.slice(0, newline + 1);
    pending = pending.slice(newline + 1);
    // A session's first command: a batch's gdb loading its next dump counts from 1 again.
    if (line.includes("-gdb-version")) {
      count = 0;
      armed = core === undefined;
    }
    count++;
    if (log) appendFileSync(log, `${count}: ${line}`);
    if (core !== undefined && line.includes("core-file") && line.includes(core)) armed = true;
    if (count === next) {
      gdb.kill("SIGKILL");
      return;
    }
    if (armed && (count === at || (on !== undefined && line.includes(on))) && !(once && existsSync(once))) {
      if (once) writeFileSync(once, "");
      if (action === "kill") {
        gdb.kill("SIGKILL");
        return;
      }
      if (action === "hang") gdb.kill("SIGSTOP");
      const [verb, path, more] = action.split(":");
      if (verb === "fill") fill(path);
      if (verb === "replace") renameSync(more, path);
      if (verb === "cut") truncateSync(path, Number(more));
      if (verb === "delete") unlinkSync(path);
    }
    gdb.stdin.write(line);
  }
});
process.stdin.on("end", () => gdb.stdin.end());

/** Zeros into the file until the disk refuses one more byte. */
function fill(path) {
  const fd = openSync(path, "a");
  const block = Buffer.alloc(64 * 1024);
  try {
    for (let size = block.length; size >= 1; ) {
      try {
        writeSync(fd, block, 0, size);
      } catch {
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
}
