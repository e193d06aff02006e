/**
 * A client of the Debug Adapter Protocol: JSON messages framed by a `Content-Length` header over an
 * adapter's stdin and stdout (LLDB's) or a TCP socket (Delve's), requests answered by the response whose `request_seq` is their `seq`,
 * and events in between. The framing is read with a bounded buffer: a header that claims more than
 * the limit is an error, never an allocation. The protocol's types come from @vscode/debugprotocol.
 */
import type { DebugProtocol } from "@vscode/debugprotocol";
import { CommandTimeout, DebuggerError, SessionDead } from "./errors.js";

/** The adapter's output does not follow the protocol's framing; nothing after it can be trusted. */
export class DapFramingError extends DebuggerError {}

/** Headers are one or two short lines; anything longer is not DAP. */
const MAX_HEADER_BYTES = 1024;
/** Large enough for `bt all` over thousands of threads or a big memory dump, small enough to hold. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

const HEADER_END = Buffer.from("\r\n\r\n");

/** Splits the adapter's stdout into messages, whatever the chunks it arrives in. */
export class DapReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** The length of the body being read, once its header has been. */
  private bodyLength: number | null = null;

  constructor(private readonly maxMessageBytes = MAX_MESSAGE_BYTES) {}

  /** Takes the next bytes; returns the messages they complete. Throws DapFramingError. */
  push(chunk: Buffer): DebugProtocol.ProtocolMessage[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const messages: DebugProtocol.ProtocolMessage[] = [];
    for (;;) {
      if (this.bodyLength === null) {
        const bytes = this.joined();
        const end = bytes.indexOf(HEADER_END);
        if (end === -1 || end > MAX_HEADER_BYTES) {
          if (end !== -1 || bytes.length > MAX_HEADER_BYTES + HEADER_END.length) {
            throw new DapFramingError(`no message header in the first ${MAX_HEADER_BYTES} bytes`);
          }
          return messages;
        }
        this.bodyLength = this.contentLength(bytes.subarray(0, end).toString("latin1"));
        this.keep(bytes.subarray(end + HEADER_END.length));
      }
      // A large body arrives in many chunks: they are joined once, when all of it is here.
      if (this.buffered < this.bodyLength) return messages;
      const bytes = this.joined();
      const body = bytes.subarray(0, this.bodyLength);
      this.keep(bytes.subarray(this.bodyLength));
      this.bodyLength = null;
      messages.push(parseMessage(body));
    }
  }

  private contentLength(header: string): number {
    const lines = header.split("\r\n");
    const field = lines.find((line) => /^content-length:/i.test(line));
    const value = field?.slice(field.indexOf(":") + 1).trim();
    if (value === undefined || !/^\d{1,15}$/.test(value)) {
      throw new DapFramingError(`a message header without a valid Content-Length: ${JSON.stringify(header.slice(0, 80))}`);
    }
    const length = Number(value);
    if (length > this.maxMessageBytes) {
      throw new DapFramingError(`a message of ${length} bytes is over the limit of ${this.maxMessageBytes}`);
    }
    return length;
  }

  private joined(): Buffer {
    if (this.chunks.length !== 1) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0]!;
  }

  private keep(rest: Buffer): void {
    this.chunks = [rest];
    this.buffered = rest.length;
  }
}

function parseMessage(body: Buffer): DebugProtocol.ProtocolMessage {
  let message: unknown;
  try {
    message = JSON.parse(body.toString("utf8"));
  } catch (error) {
    throw new DapFramingError(`a message body that is not JSON: ${(error as Error).message}`);
  }
  if (typeof message !== "object" || message === null || typeof (message as { type?: unknown }).type !== "string") {
    throw new DapFramingError("a message that is not a protocol message (no type)");
  }
  return message as DebugProtocol.ProtocolMessage;
}

/** One message as it goes on the wire. */
export function encodeMessage(message: DebugProtocol.ProtocolMessage): Buffer {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "latin1"), body]);
}

