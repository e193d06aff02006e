/** `dumpdbg doctor`: which debuggers and model providers this machine can use, and their versions. */
import { execa } from "execa";

export interface DoctorOptions {
  gdb?: string;
  json?: boolean;
}

interface Finding {
  name: string;
  ok: boolean;
  detail: string;
}

export async function doctor(options: DoctorOptions): Promise<void> {
  const findings: Finding[] = [
    { name: "node", ok: Number(process.versions.node.split(".")[0]) >= 20, detail: process.version },
    await probe("gdb", options.gdb ?? process.env.DUMPDBG_GDB ?? "gdb", ["--version"]),
    await probe("lldb", process.env.DUMPDBG_LLDB ?? "lldb", ["--version"]),
    await probe("cdb", process.env.DUMPDBG_CDB ?? "cdb", ["-version"]),
    provider("openai", process.env.OPENAI_API_KEY ? `key set${process.env.OPENAI_BASE_URL ? `, base URL ${process.env.OPENAI_BASE_URL}` : ""}` : null),
    provider("anthropic", process.env.ANTHROPIC_API_KEY ? "key set" : null),
    provider("ollama", process.env.OLLAMA_HOST ? `host ${process.env.OLLAMA_HOST}` : null),
    { name: "offline", ok: true, detail: "always available" },
  ];
  if (options.json) {
    process.stdout.write(`${JSON.stringify(findings, null, 2)}\n`);
    return;
  }
  for (const f of findings) process.stdout.write(`${f.ok ? "ok  " : "--  "} ${f.name.padEnd(10)} ${f.detail}\n`);
}

async function probe(name: string, binary: string, args: string[]): Promise<Finding> {
  try {
    const result = await execa(binary, args, { reject: false, timeout: 10_000 });
    const first = `${result.stdout}`.split("\n")[0]?.trim() ?? "";
    if (result.failed && !first) return { name, ok: false, detail: `${binary}: not usable` };
    return { name, ok: true, detail: `${first} (${binary})` };
  } catch {
    return { name, ok: false, detail: `${binary}: not found` };
  }
}

function provider(name: string, detail: string | null): Finding {
  return { name, ok: detail !== null, detail: detail ?? "not configured" };
}
