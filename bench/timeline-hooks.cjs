// Loaded with `node --require` by bench/timeline.mjs: notes, on the process's own clock (ms since it
// started) and with the CPU time it has used so far, when the debugger is spawned, what is written to it, when it first answers, when its
// answers are read (its stdout, or the MI log file gdb writes once the dump is loaded), each
// progress line, when the command prints its result and when it exits (with the main thread's own CPU time then). Writes them as JSON to $DUMPDBG_TIMELINE at exit.
const cp = require("node:child_process");
const fs = require("node:fs");
const { syncBuiltinESMExports } = require("node:module");

const events = [];
/** Each event with the process's own CPU time so far (all its threads, since it started), in ms. */
const cpu = () => {
  const used = process.cpuUsage();
  return Number(((used.user + used.system) / 1000).toFixed(1));
};
const note = (what, detail = "") => events.push({ ms: Number(performance.now().toFixed(1)), cpu: cpu(), what, detail: String(detail).slice(0, 80).replace(/\n/g, "|") });
note("first line of ours");

/** gdb's result records in what was read: `answer N` for the command of token N. */
function answers(text) {
  for (const match of text.matchAll(/(?:^|\n)(\d+)\^(done|error)/g)) note("answer", match[1]);
}

const spawn = cp.spawn;
cp.spawn = function (command, ...rest) {
  const child = spawn.call(this, command, ...rest);
  note("debugger spawned", command);
  const write = child.stdin.write.bind(child.stdin);
  child.stdin.write = (data, ...more) => {
    note("written", data);
    return write(data, ...more);
  };
  child.stdout.once("data", () => note("debugger's first output"));
  child.stdout.on("data", (data) => {
    note("stdout", data);
    answers(String(data));
  });
  return child;
};
const readSync = fs.readSync;
fs.readSync = function (fd, buffer, ...rest) {
  const read = readSync.call(this, fd, buffer, ...rest);
  if (read > 0 && buffer.length < 1 << 20) {
    const text = buffer.subarray(0, read).toString();
    if (/^\d+\^|^[~&=*]/.test(text)) {
      note("log read", text);
      answers(text);
    }
  }
  return read;
};
syncBuiltinESMExports();
const stdoutWrite = process.stdout.write.bind(process.stdout);
process.stdout.write = (data, ...more) => {
  note("result printed", `${String(data).length} bytes`);
  return stdoutWrite(data, ...more);
};
// The command's progress lines (`[triage] …`, `[tester] …`): where an analysis's steps fall on the same clock.
const stderrWrite = process.stderr.write.bind(process.stderr);
process.stderr.write = (data, ...more) => {
  note("progress", data);
  return stderrWrite(data, ...more);
};
/** The main thread's own time on a CPU so far, in ms (Linux: its schedstat), without V8's and libuv's helper threads; null elsewhere. */
function mainThreadCpu() {
  try {
    return Number((Number(fs.readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1e6).toFixed(1));
  } catch {
    return null;
  }
}
process.on("exit", () => {
  note("exit");
  events[events.length - 1].mainCpu = mainThreadCpu();
  fs.writeFileSync(process.env.DUMPDBG_TIMELINE, JSON.stringify(events));
});
