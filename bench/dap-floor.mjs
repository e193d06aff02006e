// bench/dap-floor: the least a Node program can take to show a minidump through LLDB's adapter, for
// bench/minidump-ratio.sh. It spawns lldb-vscode first thing (no code of ours loads), then asks what
// `lldb --batch` is asked in that script's floor (load the dump, `bt all`, `register read`,
// `image list`), every request written as soon as it may be, and exits on the last answer. What
// dumpdbg's triage takes beyond this is ours; this itself beyond `lldb --batch` is Node's start
// and the adapter's.
//   node bench/dap-floor.mjs DUMP [EXE]
import { spawn } from "node:child_process";

const adapter = spawn(process.env.LLDB_DAP ?? "lldb-vscode-16", [], { stdio: ["pipe", "pipe", "ignore"] });
const [dump, exe] = process.argv.slice(2);
if (!dump) {
  console.error("usage: node bench/dap-floor.mjs DUMP [EXE]");
  process.exit(2);
}

let seq = 0;
const waiting = new Map();
function request(command, args) {
  const body = JSON.stringify({ seq: ++seq, type: "request", command, ...(args ? { arguments: args } : {}) });
  adapter.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  return new Promise((resolve) => waiting.set(seq, resolve));
}

let buffered = Buffer.alloc(0);
adapter.stdout.on("data", (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  for (;;) {
    const end = buffered.indexOf("\r\n\r\n");
    if (end < 0) return;
    const length = Number(/Content-Length: (\d+)/.exec(buffered.subarray(0, end).toString("latin1"))?.[1]);
    if (buffered.length < end + 4 + length) return;
    const message = JSON.parse(buffered.subarray(end + 4, end + 4 + length).toString("utf8"));
    buffered = buffered.subarray(end + 4 + length);
    if (message.type === "response") waiting.get(message.request_seq)?.(message);
  }
});

const repl = (command) => request("evaluate", { expression: `\`${command}`, context: "repl" });
await request("initialize", { clientID: "floor", adapterID: "lldb", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true });
const attached = await request("attach", { ...(exe ? { program: exe } : {}), coreFile: dump });
if (!attached.success) {
  console.error(`lldb could not load ${dump}: ${attached.message}`);
  process.exit(1);
}
const answers = await Promise.all([request("configurationDone"), repl("bt all"), repl("register read"), repl("image list")]);
process.stdout.write(answers.map((a) => a.body?.result ?? "").join("\n"));
adapter.kill("SIGKILL");
