/**
 * Reading gdb's MI stream from a log file instead of its stdout. In MI mode gdb writes stdout one
 * byte per write(2), and a pipe wakes the reader for each: that costs more than the commands. With
 * `set logging redirect on` the same stream goes to a file, written a line at a time, which we
 * tail here (inotify through fs.watch, with a slow poll as a safety net).
 */
import { closeSync, fstatSync, openSync, readSync, watch, writeFileSync, type FSWatcher } from "node:fs";
import { StringDecoder } from "node:string_decoder";

const SAFETY_POLL_MS = 25;

export class MiLogTail {
  private fd: number;
  private offset = 0;
  private partial = "";
  /** Keeps a UTF-8 character split across two reads whole. */
  private decoder = new StringDecoder("utf8");
  private watcher: FSWatcher | null;
  private poll: NodeJS.Timeout;

  constructor(
    readonly file: string,
    private readonly onLine: (line: string) => void,
  ) {
    writeFileSync(file, "", { mode: 0o600 });
    this.fd = openSync(file, "r");
    this.watcher = watch(file, () => this.drain());
    this.watcher.on("error", () => undefined);
    this.poll = setInterval(() => this.drain(), SAFETY_POLL_MS);
    this.poll.unref();
  }

  /** How much of the log has been read: what gdb has written to it so far, give or take its last write. */
  get length(): number {
    return this.offset;
  }

  /** Reads what gdb has appended and hands over every complete line. */
  drain(): void {
    if (this.fd < 0) return;
    const size = fstatSync(this.fd).size;
    if (size < this.offset) {
      // gdb truncated the file when it opened it for logging: start over.
      this.offset = 0;
      this.partial = "";
      this.decoder = new StringDecoder("utf8");
    }
    if (size === this.offset) return;
    const buffer = Buffer.alloc(size - this.offset);
    const read = readSync(this.fd, buffer, 0, buffer.length, this.offset);
    this.offset += read;
    const text = this.partial + this.decoder.write(buffer.subarray(0, read));
    const lines = text.split("\n");
    this.partial = lines.pop() ?? "";
    for (const line of lines) this.onLine(line);
  }

  close(): void {
    if (this.fd < 0) return;
    clearInterval(this.poll);
    this.watcher?.close();
    this.watcher = null;
    closeSync(this.fd);
    this.fd = -1;
  }
}
