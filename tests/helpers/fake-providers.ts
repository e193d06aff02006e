/**
 * Local HTTP servers that speak the OpenAI, Ollama and Anthropic protocols, so tests drive the real
 * LangChain clients end to end. Each answers from a script: a queue of replies, or a function of
 * the request (to answer by the structured-output name a request asks for, see `requestedSchema`).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The JSON body as the client sent it, `null` for a request without one; loosely typed, since
   * tests assert on each protocol's own fields. */
  body: any;
}

export interface ReplyUsage {
  inputTokens: number;
  outputTokens: number;
}

export type FakeReply =
  /** A structured answer: a call of the requested tool (OpenAI, Anthropic) or JSON content (Ollama, or no tool asked). */
  | { json: unknown; usage?: ReplyUsage }
  /** Plain text content. */
  | { text: string; usage?: ReplyUsage }
  /** Malformed structured output: `raw` as the tool arguments (OpenAI) or content (Ollama); prose instead of a tool call (Anthropic). */
  | { raw: string; usage?: ReplyUsage }
  /** A call of a tool of this name, whatever was asked. */
  | { toolCall: { name: string; args: unknown }; usage?: ReplyUsage }
  /** An HTTP error in the provider's error format, with `retry-after-ms` when given. */
  | { status: number; retryAfterMs?: number; message?: string }
  /** No answer at all for this long, then the connection is dropped. */
  | { hangMs: number };

export type FakeScript = FakeReply[] | ((request: RecordedRequest, index: number) => FakeReply);

export interface FakeServer {
  /** What to configure: OPENAI_BASE_URL (with /v1), ANTHROPIC_BASE_URL, OLLAMA_HOST. */
  url: string;
  /** Every request received, in order, model calls and probes alike. */
  requests: RecordedRequest[];
  /** Hanging requests whose client gave up and closed the connection, as a timeout must. */
  abandoned(): number;
  close(): Promise<void>;
}

const NO_USAGE: ReplyUsage = { inputTokens: 0, outputTokens: 0 };

/** `POST /v1/chat/completions`, non-streamed; tool calls for `tools`, content otherwise. */
export function startFakeOpenAI(script: FakeScript): Promise<FakeServer> {
  return serve(script, "/v1", (request) => request.method === "POST" && request.path === "/v1/chat/completions", (request, reply, res) => {
    if ("status" in reply) return sendError(res, reply, { error: { message: reply.message ?? `fake error ${reply.status}`, type: "server_error", code: null } });
    if (request.body?.stream === true) return sendJson(res, 400, { error: { message: "fake OpenAI: streaming is not scripted" } });
    const tool: string | undefined = request.body?.tool_choice?.function?.name ?? request.body?.tools?.[0]?.function?.name;
    const toolCall = (name: string, args: string) => ({ id: "call_fake", type: "function", function: { name, arguments: args } });
    let message: Record<string, unknown>;
    if ("toolCall" in reply) message = { content: null, tool_calls: [toolCall(reply.toolCall.name, JSON.stringify(reply.toolCall.args))] };
    else if ("json" in reply && tool) message = { content: null, tool_calls: [toolCall(tool, JSON.stringify(reply.json))] };
    else if ("raw" in reply && tool) message = { content: null, tool_calls: [toolCall(tool, reply.raw)] };
    else message = { content: contentOf(reply) };
    const usage = reply.usage ?? NO_USAGE;
    sendJson(res, 200, {
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: request.body?.model,
      choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: message.tool_calls ? "tool_calls" : "stop" }],
      usage: { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens },
    });
  });
}

/**
 * `POST /api/chat` as an NDJSON stream (what ChatOllama asks for), and `GET /api/tags` listing
 * `models`. `listen: "0.0.0.0"` makes it reachable at this machine's other addresses, as a remote
 * Ollama would be.
 */
export function startFakeOllama(script: FakeScript, options: { models?: string[]; listen?: string } = {}): Promise<FakeServer> {
  const models = options.models ?? ["llama3.2:latest"];
  return serve(
    script,
    "",
    (request) => request.method === "POST" && request.path === "/api/chat",
    (request, reply, res) => {
      if ("status" in reply) return sendError(res, reply, { error: reply.message ?? `fake error ${reply.status}` });
      const message =
        "toolCall" in reply
          ? { role: "assistant", content: "", tool_calls: [{ function: { name: reply.toolCall.name, arguments: reply.toolCall.args } }] }
          : { role: "assistant", content: contentOf(reply) };
      const usage = reply.usage ?? NO_USAGE;
      const created_at = new Date().toISOString();
      const last = { model: request.body?.model, created_at, message: { role: "assistant", content: "" }, done: true, done_reason: "stop", prompt_eval_count: usage.inputTokens, eval_count: usage.outputTokens };
      if (request.body?.stream === false) return sendJson(res, 200, { ...last, message });
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.write(`${JSON.stringify({ model: request.body?.model, created_at, message, done: false })}\n`);
      res.end(`${JSON.stringify(last)}\n`);
    },
    (request, res) => {
      if (request.method !== "GET" || request.path !== "/api/tags") return false;
      sendJson(res, 200, { models: models.map((name) => ({ name, model: name, size: 1, digest: "fake", details: {} })) });
      return true;
    },
    options.listen,
  );
}

