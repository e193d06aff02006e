import { defineConfig } from "vitest/config";

// Tests build real programs and open real cores in real gdb: give them room, and keep
// the two cores of the machine busy without oversubscribing them.
export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
  },
});
