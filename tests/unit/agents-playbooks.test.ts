/** The playbooks' reading of source lines and of the values gdb prints. */
import { describe, expect, it } from "vitest";
import { comparison } from "../../src/agents/playbooks/aborts.js";
import { parseArgs } from "../../src/agents/playbooks/facts.js";
import { codeOf, dereferences, enclosingFunction, excerptOf, functionSpan, identifiers, type SourceFile } from "../../src/agents/playbooks/source.js";
import { fullRegister, memoryOperand } from "../../src/analyzers/operands.js";
import { asciiOfWord, fieldOf, integerOf, looksPoisoned, pointerOf, stringOf } from "../../src/agents/playbooks/values.js";

describe("source", () => {
  it.each([
    ["int fd = session->client->fd; // CULPRIT", [{ pointer: "session", member: "client" }, { pointer: "session->client", member: "fd" }]],
    ["entry->value = value;", [{ pointer: "entry", member: "value" }]],
    ["unsafe { (*node).value } // CULPRIT", [{ pointer: "node", member: "value" }, { pointer: "node", member: null }]],
    ['printf("a->b %s\\n", job->request->path);', [{ pointer: "job", member: "request" }, { pointer: "job->request", member: "path" }]],
    ["*c = (char)tolower((unsigned char)*c);", [{ pointer: "c", member: null }]],
    ["return stats->total_ms / stats->requests;", [{ pointer: "stats", member: "total_ms" }, { pointer: "stats", member: "requests" }]],
  ])("finds the pointers `%s` reads through", (line, expected) => {
    expect(dereferences(line)).toEqual(expected);
  });

  it("leaves comments and the insides of literals out of the code", () => {
    expect(codeOf(`strcpy(name, "a->b"); /* x->y */ // z->w`)).toBe(`strcpy(name, ""); `.trim());
    expect(identifiers("return now - last_active_;")).toEqual(["now", "last_active_"]);
  });

  const source: SourceFile = {
    path: "server.c",
    lines: [
      "static struct entry *find_slot(struct cache *cache)",
      "{",
      "    if (cache->full)",
      "        return NULL;",
      "    return &cache->slots[0];",
      "}",
      "",
      "static void store(struct cache *cache, long value)",
      "{",
      "    struct entry *entry = find_slot(cache);",
      "    entry->value = value;",
      "}",
      "class Session {",
      "    long idle(long now) const { return now - last_; }",
      "};",
    ],
  };

  it("finds a function's body by its name, and the function around a line", () => {
    expect(functionSpan(source, "find_slot")).toEqual({ header: 1, start: 2, end: 6 });
    expect(functionSpan(source, "store", 11)).toEqual({ header: 8, start: 9, end: 12 });
    expect(functionSpan(source, "idle", 14)).toEqual({ header: 14, start: 14, end: 14 });
    expect(enclosingFunction(source, 4)?.name).toBe("find_slot");
    expect(enclosingFunction(source, 11)?.name).toBe("store");
    // A call is not a definition.
    expect(functionSpan(source, "find_slot", 10)).toBeNull();
  });

  it("quotes the lines around a line for the report, clamped to the file", () => {
    expect(excerptOf(source, 4, 1)).toEqual({
      file: "server.c",
      line: 4,
      lines: [
        { n: 3, text: source.lines[2] },
        { n: 4, text: source.lines[3] },
        { n: 5, text: source.lines[4] },
      ],
    });
    expect(excerptOf(source, 2)?.lines.map((l) => l.n)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(excerptOf(source, source.lines.length + 1)).toBeNull();
    expect(excerptOf(source, 0)).toBeNull();
  });

  it.each([
    ["ring->write_index + length <= sizeof ring->data", { left: "ring->write_index + length", op: "<=", right: "sizeof ring->data" }],
    ["count < limit", { left: "count", op: "<", right: "limit" }],
    ["(a << 2) != b", { left: "(a << 2)", op: "!=", right: "b" }],
    ["p->next", null],
  ])("splits the assertion `%s` at its comparison", (expression, expected) => {
    expect(comparison(expression)).toEqual(expected);
  });

  it("reads a frame's argument list as gdb prints it", () => {
    expect(Object.fromEntries(parseArgs('session=0x556786f992f0, message=0x55677dd2a02e "user1, has left"'))).toEqual({
      session: "0x556786f992f0",
      message: '0x55677dd2a02e "user1, has left"',
    });
    expect(Object.fromEntries(parseArgs("greeting=greeting@entry=0x7ffed5ca9d30, name=<optimized out>, manifest=..."))).toEqual({
      greeting: "0x7ffed5ca9d30",
      name: "<optimized out>",
      manifest: "...",
    });
  });
});

describe("values", () => {
  it("reads pointers, integers, strings and fields as gdb prints them", () => {
    expect(pointerOf("(struct client *) 0x0")).toBe(0n);
    expect(pointerOf("(Session * const) 0x0")).toBe(0n);
    expect(pointerOf("0x560135d2f080 <commands+32>")).toBe(0x560135d2f080n);
    expect(pointerOf("(command_handler) 0x0")).toBe(0n);
    expect(pointerOf("{id = 1}")).toBeNull();
    expect(integerOf("71")).toBe(71n);
    expect(integerOf("9 '\\t'")).toBe(9n);
    expect(integerOf("-1")).toBe(-1n);
    expect(integerOf("0x7ffe")).toBe(0x7ffen);
    expect(stringOf('0x55c5aa2ab01c "Content-Type"')).toBe("Content-Type");
    expect(stringOf('(const std::string &) @0x7ffc: {_M_dataplus = {_M_p = 0x7ffc0680 "version"}, _M_string_length = 7}')).toBe("version");
    expect(fieldOf("{id = 1, client = 0x0}", "client")).toBe("0x0");
    expect(fieldOf("{__data = {__lock = 2, __owner = 17350, __nusers = 1}, __align = 2}", "__data")).toBe("{__lock = 2, __owner = 17350, __nusers = 1}");
  });

  it("takes an AT&T memory operand apart", () => {
    expect(memoryOperand("mov 0x20(%rax),%eax")).toEqual({ displacement: 0x20n, base: "rax", index: null, shown: "%rax", text: "0x20(%rax)" });
    expect(memoryOperand("mov %rdx,-0x18(%rbp,%rcx,8)")).toEqual({ displacement: -0x18n, base: "rbp", index: "rcx", shown: "%rbp", text: "-0x18(%rbp,%rcx,8)" });
    expect(memoryOperand("idiv %rcx")).toBeNull();
  });

  it("takes an AArch64 memory operand apart, as gdb and LLDB list it", () => {
    // gdb-multiarch writes immediates in decimal, LLDB in hex.
    expect(memoryOperand("ldr\tw1, [x0, #32]")).toEqual({ displacement: 32n, base: "x0", index: null, shown: "x0", text: "[x0, #32]" });
    expect(memoryOperand("ldr    w1, [x0, #0x20]")).toMatchObject({ displacement: 0x20n, base: "x0" });
    expect(memoryOperand("str x2, [x19]")).toMatchObject({ displacement: 0n, base: "x19", text: "[x19]" });
    expect(memoryOperand("ldp x29, x30, [sp, #-16]!")).toMatchObject({ displacement: -16n, base: "sp" });
    // Post-indexed: the address is the base itself; the immediate is added after.
    expect(memoryOperand("ldr x0, [x1], #8")).toMatchObject({ displacement: 0n, base: "x1" });
    expect(memoryOperand("ldr w0, [x1, w2, sxtw #2]")).toMatchObject({ displacement: 0n, base: "x1", index: "w2" });
    expect(memoryOperand("udiv w0, w1, w2")).toBeNull();
    expect(fullRegister("w1")).toBe("x1");
    expect(fullRegister("x30")).toBe("x30");
    expect(fullRegister("eax")).toBe("rax");
  });

  it("recognises text and fill patterns in memory words", () => {
    expect(asciiOfWord(0x323120646970202dn)).toBe("- pid 12");
    expect(asciiOfWord(0x51n)).toBeNull();
    expect(looksPoisoned(0xdeadbeef000n)).toBe(true);
    expect(looksPoisoned(0x55677dd291e7n)).toBe(false);
  });
});

describe("passedPointers", () => {
  it("finds the pointer expressions a line passes to functions", async () => {
    const { passedPointers } = await import("../../src/agents/playbooks/source.js");
    expect(passedPointers("    length += strlen(req->agent); // CULPRIT")).toEqual([{ callee: "strlen", pointer: "req->agent" }]);
    expect(passedPointers('memcpy(dst->buf, src, n * 2); if (x) free(p);')).toEqual([
      { callee: "memcpy", pointer: "dst->buf" },
      { callee: "memcpy", pointer: "src" },
      { callee: "free", pointer: "p" },
    ]);
    expect(passedPointers('printf("%s (a, b)", name);')).toEqual([{ callee: "printf", pointer: "name" }]);
    expect(passedPointers("if (sizeof(x) > 0) return;")).toEqual([]);
    expect(passedPointers("total = outer(inner(a[i]), &b);")).toEqual([{ callee: "inner", pointer: "a[i]" }]);
  });
});

describe("indexedAccesses", () => {
  it("finds base[index] accesses with a non-constant index", async () => {
    const { indexedAccesses } = await import("../../src/agents/playbooks/source.js");
    expect(indexedAccesses("    table->owner_of_slot[user_id] = owner; // CULPRIT")).toEqual([{ base: "table->owner_of_slot", index: "user_id" }]);
    expect(indexedAccesses("x = grid.rows[r][c] + buf[3] + list[i + 1];")).toEqual([
      { base: "grid.rows", index: "r" },
      { base: "list", index: "i + 1" },
    ]);
    expect(indexedAccesses('printf("[%d]", a);')).toEqual([]);
  });
});
