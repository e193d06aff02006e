import { it } from "vitest";
import { DumpFile, readMinidump, readMinidumpMemory } from "../../src/debuggers/dumpfile/index.js";

it("scratch", async () => {
  const f = DumpFile.open("/tmp/winetry/lldb.dmp");
  const t = Date.now();
  const m = readMinidump(f);
  console.log(Date.now() - t, JSON.stringify({ ...m, memory: m.memory.slice(0, 5), memoryCount: m.memory.length, regions: m.regions.slice(0, 8), threads: m.threads.map(t => ({...t, registers: {rip: t.registers.rip, rsp: t.registers.rsp}})) }, null, 1));
  const th = m.threads[0]!;
  console.log(readMinidumpMemory(f, m, th.stack!.start, 64)?.toString("hex"));
}, 300000);
