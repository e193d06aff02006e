/** DAP framing and request/response correlation, without an adapter. */
import type { DebugProtocol } from "@vscode/debugprotocol";
import { describe, expect, it } from "vitest";
import { CommandTimeout, SessionDead } from "../../src/debuggers/errors.js";
import { DapClient, DapFramingError, DapReader, encodeMessage } from "../../src/debuggers/dap.js";

const response = (requestSeq: number, body: object = {}): DebugProtocol.Response => ({
  seq: 0,
  type: "response",
  request_seq: requestSeq,
  command: "evaluate",
  success: true,
  body,
});
const event = (name: string, body: object): DebugProtocol.Event => ({ seq: 0, type: "event", event: name, body });
const frame = (text: string) => Buffer.from(`Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);

describe("DapReader", () => {
  it("reads a message that arrives one byte at a time", () => {
    const reader = new DapReader();
    const bytes = encodeMessage(response(1, { result: "(lldb) bt\n* thread #1\n" }));
    const messages = [...bytes].flatMap((byte) => reader.push(Buffer.from([byte])));
    expect(messages).toEqual([response(1, { result: "(lldb) bt\n* thread #1\n" })]);
  });

  it("reads several messages from one chunk, in order", () => {
    const reader = new DapReader();
    const chunk = Buffer.concat([encodeMessage(response(1)), encodeMessage(event("stopped", { reason: "exception" })), encodeMessage(response(2))]);
    expect(reader.push(chunk)).toEqual([response(1), event("stopped", { reason: "exception" }), response(2)]);
  });

  it("keeps the start of the next message until the rest of it arrives", () => {
    const reader = new DapReader();
    const second = encodeMessage(response(2, { result: "x".repeat(5000) }));
    expect(reader.push(Buffer.concat([encodeMessage(response(1)), second.subarray(0, 10)]))).toEqual([response(1)]);
    expect(reader.push(second.subarray(10, 3000))).toEqual([]);
    expect(reader.push(second.subarray(3000))).toEqual([response(2, { result: "x".repeat(5000) })]);
  });

  it("counts Content-Length in bytes, and joins a character split between chunks", () => {
    const reader = new DapReader();
    const bytes = encodeMessage(event("output", { output: "‘naïve’ → ok\n" }));
    const cut = bytes.indexOf(Buffer.from("→")) + 1;
    expect(reader.push(bytes.subarray(0, cut))).toEqual([]);
    expect(reader.push(bytes.subarray(cut))).toEqual([event("output", { output: "‘naïve’ → ok\n" })]);
  });

  it("accepts other header fields beside Content-Length", () => {
    const reader = new DapReader();
    const body = JSON.stringify(response(1));
    const chunk = Buffer.from(`Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    expect(reader.push(chunk)).toEqual([response(1)]);
  });

  it("refuses a Content-Length over the limit as soon as the header is read", () => {
    expect(() => new DapReader().push(Buffer.from("Content-Length: 99999999999999\r\n\r\n{"))).toThrow(DapFramingError);
    expect(() => new DapReader(100).push(Buffer.from("Content-Length: 101\r\n\r\n"))).toThrow(/101 bytes is over the limit of 100/);
    expect(new DapReader(100).push(frame(JSON.stringify({ type: "event", event: "x".repeat(60) })))).toHaveLength(1);
  });

  it("refuses a Content-Length that is not a number, or missing", () => {
    expect(() => new DapReader().push(Buffer.from("Content-Length: -1\r\n\r\n"))).toThrow(/without a valid Content-Length/);
    expect(() => new DapReader().push(Buffer.from("Content-Length: 1e9\r\n\r\n"))).toThrow(DapFramingError);
    expect(() => new DapReader().push(Buffer.from("Content-Type: text/plain\r\n\r\n{}"))).toThrow(/without a valid Content-Length/);
  });

  it("refuses output that never reaches a header's end, like lldb's own prompt", () => {
    const reader = new DapReader();
    expect(reader.push(Buffer.from("(lldb) "))).toEqual([]);
    expect(() => reader.push(Buffer.from("(lldb) ".repeat(200)))).toThrow(/no message header in the first 1024 bytes/);
  });

  it("refuses a body that is not a protocol message", () => {
    expect(() => new DapReader().push(frame("{not json"))).toThrow(/not JSON/);
    expect(() => new DapReader().push(frame("[1,2]"))).toThrow(/not a protocol message/);
  });
});

describe("DapClient", () => {
  function connected(write: (bytes: Buffer) => boolean = () => true) {
    const sent: DebugProtocol.Request[] = [];
    const events: DebugProtocol.Event[] = [];
    const broken: Error[] = [];
    const client = new DapClient({
      write: (bytes) => {
        sent.push(...(new DapReader().push(bytes) as DebugProtocol.Request[]));
        return write(bytes);
      },
      onEvent: (e) => events.push(e),
      onBroken: (error) => broken.push(error),
    });
    return { client, sent, events, broken };
  }

  it("numbers requests and answers each with the response that names it, in any order", async () => {
    const { client, sent } = connected();
    const first = client.request("evaluate", { expression: "`bt", context: "repl" }, 1000);
    const second = client.request("threads", undefined, 1000);
    expect(sent).toEqual([
      { seq: 1, type: "request", command: "evaluate", arguments: { expression: "`bt", context: "repl" } },
      { seq: 2, type: "request", command: "threads" },
    ]);
    client.receive(Buffer.concat([encodeMessage(response(2, { threads: [] })), encodeMessage(response(1, { result: "bt" }))]));
    expect((await first).body).toEqual({ result: "bt" });
    expect((await second).body).toEqual({ threads: [] });
  });

  it("passes events on and ignores responses nobody waits for", () => {
    const { client, events } = connected();
    client.receive(Buffer.concat([encodeMessage(response(7)), encodeMessage(event("output", { category: "stderr", output: "warning: x\n" }))]));
    expect(events).toEqual([event("output", { category: "stderr", output: "warning: x\n" })]);
  });

  it("rejects a request past its timeout with CommandTimeout", async () => {
    const { client } = connected();
    await expect(client.request("evaluate", { expression: "`bt all", context: "repl" }, 5)).rejects.toBeInstanceOf(CommandTimeout);
  });

  it("fails what is pending, and what comes later, once closed", async () => {
    const { client } = connected();
    const pending = client.request("threads", undefined, 1000);
    client.close(new SessionDead("lldb-vscode-16 killed by SIGKILL"));
    await expect(pending).rejects.toThrow("lldb-vscode-16 killed by SIGKILL");
    await expect(client.request("threads", undefined, 1000)).rejects.toBeInstanceOf(SessionDead);
  });

  it("fails everything pending when the adapter breaks the framing, and says so", async () => {
    const { client, broken } = connected();
    const pending = client.request("threads", undefined, 1000);
    client.receive(Buffer.from("Content-Length: 999999999999\r\n\r\n"));
    await expect(pending).rejects.toThrow(/broke the protocol: a message of 999999999999 bytes is over the limit/);
    expect(broken).toHaveLength(1);
    expect(broken[0]).toBeInstanceOf(DapFramingError);
  });

  it("rejects a request it cannot write with SessionDead", async () => {
    const { client } = connected(() => false);
    await expect(client.request("threads", undefined, 1000)).rejects.toBeInstanceOf(SessionDead);
  });
});