/** The requests this client sends: their arguments and responses, as the protocol types them. */
export interface DapRequests {
  initialize: { arguments: DebugProtocol.InitializeRequestArguments; response: DebugProtocol.InitializeResponse };
  /** An adapter's attach takes arguments of its own (lldb's `program` and `coreFile`). */
  attach: { arguments: DebugProtocol.AttachRequestArguments & Record<string, unknown>; response: DebugProtocol.AttachResponse };
  /** Delve loads a core with a launch of its own arguments (`mode: "core"`, `program`, `coreFilePath`). */
  launch: { arguments: DebugProtocol.LaunchRequestArguments & Record<string, unknown>; response: DebugProtocol.LaunchResponse };
  configurationDone: { arguments: DebugProtocol.ConfigurationDoneArguments; response: DebugProtocol.ConfigurationDoneResponse };
  threads: { arguments: undefined; response: DebugProtocol.ThreadsResponse };
  evaluate: { arguments: DebugProtocol.EvaluateArguments; response: DebugProtocol.EvaluateResponse };
  stackTrace: { arguments: DebugProtocol.StackTraceArguments; response: DebugProtocol.StackTraceResponse };
  scopes: { arguments: DebugProtocol.ScopesArguments; response: DebugProtocol.ScopesResponse };
  variables: { arguments: DebugProtocol.VariablesArguments; response: DebugProtocol.VariablesResponse };
  disassemble: { arguments: DebugProtocol.DisassembleArguments; response: DebugProtocol.DisassembleResponse };
  disconnect: { arguments: DebugProtocol.DisconnectArguments; response: DebugProtocol.DisconnectResponse };
}

export interface DapClientOptions {
  /** Sends bytes to the adapter; false when its input is closed. */
  write(bytes: Buffer): boolean;
  onEvent(event: DebugProtocol.Event): void;
  /** The adapter broke the framing; the client has already failed everything pending. */
  onBroken(error: DapFramingError): void;
  maxMessageBytes?: number;
}

interface Pending {
  resolve(response: DebugProtocol.Response): void;
  reject(error: Error): void;
}

export class DapClient {
  private nextSeq = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly reader: DapReader;
  private closedBy: Error | null = null;

  constructor(private readonly options: DapClientOptions) {
    this.reader = new DapReader(options.maxMessageBytes);
  }

  /**
   * Sends a request and waits for its response, which may say `success: false` (the caller reads
   * it). Rejects with CommandTimeout past `timeoutMs`, with SessionDead once the adapter is gone.
   */
  request<C extends keyof DapRequests>(
    command: C,
    args: DapRequests[C]["arguments"],
    timeoutMs: number,
  ): Promise<DapRequests[C]["response"]> {
    if (this.closedBy) return Promise.reject(this.closedBy);
    const seq = this.nextSeq++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(seq);
        reject(new CommandTimeout(`${command} got no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(seq, {
        resolve: (response) => {
          clearTimeout(timer);
          resolve(response as DapRequests[C]["response"]);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      const request: DebugProtocol.Request = { seq, type: "request", command, ...(args === undefined ? {} : { arguments: args }) };
      if (!this.options.write(encodeMessage(request))) {
        this.pending.get(seq)?.reject(new SessionDead("the adapter's input pipe is closed"));
        this.pending.delete(seq);
      }
    });
  }

  /** Takes bytes from the adapter's stdout. */
  receive(chunk: Buffer): void {
    if (this.closedBy) return;
    let messages: DebugProtocol.ProtocolMessage[];
    try {
      messages = this.reader.push(chunk);
    } catch (error) {
      if (!(error instanceof DapFramingError)) throw error;
      this.close(new SessionDead(`the adapter broke the protocol: ${error.message}`));
      this.options.onBroken(error);
      return;
    }
    for (const message of messages) this.dispatch(message);
  }

  /** Whether a request sent is still to be answered. */
  get busy(): boolean {
    return this.pending.size > 0;
  }

  /** Fails every pending request, and every later one, with `reason`. */
  close(reason: Error): void {
    this.closedBy ??= reason;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const request of pending) request.reject(reason);
  }

  private dispatch(message: DebugProtocol.ProtocolMessage): void {
    if (message.type === "response") {
      const response = message as DebugProtocol.Response;
      const pending = this.pending.get(response.request_seq);
      if (!pending) return;
      this.pending.delete(response.request_seq);
      pending.resolve(response);
    } else if (message.type === "event") {
      this.options.onEvent(message as DebugProtocol.Event);
    }
    // Requests from the adapter (runInTerminal) are about launching programs: a dump has none.
  }
}
