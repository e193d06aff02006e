/**
 * The registers of a core's crashing thread, as the kernel wrote them (NT_PRSTATUS of the first
 * thread, the one that received the signal): what Delve's terminal shows for `regs` in a core, and
 * what its DAP server cannot give when that thread ran no goroutine (Go's scheduler threw on the
 * thread's own stack, as it does for "all goroutines are asleep").
 */
import { DumpFile, readElfCore } from "../dumpfile/index.js";

export function crashingThreadRegisters(core: string): { name: string; value: string }[] {
  let file: DumpFile | null = null;
  try {
    file = DumpFile.open(core);
    const thread = readElfCore(file).threads[0];
    return thread ? Object.entries(thread.registers).map(([name, value]) => ({ name, value })) : [];
  } catch {
    // A core dumpdbg cannot read is Delve's to read: its registers are then not given.
    return [];
  } finally {
    file?.close();
  }
}
