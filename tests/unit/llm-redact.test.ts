/** Secrets masked by shape and by the dumped process's environment; ordinary debugger output left alone. */
import { describe, expect, it } from "vitest";
import { Redactor } from "../../src/llm/index.js";

const mask = (text: string, envValues?: string[]) => {
  const redactor = new Redactor({ envValues });
  return { text: redactor.redact(text), stats: redactor.stats() };
};

describe("Redactor", () => {
  it.each([
    ["openai-key", "key: sk-proj-Abc123Def456Ghi789Jkl012Mno345", "key: [REDACTED:openai-key#1]"],
    ["anthropic-key", "ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "ANTHROPIC_API_KEY=[REDACTED:anthropic-key#1]"],
    ["aws-access-key", '$1 = "AKIAIOSFODNN7EXAMPLE"', '$1 = "[REDACTED:aws-access-key#1]"'],
    ["github-token", "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 and github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED:github-token#1] and [REDACTED:github-token#2]"],
    ["slack-token", "xoxb-123456789012-abcdefghijkl", "[REDACTED:slack-token#1]"],
    ["google-api-key", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED:google-api-key#1]"],
    ["email", "owner = 0x4052a0 \"alice.smith@example.com\"", 'owner = 0x4052a0 "[REDACTED:email#1]"'],
    ["jwt", "Cookie: s=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U;", "Cookie: s=[REDACTED:jwt#1];"],
    ["auth-header", "Authorization: Bearer abc.def-123456789xyz", "Authorization: Bearer [REDACTED:auth-header#1]"],
    ["url-password", "postgres://app:hunter2secret@db.internal:5432/app", "postgres://app:[REDACTED:url-password#1]@db.internal:5432/app"],
    ["secret-assignment", 'password = 0x4052a0 "hunter22", db_token = "tok-123456"', 'password = 0x4052a0 "[REDACTED:secret-assignment#1]", db_token = "[REDACTED:secret-assignment#2]"'],
    ["secret-assignment", "argv: ./server --db-password=hunter22 --port=80", "argv: ./server --db-password=[REDACTED:secret-assignment#1] --port=80"],
  ])("masks %s", (kind, input, output) => {
    const { text, stats } = mask(input);
    expect(text).toBe(output);
    expect(Object.keys(stats.kinds)).toEqual([kind]);
  });

  it("masks a private key block, whole, also as gdb prints it in one escaped string", () => {
    const pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----";
    expect(mask(`key:\n${pem}\nafter`).text).toBe("key:\n[REDACTED:private-key#1]\nafter");
    const escaped = '$1 = 0x405300 "-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA7xQ3\\nmZ9sK2pL"...';
    expect(mask(escaped).text).toBe('$1 = 0x405300 "[REDACTED:private-key#1]"...');
  });

  it("masks the dumped process's environment values wherever they appear, as whole tokens", () => {
    const { text, stats } = mask('dsn = "host=db user=svc pw=Zq9-long-value", home = "/home/alice/src", fn = alice_helper', ["Zq9-long-value", "/home/alice", "alice_"]);
    expect(text).toBe('dsn = "host=db user=svc pw=[REDACTED:env-value#1]", home = "[REDACTED:env-value#2]/src", fn = alice_helper');
    expect(stats).toEqual({ count: 2, kinds: { "env-value": 2 } });
  });

  it("ignores short and numeric environment values, which would mask unrelated evidence", () => {
    const text = "#0 main () at main.c:1\nSHLVL=1 TERM=xterm PORT=8080 PID=123456";
    expect(mask(text, ["1", "xterm", "8080", "123456", "C"]).text).toBe(text);
  });

  it("gives one value one marker, across calls, and counts distinct values", () => {
    const redactor = new Redactor();
    const first = redactor.redact("a@example.com wrote to b@example.com");
    const second = redactor.redact("reply from b@example.com");
    expect(first).toBe("[REDACTED:email#1] wrote to [REDACTED:email#2]");
    expect(second).toBe("reply from [REDACTED:email#2]");
    expect(redactor.stats()).toEqual({ count: 2, kinds: { email: 2 } });
  });

  it("counts a key assigned by name once, as the key it is", () => {
    const { text, stats } = mask('"OPENAI_API_KEY=sk-proj-Abc123Def456Ghi789Jkl012Mno345"', ["sk-proj-Abc123Def456Ghi789Jkl012Mno345"]);
    expect(text).toBe('"OPENAI_API_KEY=[REDACTED:env-value#1]"');
    expect(stats).toEqual({ count: 1, kinds: { "env-value": 1 } });
  });

  it("leaves ordinary debugger output alone", () => {
    const gdb = [
      "#0  0x00005555555551a9 in send_to_client (c=0x0, msg=0x7fffffffe0f0 \"hello\") at server.c:42",
      "#1  0x00007ffff7c29d90 in __libc_start_call_main (main=main@entry=0x555555555200 <main>) at ../sysdeps/nptl/libc_start_call_main.h:58",
      "   0x00007ffff7c8e9fc <+300>:\tcall   0x7ffff7c28460 <memcpy@plt>",
      "0x7ffff7e1e000 0x7ffff7e20000 r--p libc.so.6  malloc@@GLIBC_2.2.5 std::vector<int>::at",
      "$1 = {token = 0x555555559ac0, token_count = 12, auth_state = AUTH_CONNECTED, secret_len = 32}",
      "rax            0x0                 0",
    ].join("\n");
    expect(mask(gdb).text).toBe(gdb);
  });

  it("does not mask an already masked value twice", () => {
    const redactor = new Redactor();
    const once = redactor.redact('password = "hunter22"');
    expect(redactor.redact(once)).toBe(once);
    expect(redactor.stats().count).toBe(1);
  });
});
