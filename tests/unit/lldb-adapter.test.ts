/** Finding lldb's DAP server from what `--lldb` names, on made-up installs. */
import { describe, expect, it } from "vitest";
import { DebuggerMissing } from "../../src/debuggers/errors.js";
import { resolveAdapter, type Installed } from "../../src/debuggers/lldb/adapter.js";

/** An install of these executables (by path), symbolic links (path → target) and PATH directories. */
function install(files: string[], links: Record<string, string> = {}, path = ["/usr/local/bin", "/usr/bin"]): Installed {
  const all = new Set([...files, ...Object.keys(links)]);
  return {
    onPath: (name) => path.map((dir) => `${dir}/${name}`).find((file) => all.has(file)) ?? null,
    isExecutable: (file) => all.has(file),
    realpath: (file) => links[file] ?? file,
  };
}

const debian12 = install(
  ["/usr/bin/lldb-vscode-16", "/usr/lib/llvm-16/bin/lldb", "/usr/lib/llvm-16/bin/lldb-vscode"],
  { "/usr/bin/lldb-16": "/usr/lib/llvm-16/bin/lldb" },
);

describe("resolveAdapter", () => {
  it("takes lldb-vscode-16, then lldb-dap, then lldb-vscode by default", () => {
    expect(resolveAdapter(undefined, debian12)).toBe("lldb-vscode-16");
    expect(resolveAdapter(undefined, install(["/usr/bin/lldb-dap", "/usr/bin/lldb-vscode"]))).toBe("lldb-dap");
    expect(resolveAdapter(undefined, install(["/usr/bin/lldb-vscode"]))).toBe("lldb-vscode");
    expect(resolveAdapter(undefined, install([]))).toBe("lldb-vscode");
  });

  it("runs a named adapter, or anything not named like lldb's command line, as given", () => {
    for (const binary of ["lldb-vscode-16", "/opt/llvm/bin/lldb-dap", "/usr/bin/lldb-dap-19", "/home/me/dap-wrapper", "lldb-server-16"]) {
      expect(resolveAdapter(binary, debian12)).toBe(binary);
    }
  });

  it("finds the adapter of the same version beside lldb's command line", () => {
    expect(resolveAdapter("/usr/bin/lldb-16", debian12)).toBe("/usr/bin/lldb-vscode-16");
    expect(resolveAdapter("/usr/lib/llvm-16/bin/lldb", debian12)).toBe("/usr/lib/llvm-16/bin/lldb-vscode");
    expect(resolveAdapter("/opt/llvm/bin/lldb", install(["/opt/llvm/bin/lldb", "/opt/llvm/bin/lldb-dap"]))).toBe("/opt/llvm/bin/lldb-dap");
    const both = install(["/usr/bin/lldb-18", "/usr/bin/lldb-dap-18", "/usr/bin/lldb-vscode-16", "/usr/bin/lldb-dap"]);
    expect(resolveAdapter("/usr/bin/lldb-18", both)).toBe("/usr/bin/lldb-dap-18");
  });

  it("looks up a bare name on PATH first", () => {
    expect(resolveAdapter("lldb-16", debian12)).toBe("/usr/bin/lldb-vscode-16");
  });

  it("follows a symbolic link to where the adapter is installed", () => {
    const linkedOnly = install(["/usr/lib/llvm-16/bin/lldb", "/usr/lib/llvm-16/bin/lldb-vscode"], { "/usr/bin/lldb-16": "/usr/lib/llvm-16/bin/lldb" });
    expect(resolveAdapter("/usr/bin/lldb-16", linkedOnly)).toBe("/usr/lib/llvm-16/bin/lldb-vscode");
  });

  it("says which adapters it looked for when lldb's command line has none beside it", () => {
    const lonely = install(["/usr/bin/lldb-17"]);
    expect(() => resolveAdapter("/usr/bin/lldb-17", lonely)).toThrow(DebuggerMissing);
    expect(() => resolveAdapter("/usr/bin/lldb-17", lonely)).toThrow(
      "/usr/bin/lldb-17 is lldb's command line, not its DAP server, and there is no /usr/bin/lldb-dap-17 or /usr/bin/lldb-vscode-17",
    );
  });

  it("leaves a command line that is not installed to fail when it is started", () => {
    expect(resolveAdapter("lldb", debian12)).toBe("lldb");
  });
});
