/** Reading the dumped process's environment (for redaction) from a real core with awkward values. */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/analyzers/index.js";
import { GdbSession } from "../../src/debuggers/gdb/gdb-session.js";
import { askSession } from "../../src/debuggers/inspector.js";
import { tempDirs } from "../helpers/temp-dirs.js";

const tempDir = tempDirs();

const LONG = `postgres://app:${"x".repeat(280)}@db.internal/prod`;
const QUOTED = 'pa"ss\\word-zq9';
const AFTER = "tailsecret-after-the-long-one";
let session: GdbSession;

beforeAll(async () => {
  const dir = tempDir("dumpdbg-env-");
  writeFileSync(join(dir, "crash.c"), "int main(void) { return *(volatile int *)0; }\n");
  execFileSync("gcc", ["-g", "-O0", "-o", join(dir, "crash"), join(dir, "crash.c")]);
  execFileSync("gdb", ["-nx", "-batch", "-ex", "run", "-ex", `generate-core-file ${join(dir, "core")}`, join(dir, "crash")], {
    env: { PATH: process.env.PATH ?? "/usr/bin", DB_DSN: LONG, QUOTED, AFTER, REPEATS: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" },
    stdio: "ignore",
  });
  session = new GdbSession({ dump: join(dir, "core"), executable: join(dir, "crash") });
  await session.open();
});

afterAll(async () => {
  await session?.close();
});

describe("readEnvironment", () => {
  it("reads every value whole, also long ones, runs of one letter, and those after them", async () => {
    const values = await readEnvironment(askSession(session));
    expect(values).toContain(LONG);
    expect(values).toContain(AFTER);
    expect(values).toContain("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  });

  it("keeps a value with quotes and backslashes both as it is and as gdb prints it in a string", async () => {
    const values = await readEnvironment(askSession(session));
    expect(values).toContain(QUOTED);
    expect(values).toContain('pa\\"ss\\\\word-zq9');
  });
});
