/**
 * The one fact triage needs from a Java class file: its `SourceFile` attribute, the source file
 * name javac recorded (`Records.java`), as Java's own stack traces print it. The bytes come from the
 * core (the SA rebuilds the class from the VM's structures), so they are read bounded: every count
 * and length is checked against what is left, and a file that does not parse names no source.
 */

const MAGIC = 0xcafebabe;
const UTF8 = 1;
/** The constant pool's entries' sizes after their tag, by tag (JVMS §4.4); UTF-8 entries carry their length. */
const ENTRY_SIZE: Record<number, number> = { 3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2 };

/** The class's `SourceFile` attribute, or null where the class has none or its bytes do not parse. */
export function sourceFileOf(bytes: Uint8Array): string | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.length) throw new RangeError("class file cut short");
  };
  const u2 = () => (need(2), (at += 2), view.getUint16(at - 2));
  const u4 = () => (need(4), (at += 4), view.getUint32(at - 4));
  try {
    if (u4() !== MAGIC) return null;
    at += 4; // minor and major version
    const count = u2();
    const utf8 = new Map<number, string>();
    for (let index = 1; index < count; index++) {
      need(1);
      const tag = view.getUint8(at++);
      if (tag === UTF8) {
        const length = u2();
        need(length);
        utf8.set(index, new TextDecoder().decode(bytes.subarray(at, at + length)));
        at += length;
        continue;
      }
      const size = ENTRY_SIZE[tag];
      if (size === undefined) return null;
      need(size);
      at += size;
      // Longs and doubles take two entries (JVMS §4.4.5).
      if (tag === 5 || tag === 6) index++;
    }
    at += 6; // access flags, this class, super class
    const interfaces = u2();
    at += interfaces * 2;
    // Fields, then methods: each with its attributes, skipped by their lengths.
    for (let table = 0; table < 2; table++) {
      const members = u2();
      for (let m = 0; m < members; m++) {
        at += 6;
        skipAttributes();
      }
    }
    const attributes = u2();
    for (let a = 0; a < attributes; a++) {
      const name = utf8.get(u2());
      const length = u4();
      need(length);
      if (name === "SourceFile" && length === 2) {
        const file = utf8.get(view.getUint16(at));
        return file && /^[^/\\\0\n]{1,255}$/.test(file) ? file : null;
      }
      at += length;
    }
    return null;
  } catch {
    return null;
  }

  function skipAttributes(): void {
    const attributes = u2();
    for (let a = 0; a < attributes; a++) {
      at += 2;
      const length = u4();
      need(length);
      at += length;
    }
  }
}
