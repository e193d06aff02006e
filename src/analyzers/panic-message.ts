/**
 * Finding a Rust panic's message in a core. With `panic = "abort"` the message never reaches
 * `__abort_msg`, and the standard library has no argument debug info; but the panic payload is
 * still on the stack of the panicking frames: a `String` (capacity, pointer, length) that the
 * panic hook formatted, or a `&'static str` (pointer, length) for a literal message. This
 * lists the candidates found in a dump of those stack words, most likely first.
 */

export interface StringCandidate {
  address: bigint;
  length: number;
}

const MAX_MESSAGE = 4096n;
const MIN_POINTER = 0x10000n;

export function panicMessageCandidates(words: bigint[], stack: { low: bigint; high: bigint }): StringCandidate[] {
  const pointer = (value: bigint) => value >= MIN_POINTER && !(value >= stack.low && value < stack.high);
  const owned: StringCandidate[] = [];
  const borrowed: StringCandidate[] = [];
  for (let index = 0; index + 1 < words.length; index++) {
    const [first = 0n, second = 0n, third = 0n] = words.slice(index, index + 3);
    if (index + 2 < words.length && third > 0n && third <= first && first <= MAX_MESSAGE * 16n && pointer(second)) {
      owned.push({ address: second, length: Number(third) });
    }
    if (second > 0n && second <= MAX_MESSAGE && pointer(first)) borrowed.push({ address: first, length: Number(second) });
  }
  const seen = new Set<bigint>();
  return [...owned, ...borrowed].filter((candidate) => !seen.has(candidate.address) && seen.add(candidate.address));
}

/**
 * Accepts what a candidate's string read returned when it is a plausible message: at least as
 * long as the recorded length, printable, and not the source path of a panic `Location`.
 */
export function acceptPanicMessage(text: string | null, length: number): string | null {
  if (text === null) return null;
  const bytes = Buffer.from(text.replace(/\.\.\.$/, ""), "latin1");
  const cut = text.endsWith("...") && bytes.length < length;
  if (bytes.length < length && !cut) return null;
  const message = bytes.subarray(0, length).toString("utf8");
  if (message.includes("\uFFFD") || /[\u0000-\u0008\u000e-\u001f]/.test(message)) return null;
  if (/\.rs$/.test(message) || !/[A-Za-z]{2}/.test(message)) return null;
  return cut ? `${message}...` : message;
}
