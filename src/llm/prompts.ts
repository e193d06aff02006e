/** Prompts' named `{placeholders}`: each agent's prompt sits beside it (`agents/<node>/prompt.md`). */

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replaces each `{name}` with its value in one pass, so braces inside a value (dump content) are
 * never read as placeholders. A placeholder without a value, or a value without a placeholder, is
 * a mistake in the calling agent and throws.
 */
export function fillPrompt(template: string, values: Record<string, string>): string {
  const names = new Set(Array.from(template.matchAll(PLACEHOLDER), (m) => m[1] as string));
  const missing = [...names].filter((name) => !Object.hasOwn(values, name));
  if (missing.length > 0) throw new Error(`prompt placeholders without a value: ${missing.map((n) => `{${n}}`).join(", ")}`);
  const extra = Object.keys(values).filter((name) => !names.has(name));
  if (extra.length > 0) throw new Error(`prompt values without a placeholder: ${extra.join(", ")}`);
  return template.replace(PLACEHOLDER, (_, name: string) => values[name] as string);
}
