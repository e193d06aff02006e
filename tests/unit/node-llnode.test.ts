/** llnode's answers read into frames and error objects: lines as llnode 4.0 printed them for a core of node 20. */
import { describe, expect, it } from "vitest";

import { errorObjects, errorTypes, inspectedString } from "../../src/runtimes/node/heap.js";
import { readV8Backtrace } from "../../src/runtimes/node/v8-bt.js";

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
    expect(objects).toEqual([{ address: "0xb9127c5d659", type: "TypeError", messageAddress: "0xb9127c5d639", messageShown: "Cannot read prop..." }]);
    expect(inspectedString(`0xb9127c5d639:<String: "Cannot read properties of undefined (reading 'name')">`)).toBe("Cannot read properties of undefined (reading 'name')");
  });
});
