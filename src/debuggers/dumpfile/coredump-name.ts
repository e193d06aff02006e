/**
 * systemd-coredump's store: what its file names say (`core.<comm>.<uid>.<boot id>.<pid>.<µs>` and
 * the compression's suffix) and what its extended attributes say (`user.coredump.exe`, `.pid`,
 * `.signal`, …, as `getfattr -e hex` prints them). Pure: the reading of the folder and of the
 * attributes is `debuggers/coredump-store.ts`'s.
 */

export interface CoredumpName {
  /** The process's name as the kernel kept it (`comm`, at most 15 characters), unescaped. */
  comm: string;
  uid: number;
  bootId: string;
  pid: number;
  /** When it crashed, in µs since the epoch. */
  timestampUs: number;
}

const NAME = /^core\.(.{1,80})\.(\d{1,10})\.([0-9a-f]{32})\.(\d{1,10})\.(\d{1,20})(?:\.(?:zst|lz4|xz))?$/;

/** A store file's name read into its parts; null for a name systemd-coredump does not write. */
export function parseCoredumpName(name: string): CoredumpName | null {
  const match = NAME.exec(name);
  if (!match) return null;
  const [, comm, uid, bootId, pid, time] = match as unknown as [string, string, string, string, string, string];
  // systemd escapes the dots, slashes and spaces of comm as \xNN.
  return { comm: comm.replace(/\\x([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), uid: Number(uid), bootId, pid: Number(pid), timestampUs: Number(time) };
}

/** What systemd-coredump tagged a core with; each null when the file lacks that attribute. */
export interface CoredumpAttributes {
  exe: string | null;
  pid: number | null;
  uid: number | null;
  signal: number | null;
  /** µs since the epoch. */
  timestampUs: number | null;
  comm: string | null;
  hostname: string | null;
}

/** No attribute of systemd's is longer (a path of PATH_MAX). */
const MAX_VALUE_BYTES = 4096;

/** The `user.coredump.*` attributes in `getfattr -d -e hex` output; every value bounded and checked. */
export function parseCoredumpAttributes(output: string): CoredumpAttributes {
  const values = new Map<string, string>();
  for (const line of output.split("\n")) {
    const match = /^user\.coredump\.([a-z_]{1,20})=0x([0-9a-f]*)$/.exec(line.trim());
    if (!match || match[2]!.length > MAX_VALUE_BYTES * 2) continue;
    const text = Buffer.from(match[2]!, "hex").toString("utf8").replace(/\0+$/, "");
    // A value is the dump's word: one with a control character is not taken.
    if (/[\u0000-\u001f\u007f]/.test(text)) continue;
    values.set(match[1]!, text);
  }
  const number = (key: string): number | null => {
    const value = values.get(key);
    return value !== undefined && /^\d{1,20}$/.test(value) ? Number(value) : null;
  };
  return {
    exe: values.get("exe") ?? null,
    pid: number("pid"),
    uid: number("uid"),
    signal: number("signal"),
    timestampUs: number("timestamp"),
    comm: values.get("comm") ?? null,
    hostname: values.get("hostname") ?? null,
  };
}

/** One crash `coredumpctl --json=short list` reports. */
export interface JournalCoredump {
  pid: number;
  exe: string | null;
  signal: number | null;
  timestampUs: number;
  /** "present", "missing", "none", "journal", … as coredumpctl says. */
  corefile: string;
}

/** coredumpctl's JSON list, bounded; entries it cannot be read into are left out. */
export function parseCoredumpctlJson(text: string, maxEntries = 10_000): JournalCoredump[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const entries: JournalCoredump[] = [];
  for (const entry of parsed.slice(0, maxEntries)) {
    if (typeof entry !== "object" || entry === null) continue;
    const { pid, exe, sig, time, corefile } = entry as Record<string, unknown>;
    if (typeof pid !== "number" || typeof time !== "number") continue;
    entries.push({
      pid,
      exe: typeof exe === "string" && exe.length <= MAX_VALUE_BYTES ? exe : null,
      signal: typeof sig === "number" ? sig : null,
      timestampUs: time,
      corefile: typeof corefile === "string" ? corefile.slice(0, 40) : "unknown",
    });
  }
  return entries;
}
