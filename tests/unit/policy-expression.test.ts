import { describe, it, expect } from "vitest";
import {
  C_EXPRESSIONS,
  closingQuote,
  expressionProblem,
  type ExpressionLanguage,
} from "../../src/debuggers/policy/expression.js";

const COMPILED: ExpressionLanguage = { ...C_EXPRESSIONS, compiled: true };
const MASM_LIKE: ExpressionLanguage = { notCalls: new Set(["poi"]), objcMessages: false, compiled: false };

const READS = [
  "x", "x == 1", "x != 1", "a <= b", "a >= b", "a > (b)", "x ? y : z", "(char*)p", "*(int*)0x1234", "sizeof(int)",
  "sizeof (struct foo)", "alignof(long)", "typeid(x)", "decltype(x)", "int(x)", "(unsigned long)(p)",
  "(struct foo *)(ptr)", "static_cast<int>(x)", "reinterpret_cast<char *>(p)", "arr[3]", "a[1][2]", "p->next->v",
  "&x", "~mask & 0xff", "!ok", "-x", "1 - -1", "a && (b || c)", "a, b", "$pc", "$1", "$_siginfo._sifields",
  '"a=(b)"', "'a'", "'='", "'('", '"escaped \\" quote (x=1)"', "'file.c'::var", "{int}0x1000", "&A::operator+",
];

/** [expression, the problem it has]. */
const PROBLEMS: ReadonlyArray<readonly [string, string]> = [
  // Assignment, plain and compound, to variables and convenience variables.
  ["x = 1", 'assigns with "="'],
  ["x=1", 'assigns with "="'],
  ["a === b", 'assigns with "="'],
  ["x += 1", 'assigns with "+="'],
  ["x -= 1", 'assigns with "-="'],
  ["x *= 2", 'assigns with "*="'],
  ["x /= 2", 'assigns with "/="'],
  ["x %= 2", 'assigns with "%="'],
  ["x &= 1", 'assigns with "&="'],
  ["x |= 1", 'assigns with "|="'],
  ["x ^= 1", 'assigns with "^="'],
  ["x <<= 1", 'assigns with "<<="'],
  ["x >>= 1", 'assigns with ">>="'],
  ["x := 1", 'assigns with ":="'],
  ["x and_eq 1", 'assigns with "and_eq"'],
  ["x or_eq 1", 'assigns with "or_eq"'],
  ["x xor_eq 1", 'assigns with "xor_eq"'],
  ["$x = 1", 'assigns with "="'],
  ["$1 += 2", 'assigns with "+="'],
  // Increment and decrement.
  ["x++", 'changes a value with "++"'],
  ["++x", 'changes a value with "++"'],
  ["x--", 'changes a value with "--"'],
  ["--x", 'changes a value with "--"'],
  ["$x++", 'changes a value with "++"'],
  // A comma operator hides nothing.
  ["1, foo()", 'calls a function ("foo(")'],
  ["(x, y = 2)", 'assigns with "="'],
  ["a, b++", 'changes a value with "++"'],
  ["(0, abort())", 'calls a function ("abort(")'],
  // Calls, however they are dressed.
  ["foo()", 'calls a function ("foo(")'],
  ["foo (1)", 'calls a function ("foo(")'],
  ["obj.method()", 'calls a function ("method(")'],
  ["ns::f(1)", 'calls a function ("f(")'],
  ["1(2)", 'calls a function ("1(")'],
  ["'foo'(1)", "calls a function"],
  ["$pc()", 'calls a function ("$pc(")'],
  ['$_streq(a, "b")', 'calls a function ("$_streq(")'],
  ["sizeof(getpid())", 'calls a function ("getpid(")'],
  ["(*fp)()", "calls the value of a parenthesised expression"],
  ["(fp)(1)", "calls the value of a parenthesised expression"],
  ["((int (*)(void))f)()", "calls the value of a parenthesised expression"],
  ["arr[0](1)", "calls an element of an array"],
  ["foo<int>(1)", "may call a template function"],
  ["a.operator+(b)", 'calls an operator function ("operator+(")'],
  ["x.operator int()", 'calls an operator function ("operator int(")'],
  ["operator new[](8)", 'calls an operator function ("operator new[](")'],
  ["[obj release]", "sends an Objective-C message"],
  // Literals must be closed for the rest to be read.
  ['"unterminated', "has an unterminated string literal"],
  ["'x", "has an unterminated quoted literal"],
];

/** What lldb's compiled expressions refuse besides: [expression, problem]. */
const COMPILED_PROBLEMS: ReadonlyArray<readonly [string, string]> = [
  ["new int", 'runs code in the program ("new")'],
  ["delete p", 'runs code in the program ("delete")'],
  ["throw 1", 'runs code in the program ("throw")'],
  ["l: goto l", 'runs code in the program ("goto")'],
  ['asm("nop")', 'runs code in the program ("asm")'],
  ["dynamic_cast<Foo *>(p)", 'runs code in the program ("dynamic_cast")'],
  ["Foo x", 'declares a variable ("Foo x"), which may run a constructor'],
  ["ns::Foo x", 'declares a variable ("Foo x")'],
  ["const Foo x", 'declares a variable ("Foo x")'],
  ["Foo $x", 'declares a variable ("Foo $x")'],
  ["int $x{5}", 'has a statement, block or initialiser ("{")'],
  ["x; y", 'has a statement, block or initialiser (";")'],
];

const COMPILED_READS = [
  "x", "(struct node *)p", "struct foo *p", "sizeof x", "unsigned int x", "a and b", "x not_eq y", "(Foo const *)p",
  "p->next", "static_cast<int>(x)",
];

describe("expressionProblem", () => {
  it.each(READS)("lets %j read", (text) => {
    expect(expressionProblem(text, C_EXPRESSIONS)).toBeNull();
  });

  it.each(PROBLEMS)("refuses %j", (text, problem) => {
    expect(expressionProblem(text, C_EXPRESSIONS)).toContain(problem);
  });

  it.each(COMPILED_PROBLEMS)("refuses %j where the expression is compiled as code", (text, problem) => {
    expect(expressionProblem(text, COMPILED)).toContain(problem);
    expect(expressionProblem(text, C_EXPRESSIONS) ?? "").not.toContain(problem);
  });

  it.each(COMPILED_READS)("lets %j read where the expression is compiled as code", (text) => {
    expect(expressionProblem(text, COMPILED)).toBeNull();
  });

  it("takes the names that are no calls, and whether \"[\" sends a message, from the language", () => {
    expect(expressionProblem("poi(@rsp)", MASM_LIKE)).toBeNull();
    expect(expressionProblem("poi(@rsp)", C_EXPRESSIONS)).toContain('calls a function ("poi(")');
    expect(expressionProblem("[ebp+8]", MASM_LIKE)).toBeNull();
    expect(expressionProblem("$_streq(a, b)", { ...C_EXPRESSIONS, notCalls: new Set(["$_streq"]) })).toBeNull();
  });
});

describe("closingQuote", () => {
  it("finds the quote that closes a literal, skipping escaped ones", () => {
    expect(closingQuote('"abc" x', 0)).toBe(4);
    expect(closingQuote('"a\\"b" x', 0)).toBe(5);
    expect(closingQuote("'a' x", 0)).toBe(2);
    expect(closingQuote('x "abc', 2)).toBe(-1);
  });
});
