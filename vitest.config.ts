import { defineConfig } from "vitest/config";

// Tests build real programs and open real cores in real gdb: give them room, and keep
// the two cores of the machine busy without oversubscribing them.
export default defineConfig({
  // The prompts are Markdown imported as text, as the build's text loader bundles them.
  plugins: [
    {
      name: "markdown-as-text",
      transform: (code: string, id: string) => (id.endsWith(".md") ? { code: `export default ${JSON.stringify(code)};`, map: null } : null),
    },
  ],
  test: {
    include: ["tests/**/*.test.ts"],
    globalSetup: ["tests/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
  },
});
