/**
 * What Delve's DAP server answered, printed the way Delve's terminal prints the same command
 * (`goroutines`, `stack`, `regs`, `locals`, `x`, `disassemble`), so a command's output reads as
 * Delve's to a user and an agent, and `read.ts` reads it back into the model.
 */

/** One frame of a goroutine's stack, as DAP's `stackTrace` gives it. */
export interface GoFrame {
  level: number;
  pc: string | null;
  function: string | null;
  file: string | null;
  line: number | null;
}

/** One goroutine: its id, the OS thread running it, its status and where it stands. */
export interface Goroutine {
  id: number;
  /** The goroutine Delve selected on loading the core: the one that crashed. */
  current: boolean;
  thread: number | null;
  /** `running`, `waiting: waitReasonChanReceive`, … when the runtime's `allgs` could be read. */
  status: string | null;
  /** The innermost frame outside the runtime (Delve's "User" location); the innermost for a runtime goroutine. */
  user: GoFrame | null;
  /** The innermost frame. */
  top: GoFrame | null;
}

/** `0x49ae29` as Delve pads a pc in a stack: `0x000000000049ae29`. */
function padded(pc: string | null): string {
  if (pc === null) return "0x?";
  return `0x${pc.replace(/^0x/i, "").padStart(16, "0")}`;
}

function location(frame: GoFrame | null): string {
  if (!frame) return "?";
  return `${frame.file ?? "?"}:${frame.line ?? 0} ${frame.function ?? "?"} (${frame.pc ?? "0x?"})`;
}

/** `goroutines`: `* Goroutine 1 - User: /src/main.go:14 main.(*Cache).Put (0x49ae29) (thread 24562) [running]`. */
export function printGoroutines(goroutines: Goroutine[], stacks?: Map<number, GoFrame[]>): string {
  const lines: string[] = [];
  for (const g of goroutines) {
    const thread = g.thread === null ? "" : ` (thread ${g.thread})`;
    const status = g.status === null ? "" : ` [${g.status}]`;
    lines.push(`${g.current ? "*" : " "} Goroutine ${g.id} - User: ${location(g.user)}${thread}${status}`);
    const stack = stacks?.get(g.id);
    if (stack) lines.push(...printStack(stack, false).split("\n").filter(Boolean).map((line) => `\t${line}`));
  }
  lines.push(`[${goroutines.length} goroutines]`);
  return `${lines.join("\n")}\n`;
}

/** `threads`: the OS threads that run a goroutine, at their innermost frame. */
export function printThreads(goroutines: Goroutine[]): string {
  return goroutines
    .filter((g) => g.thread !== null)
    .map((g) => `${g.current ? "*" : " "} Thread ${g.thread} at ${g.top?.pc ?? "0x?"} ${g.top?.file ?? "?"}:${g.top?.line ?? 0} ${g.top?.function ?? "?"} (goroutine ${g.id})\n`)
    .join("");
}

/** `stack`: each frame as `N  0x… in FUNCTION` and `at FILE:LINE`, then `(truncated)` when more follow. */
export function printStack(frames: GoFrame[], truncated: boolean): string {
  const lines = frames.flatMap((frame) => [
    `${String(frame.level).padStart(2)}  ${padded(frame.pc)} in ${frame.function ?? "?"}`,
    `    at ${frame.file ?? "?"}:${frame.line ?? 0}`,
  ]);
  if (truncated) lines.push("(truncated)");
  return `${lines.join("\n")}\n`;
}

/** `regs`: `rip = 0x000000000049ae29`; flags with their names after the value. */
export function printRegisters(registers: { name: string; value: string }[]): string {
  return registers.map((r) => `${r.name.trim().padStart(7)} = ${r.value.replace(/\t/g, " ")}\n`).join("");
}

/** `locals`, `args`: `name = value`, one a line. */
export function printVariables(variables: { name: string; value: string }[]): string {
  return variables.map((v) => `${v.name} = ${v.value}\n`).join("");
}

/** `x -fmt hex -size S`: the address, then up to `8 / size * 2` values a line. */
export function printMemory(start: bigint, size: number, values: bigint[]): string {
  const perLine = Math.max(1, 32 / size / 2);
  const lines: string[] = [];
  for (let i = 0; i < values.length; i += perLine) {
    const address = start + BigInt(i * size);
    const row = values.slice(i, i + perLine).map((v) => `0x${v.toString(16).padStart(size * 2, "0")}`);
    lines.push(`0x${address.toString(16)}:   ${row.join("   ")}`);
  }
  return `${lines.join("\n")}\n`;
}

export interface GoInstruction {
  address: string;
  bytes: string | null;
  text: string;
  file: string | null;
  line: number | null;
  /** The selected frame's pc. */
  current: boolean;
}

/** `disassemble`: `=>` at the frame's pc, then the file and line, the address, the bytes and the instruction in Go's assembler syntax. */
export function printDisassembly(functionName: string | null, instructions: GoInstruction[]): string {
  const lines = functionName ? [`TEXT ${functionName}(SB)`] : [];
  let file: string | null = null;
  let line: number | null = null;
  for (const instruction of instructions) {
    // DAP names the source only where it changes; Delve's terminal repeats it on every line.
    if (instruction.file !== null) file = instruction.file;
    if (instruction.line !== null) line = instruction.line;
    const where = file ? `${file}:${line ?? 0}` : "?";
    lines.push(`${instruction.current ? "=>" : "  "}\t${where}\t${instruction.address}\t${instruction.bytes ?? ""}\t${instruction.text}`);
  }
  return `${lines.join("\n")}\n`;
}
