/**
 * Masks secrets in text before it leaves the machine for a cloud model: values of the dumped
 * process's environment, keys and tokens by their well-known shapes, passwords assigned by name,
 * and e-mail addresses. The same value always gets the same marker, so a model can still tell
 * that two places hold one secret.
 */

export interface RedactionStats {
  /** Distinct values masked. */
  count: number;
  /** Distinct values masked, by kind (`env-value`, `openai-key`, `email`, ...). */
  kinds: Record<string, number>;
}

interface Rule {
  kind: string;
  /** Global, with the `d` flag; a `secret` group, when present, is the only part masked. */
  pattern: RegExp;
}

// Order matters: whole secrets before the name=value rules, so `OPENAI_API_KEY=sk-...` counts as
// an OpenAI key, and a value already masked is never masked twice.
const RULES: Rule[] = [
  // Up to the END line, or, in a truncated string, as far as base64 and escapes go.
  {
    kind: "private-key",
    pattern: /-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY-----(?:[\s\S]{0,10000}?-----END ([A-Z0-9]+ )*PRIVATE KEY-----|[A-Za-z0-9+/=\s\\]*)/dg,
  },
  { kind: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/dg },
  { kind: "url-password", pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:@/"']+:(?<secret>[^\s@/"']+)@/dgi },
  { kind: "auth-header", pattern: /\b(?:Bearer|Basic)\s+(?<secret>(?!\[REDACTED)[A-Za-z0-9._~+/-]{12,}=*)/dg },
  { kind: "anthropic-key", pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/dg },
  { kind: "openai-key", pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/dg },
  { kind: "aws-access-key", pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/dg },
  { kind: "github-token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})/dg },
  { kind: "slack-token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/dg },
  { kind: "google-api-key", pattern: /\bAIza[0-9A-Za-z_-]{35}/dg },
  { kind: "email", pattern: /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/dg },
  // gdb prints a char* field as `password = 0x4052a0 "hunter2"`; only the quoted text is masked.
  {
    kind: "secret-assignment",
    pattern: /\b[A-Za-z0-9_]*(?:password|passwd|secret|token|api_?key|access_?key|private_?key|credential)[A-Za-z0-9_]*\s*[=:]\s*(?:0x[0-9a-fA-F]+\s+)?"(?<secret>(?!\[REDACTED)(?:[^"\\]|\\.){4,})"/dgi,
  },
  // NAME=value in environment blocks, command lines and query strings; `token = 0x...` has spaces
  // and is a pointer, not a secret, so it stays.
  {
    kind: "secret-assignment",
    pattern: /\b[A-Za-z0-9_-]*(?:password|passwd|secret|token|api_?key|access_?key|private_?key|credential)[A-Za-z0-9_]*=(?<secret>(?!\[REDACTED)[^\s"'&;]{4,})/dgi,
  },
];

/**
 * Environment values shorter than this, or all digits, are left alone: `1`, `true`, `C`, a PID or
 * a port would mask unrelated text all over the dump's evidence.
 */
const MIN_ENV_VALUE_LENGTH = 6;

export class Redactor {
  private readonly envPattern: RegExp | null;
  private readonly markers = new Map<string, string>();
  private readonly kinds: Record<string, number> = {};

  constructor(opts: { envValues?: string[] } = {}) {
    const values = [...new Set(opts.envValues ?? [])]
      .filter((value) => value.length >= MIN_ENV_VALUE_LENGTH && !/^\d+$/.test(value))
      .sort((a, b) => b.length - a.length);
    // Whole tokens only: HOME=/home/alice masks "/home/alice/src", USER=server leaves "server_loop".
    this.envPattern = values.length === 0 ? null : new RegExp(`(?<![A-Za-z0-9_])(?:${values.map(escapeRegExp).join("|")})(?![A-Za-z0-9_])`, "dg");
  }

  redact(text: string): string {
    let out = this.envPattern ? this.mask(text, { kind: "env-value", pattern: this.envPattern }) : text;
    for (const rule of RULES) out = this.mask(out, rule);
    return out;
  }

  stats(): RedactionStats {
    return { count: this.markers.size, kinds: { ...this.kinds } };
  }

  private mask(text: string, rule: Rule): string {
    let out = "";
    let last = 0;
    for (const match of text.matchAll(rule.pattern)) {
      const [start, end] = match.indices?.groups?.secret ?? [match.index, match.index + match[0].length];
      out += text.slice(last, start) + this.marker(rule.kind, text.slice(start, end));
      last = end;
    }
    return last === 0 ? text : out + text.slice(last);
  }

  private marker(kind: string, secret: string): string {
    let marker = this.markers.get(secret);
    if (marker === undefined) {
      this.kinds[kind] = (this.kinds[kind] ?? 0) + 1;
      marker = `[REDACTED:${kind}#${this.kinds[kind]}]`;
      this.markers.set(secret, marker);
    }
    return marker;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
