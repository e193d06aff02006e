/** llnode's answers read into frames and error objects: lines as llnode 4.0 printed them for a core of node 20. */
import { describe, expect, it } from "vitest";

import { heapLimit } from "../../src/analyzers/triage/node.js";
import { errorObjects, errorTypes, inspectedSource, inspectedString, lineAndColumn } from "../../src/runtimes/node/heap.js";
import { readThreadList, readV8Backtrace } from "../../src/runtimes/node/v8-bt.js";

const BACKTRACE = ` * thread #1: tid = 16669, 0x0000000002155a72 node\`v8::base::OS::Abort() + 18, name = 'node', stop reason = signal SIGTRAP
  * frame #0: 0x0000000002155a72 node\`v8::base::OS::Abort() + 18
    frame #6: 0x000000000195e476 <exit>
    frame #7: 0x0000000001a0ed0c <stub>
    frame #8: 0x00000000018cfd1c parseUser(this=0x148413481191:<Global proxy>, 0xb9127c5d4e9:<Object: Object>, 0xb9127c5d469:<function: parseUser at /srv/server.js:1:18>) at /srv/server.js:1:18 fn=0x00000b9127c5d469
    frame #10: 0x00000000018cfd1c (this=0xb9127c5b189:<Object: Object>) at /srv/server.js:1:0 fn=0x00000b9127c5cbd9
    frame #18: 0x00000000018cde03 <entry>
    frame #21: 0x000000000262a2aa node
    frame #30: 0x00007ffff7a4524a libc.so.6\`__libc_start_call_main(main=(node\`main), argc=3, argv=0x00007fffffffe7b8) at libc_start_call_main.h:58:16
`;

describe("llnode's v8 bt", () => {
  it("reads native, V8 and JavaScript frames, each with what llnode names of it", () => {
    const frames = readV8Backtrace(BACKTRACE);
    expect(frames.map((frame) => [frame.index, frame.kind, frame.function, frame.file, frame.line, frame.column])).toEqual([
      [0, "native", "v8::base::OS::Abort()", "node", null, null],
      [6, "v8", "exit", null, null, null],
      [7, "v8", "stub", null, null, null],
      [8, "js", "parseUser", "/srv/server.js", 1, 18],
      [10, "js", null, "/srv/server.js", 1, 0],
      [18, "v8", "entry", null, null, null],
      [21, "native", null, "node", null, null],
      [30, "native", "__libc_start_call_main(main=(node`main), argc=3, argv=0x00007fffffffe7b8)", "libc.so.6", null, null],
    ]);
    expect(frames[3]!.args).toMatch(/^this=0x148413481191:<Global proxy>, /);
  });
});

describe("the heap's error objects", () => {
  it("reads the error types, an instance's message address and a whole string", () => {
    expect(errorTypes(" Instances  Total Size Name\n ---------- ---------- ----\n          3        240 Object\n          1         48 TypeError\n")).toEqual([{ type: "TypeError", count: 1 }]);
    const objects = errorObjects(`0xb9127c5d659:<Object: TypeError properties {
    .stack=0x6fb73871c89:<unknown>,
    .message=0xb9127c5d639:<String: "Cannot read prop...">,
    .Symbol()=<Smi: 50>}>
(Showing 1 to 1 of 1 instances)`);
    expect(objects).toEqual([{ address: "0xb9127c5d659", type: "TypeError", messageAddress: "0xb9127c5d639", messageShown: "Cannot read prop...", position: null }]);
    expect(inspectedString(`0xb9127c5d639:<String: "Cannot read properties of undefined (reading 'name')">`)).toBe("Cannot read properties of undefined (reading 'name')");
  });
});

describe("where the error was thrown", () => {
  it("reads the position V8 kept on the error: two Smi symbol properties, then the script", () => {
    const [error] = errorObjects(`0xaa7713dd5e1:<Object: TypeError properties {
    .stack=0x2953f06b1c89:<unknown>,
    .message=0xaa7713dd5c1:<String: "Cannot read prop...">,
    .Symbol()=0xaa7713dd659:<FixedArray, len=9>,
    .Symbol()=<Smi: 50>,
    .Symbol()=<Smi: 51>,
    .Symbol()=0x3a247e362b19:<unknown>}>`);
    expect(error!.position).toEqual({ start: 50, end: 51 });
  });

  it("takes no position from an error that has none, or from Smis not followed by the script", () => {
    const [plain, loose] = errorObjects(`0x1:<Object: Error properties {
    .stack=0x2:<unknown>,
    .message=0x3:<String: "boom">,
    .Symbol()=0x4:<FixedArray, len=9>}>
0x5:<Object: Error properties {
    .message=0x6:<String: "boom">,
    .Symbol()=<Smi: 7>,
    .Symbol()=<Smi: 9>}>`);
    expect(plain!.position).toBeNull();
    expect(loose!.position).toBeNull();
  });

  it("reads a script's text from its top-level function's source and counts lines and columns in it", () => {
    const source = inspectedSource(`0xaa7713dcb61:<function:  at /tmp/server.js:1:0
  context=0x2ad80a9411f9:<Context: {
    (scope_info)=0x211310f846d9:<ScopeInfo>}>
  source:
function function parseUser(request) { return request.user.name; }
function handle(request) { return parseUser(request); }

>`);
    expect(source).toBe("function parseUser(request) { return request.user.name; }\nfunction handle(request) { return parseUser(request); }\n");
    expect(lineAndColumn(source!, 50)).toEqual({ line: 1, column: 51 });
    expect(lineAndColumn(source!, 92)).toEqual({ line: 2, column: 35 });
    expect(lineAndColumn(source!, 10_000)).toBeNull();
    expect(inspectedSource("0x1:<function: f at /tmp/a.js:1:0>")).toBeNull();
  });
});

describe("lldb's threads and builtins named through their module", () => {
  it("maps kernel thread ids to lldb's numbers, and reads a module's builtin as V8's code", () => {
    expect(readThreadList(`Process 15960 stopped
* thread #1: tid = 15960, 0x00007f5df5fc807c, name = 'node', stop reason = signal SIGSTOP
  thread #8: tid = 15980, 0x00007f5dd0009cc4, stop reason = signal SIGSTOP`)).toEqual(new Map([[15960, 1], [15980, 8]]));
    const [builtin] = readV8Backtrace("    frame #3: 0x00000000018cfd1c node`Builtins_InterpreterEntryTrampoline + 220");
    expect(builtin).toMatchObject({ kind: "v8", function: "Builtins_InterpreterEntryTrampoline" });
  });
});

describe("V8's heap limit", () => {
  it("is the --max-old-space-size of the command line, V8's default without one, unknown where the line may be cut", () => {
    expect(heapLimit("/usr/bin/node --max-old-space-size=16 /srv/grows.js")).toEqual({ megabytes: 16, from: "flag" });
    expect(heapLimit("node /srv/server.js")).toEqual({ megabytes: null, from: "default" });
    expect(heapLimit(`node ${"x".repeat(79)}`)).toEqual({ megabytes: null, from: "unknown" });
    expect(heapLimit(null)).toEqual({ megabytes: null, from: "unknown" });
  });
});
