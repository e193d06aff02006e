import { describe, expect, it } from "vitest";
import { quoteLine } from "../../src/agents/playbooks/prose.js";
import { withoutComments } from "../../src/agents/playbooks/source.js";

describe("a source line quoted in a report", () => {
  it.each([
    ["    if (argv[1][0] == 'A') // the admin flag", "if (argv[1][0] == 'A')"],
    ["    if (c == '/' || c == '\\\\') return 1; /* separators */", "if (c == '/' || c == '\\\\') return 1;"],
    ['    url = "http://example.org/a"; // default', 'url = "http://example.org/a";'],
    ['    printf("/* not a comment */ %d\\n", n);', 'printf("/* not a comment */ %d\\n", n);'],
    ["    x = y /* inline */ + 1;", "x = y   + 1;"],
    ["    s = \"it's\" ; t = '\\''; // quote", "s = \"it's\" ; t = '\\'';"],
  ])("%s keeps its literals whole", (line, code) => {
    expect(withoutComments(line)).toBe(code);
    expect(quoteLine(line)).toBe(`\`${code}\``);
  });

  it("a line that is only a comment quotes nothing", () => {
    expect(quoteLine("    // nothing here")).toBeNull();
    expect(quoteLine("    /* block */")).toBeNull();
  });
});
