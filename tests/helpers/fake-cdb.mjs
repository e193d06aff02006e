#!/usr/bin/env node
/**
 * A stand-in for cdb, for tests on machines without Windows: it speaks cdb's protocol as cdb's
 * documentation and its users' transcripts show it, from a script (JSON) describing one dump.
 *
 * `fake-cdb.mjs -z DUMP -lines -noshell [-y SYMPATH] [-i IMAGEPATH]`, script from $FAKE_CDB_SCRIPT
 * or DUMP.fake-cdb.json. It prints the banner, then a `P:TTT> ` prompt before reading each line of
 * stdin (cdb does not echo what it reads), and answers:
 *   .echo TEXT        TEXT
 *   ~Ns               selects thread N (the prompt says so), prints its `select` text
 *   .frame [/r] [N]   selects frame N of the selected thread, prints its row from `frames`
 *   .ecxr             the exception context: `ecxr` text, and per-thread answers of `exceptionThread` apply
 *   q                 exits
 *   anything else     `threads[N][cmd]` (N selected), else `commands[cmd]`, else the first of
 *                     `patterns` ([regex, text]) that matches, else cdb's syntax error.
 * Faults, by command: `hang` (never answers; a break ends the command, as Ctrl+Break does, unless
 * `stuck`, when breaks are ignored), `die` (prints `dieOutput` and exits with code 3, as a debugger
 * that crashed), `slow` ({cmd: ms} before answering). `exitAtStart` prints the text and exits 1.
 * Every line read and the process id are appended to `log` when the script names one.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const args = process.argv.slice(2);
const option = (name) => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};
const dump = option("-z");
if (args.includes("-version")) {
  process.stdout.write("cdb version 10.0.22621.2428 (stand-in)\n");
  process.exit(0);
}
const scriptPath = process.env.FAKE_CDB_SCRIPT ?? (dump ? `${dump}.fake-cdb.json` : undefined);
if (!dump || !existsSync(dump)) {
  process.stdout.write(`Microsoft (R) Windows Debugger Version 10.0.22621.2428 AMD64\n\nCould not open dump file [${dump}], Win32 error 0n2\n    "The system cannot find the file specified."\n`);
  process.exit(1);
}
const script = JSON.parse(readFileSync(scriptPath, "utf8"));
const log = (text) => script.log && appendFileSync(script.log, `${text}\n`);
log(`pid ${process.pid} ${args.join(" ")}`);

if (script.exitAtStart) {
  process.stdout.write(script.exitAtStart);
  process.exit(1);
}

let thread = script.eventThread ?? 0;
let frame = 0;
let inException = false;
const prompt = () => process.stdout.write(`0:${String(thread).padStart(3, "0")}> `);

process.stdout.write(
  [
    "",
    "Microsoft (R) Windows Debugger Version 10.0.22621.2428 AMD64",
    "Copyright (c) Microsoft Corporation. All rights reserved.",
    "",
    "",
    `Loading Dump File [${dump}]`,
    "User Mini Dump File: Only registers, stack and portions of memory are available",
    "",
    `Symbol search path is: ${option("-y") ?? "srv*"}`,
    `Executable search path is: ${option("-i") ?? ""}`,
    script.banner ?? "",
    "",
  ].join("\n"),
);
prompt();

/** Lines wait here while a command hangs; a break lets them through. */
const pending = [];
let hanging = false;

process.on("SIGINT", () => {
  log("break");
  if (!hanging || script.stuck) return;
  hanging = false;
  process.stdout.write("\n");
  prompt();
  drain();
});

function answer(command) {
  const echo = /^\.echo\s?(.*)$/.exec(command);
  if (echo) return `${echo[1]}\n`;
  const select = /^~(\d+)s$/.exec(command);
  if (select) {
    const number = Number(select[1]);
    if (!(script.threadIds ?? [0]).includes(number)) return `                          ^ Illegal thread error in '${command}'\n`;
    thread = number;
    frame = 0;
    inException = false;
    return script.threads?.[number]?.select ?? "";
  }
  const frameCommand = /^\.frame(?:\s+\/\w+)*(?:\s+(\S+))?$/.exec(command);
  if (frameCommand) {
    if (frameCommand[1] !== undefined) frame = Number.parseInt(frameCommand[1].replace(/^0x/, ""), 16);
    const rows = (inException ? script.ecxrFrames : null) ?? script.threads?.[thread]?.frames ?? [];
    return rows[frame] !== undefined ? `${rows[frame]}\n` : "";
  }
  if (command === ".ecxr") {
    if (script.ecxr === undefined) return "Unable to get exception context, HRESULT 0x8000FFFF\n";
    inException = thread === (script.eventThread ?? 0);
    return script.ecxr;
  }
  const own = inException ? script.exception?.[command] : undefined;
  const text = own ?? script.threads?.[thread]?.[command] ?? script.commands?.[command];
  if (text !== undefined) return text;
  for (const [pattern, reply] of script.patterns ?? []) if (new RegExp(pattern).test(command)) return reply;
  return `                          ^ Syntax error in '${command}'\n`;
}

async function handle(command) {
  log(command);
  if (command === "q") process.exit(0);
  if (script.die?.includes(command)) {
    process.stdout.write(script.dieOutput ?? "");
    process.exit(3);
  }
  if (script.hang?.includes(command)) {
    hanging = true;
    process.stdout.write(script.hangOutput ?? "");
    return;
  }
  const wait = script.slow?.[command];
  if (wait) await new Promise((resolve) => setTimeout(resolve, wait));
  // cdb ends what a command prints with a newline; a script's text need not.
  const text = answer(command);
  process.stdout.write(text === "" || text.endsWith("\n") ? text : `${text}\n`);
  prompt();
}

let draining = false;
async function drain() {
  if (draining) return;
  draining = true;
  while (pending.length > 0 && !hanging) await handle(pending.shift());
  draining = false;
}

const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
  pending.push(line.trim());
  void drain();
});
input.on("close", () => process.exit(0));