/** `POST /v1/messages`, non-streamed; `tool_use` for a requested tool, text otherwise. */
export function startFakeAnthropic(script: FakeScript): Promise<FakeServer> {
  return serve(script, "", (request) => request.method === "POST" && request.path === "/v1/messages", (request, reply, res) => {
    if ("status" in reply) {
      const type = reply.status === 429 ? "rate_limit_error" : reply.status === 401 ? "authentication_error" : reply.status >= 500 ? "api_error" : "invalid_request_error";
      return sendError(res, reply, { type: "error", error: { type, message: reply.message ?? `fake error ${reply.status}` } });
    }
    if (request.body?.stream === true) return sendJson(res, 400, { type: "error", error: { type: "invalid_request_error", message: "fake Anthropic: streaming is not scripted" } });
    const tool: string | undefined = request.body?.tool_choice?.name ?? request.body?.tools?.[0]?.name;
    const toolUse = (name: string, input: unknown) => ({ type: "tool_use", id: "toolu_fake", name, input });
    let content: unknown[];
    if ("toolCall" in reply) content = [toolUse(reply.toolCall.name, reply.toolCall.args)];
    else if ("json" in reply && tool) content = [toolUse(tool, reply.json)];
    else content = [{ type: "text", text: contentOf(reply) }];
    const usage = reply.usage ?? NO_USAGE;
    sendJson(res, 200, {
      id: "msg_fake",
      type: "message",
      role: "assistant",
      model: request.body?.model,
      content,
      stop_reason: content.some((block) => (block as { type: string }).type === "tool_use") ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens },
    });
  });
}

/** The structured-output name a request asks for: the forced tool (OpenAI, Anthropic) or the schema's title (Ollama). */
export function requestedSchema(request: RecordedRequest): string | null {
  const body = request.body;
  return body?.tool_choice?.function?.name ?? body?.tool_choice?.name ?? body?.response_format?.json_schema?.name ?? body?.format?.title ?? null;
}

/** All the text a request sends to the model (system and messages), in any of the three protocols. */
export function promptText(request: RecordedRequest): string {
  const body = request.body ?? {};
  const text = (content: unknown): string =>
    typeof content === "string" ? content : Array.isArray(content) ? content.map((block: { text?: string }) => block.text ?? "").join("\n") : "";
  const parts = [text(body.system), ...(body.messages ?? []).map((message: { content: unknown }) => text(message.content))];
  return parts.filter(Boolean).join("\n");
}

type Scripted = Exclude<FakeReply, { hangMs: number }>;

async function serve(
  script: FakeScript,
  basePath: string,
  isModelCall: (request: RecordedRequest) => boolean,
  answer: (request: RecordedRequest, reply: Scripted, res: ServerResponse) => void,
  other: (request: RecordedRequest, res: ServerResponse) => boolean = () => false,
  listen = "127.0.0.1",
): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const hangs = new Set<NodeJS.Timeout>();
  let calls = 0;
  let abandoned = 0;
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const request: RecordedRequest = { method: req.method ?? "", path: (req.url ?? "").split("?")[0] ?? "", headers: req.headers, body: raw ? JSON.parse(raw) : null };
      requests.push(request);
      if (other(request, res)) return;
      if (!isModelCall(request)) return sendJson(res, 404, { error: `fake server: no route for ${request.method} ${request.path}` });
      const index = calls++;
      const reply = typeof script === "function" ? script(request, index) : script[index];
      if (reply === undefined) return sendJson(res, 500, { error: `fake server: script exhausted at request ${index + 1}` });
      if ("hangMs" in reply) {
        const timer = setTimeout(() => {
          hangs.delete(timer);
          res.destroy();
        }, reply.hangMs);
        hangs.add(timer);
        const gone = () => {
          if (!hangs.delete(timer)) return;
          clearTimeout(timer);
          abandoned += 1;
        };
        res.on("close", gone);
        // The client may have given up while the body was still being read: then "close" has passed.
        if (res.closed || req.destroyed) gone();
        return;
      }
      answer(request, reply, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, listen, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    requests,
    abandoned: () => abandoned,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of hangs) clearTimeout(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function contentOf(reply: Scripted): string {
  if ("json" in reply) return JSON.stringify(reply.json);
  if ("raw" in reply) return reply.raw;
  if ("text" in reply) return reply.text;
  return "";
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, reply: { status: number; retryAfterMs?: number }, body: unknown): void {
  sendJson(res, reply.status, body, reply.retryAfterMs === undefined ? {} : { "retry-after-ms": String(reply.retryAfterMs) });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}

/** The JSON schema of the tool a request asks the model to call (OpenAI's `parameters`, Anthropic's `input_schema`). */
export function requestedToolSchema(request: RecordedRequest): unknown {
  const body = request.body ?? {};
  const openai = body.tools?.find?.((t: { function?: { name?: string } }) => t.function?.name === (body.tool_choice?.function?.name ?? t.function?.name))?.function?.parameters;
  return openai ?? body.tools?.[0]?.input_schema ?? null;
}

/**
 * The smallest instance a JSON schema accepts: required properties only, empty arrays, the
 * shortest strings, the lowest numbers, the first enum value. What a weak model often amounts to:
 * an answer that parses and says nothing.
 */
export function smallestInstance(schema: unknown): unknown {
  const s = (schema ?? {}) as Record<string, unknown>;
  if (Array.isArray(s.enum)) return s.enum[0];
  if ("const" in s) return s.const;
  const anyOf = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(anyOf) && anyOf.length > 0) return smallestInstance(anyOf.find((o) => (o as { type?: string }).type === "null") ?? anyOf[0]);
  const type = Array.isArray(s.type) ? (s.type.includes("null") ? "null" : s.type[0]) : s.type;
  switch (type) {
    case "object": {
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      const required = (s.required ?? []) as string[];
      return Object.fromEntries(required.map((name) => [name, smallestInstance(properties[name])]));
    }
    case "array":
      return Array.from({ length: Number(s.minItems ?? 0) }, () => smallestInstance(s.items));
    case "string":
      return "x".repeat(Number(s.minLength ?? 0));
    case "number":
    case "integer":
      return Number(s.minimum ?? 0);
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      return null;
  }
}
