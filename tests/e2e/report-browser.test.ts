/**
 * The HTML report opened from disk in a real headless Chromium, driven over the DevTools protocol
 * through a pipe (no WebSocket, no new dependency). The report carries planted scripts, images and
 * links that point at a local HTTP server: nothing may run, load, or reach that server.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeReports, type ReportDocument } from "../../src/report/index.js";

const CHROMIUM = "/usr/bin/chromium";
// CI installs Chromium (.ci/run), so there a missing browser fails the test instead of skipping it.
const runnable = existsSync(CHROMIUM) || Boolean(process.env.CI);
const title = runnable
  ? "HTML report in headless Chromium"
  : "HTML report in headless Chromium (skipped: /usr/bin/chromium is missing; apt-get install -y chromium)";

const SECTIONS = ["Summary", "Crash", "Root cause", "Recommendations", "Hypotheses", "Evidence", "Critique", "Technical details", "Usage"];
const VERDICT = "Null dereference in parse_request (server.c:42)";

interface CdpEvent {
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

/** Chrome's DevTools protocol over --remote-debugging-pipe: NUL-terminated JSON on fds 3 (in) and 4 (out). */
class DevTools {
  readonly events: CdpEvent[] = [];
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly waiters = new Set<(e: CdpEvent) => void>();
  private buffer = "";

  constructor(
    private readonly input: Writable,
    output: Readable,
  ) {
    output.setEncoding("utf8");
    output.on("data", (chunk: string) => {
      this.buffer += chunk;
      for (let end = this.buffer.indexOf("\0"); end >= 0; end = this.buffer.indexOf("\0")) {
        this.dispatch(JSON.parse(this.buffer.slice(0, end)));
        this.buffer = this.buffer.slice(end + 1);
      }
    });
  }

  send<T = Record<string, unknown>>(method: string, params: object = {}, sessionId?: string): Promise<T> {
    const id = ++this.nextId;
    return withTimeout(
      method,
      new Promise<T>((resolve, reject) => {
        this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        this.input.write(`${JSON.stringify({ id, method, params, sessionId })}\0`);
      }),
    );
  }

  waitFor(method: string): Promise<CdpEvent> {
    return withTimeout(
      method,
      new Promise((resolve) => {
        const waiter = (event: CdpEvent) => {
          if (event.method !== method) return;
          this.waiters.delete(waiter);
          resolve(event);
        };
        this.waiters.add(waiter);
      }),
    );
  }

  private dispatch(message: { id?: number; result?: unknown; error?: { message: string } } & Partial<CdpEvent>): void {
    if (message.id !== undefined) {
      const call = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) call?.reject(new Error(message.error.message));
      else call?.resolve(message.result);
      return;
    }
    const event = { method: message.method ?? "", params: message.params ?? {}, sessionId: message.sessionId };
    this.events.push(event);
    for (const waiter of [...this.waiters]) waiter(event);
  }
}

function withTimeout<T>(what: string, promise: Promise<T>, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Chromium: no answer to ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A report whose dump and model strings try every way in: scripts, handlers, images, links, Markdown. */
function hostileReport(origin: string): ReportDocument {
  const script = `<script>document.title="PWNED";fetch("${origin}/script")</script>`;
  const image = `<img src="${origin}/img" onerror="document.title='PWNED'">`;
  const markdown = `[click](javascript:document.title='PWNED') ![x](${origin}/md-img) <${origin}/autolink> ${origin}/bare www.example.com`;
  const markup = `<iframe src="${origin}/frame"></iframe><link rel="stylesheet" href="${origin}/css"><style>@import url(${origin}/import);</style>`;
  return {
    report: {
      schemaVersion: 1,
      session: {
        id: "browser-test",
        dump: `core ${image}`,
        executable: "/opt/server/bin/server",
        debugger: "gdb 13.1",
        startedAt: "2025-03-01T10:15:00.000Z",
        finishedAt: "2025-03-01T10:15:41.250Z",
      },
      issue: `crashes on disconnect ${markdown}`,
      crash: {
        kind: "null-dereference",
        signal: "SIGSEGV",
        signalCode: "SEGV_MAPERR",
        faultAddress: "0x8",
        access: "read",
        message: `${script}${markup}`,
        thread: { id: 1, lwp: 4242, name: image },
        culprit: { function: "parse_request", file: "/src/server.c", line: 42, column: null, frame: 0, module: "/opt/server/bin/server", language: null }, runtime: null,
        origin: { type: "fault", sender: null, evidence: "the signal record says SIGSEGV SEGV_MAPERR, the kernel's code for a fault of the instruction at the pc" },
        exploitability: { rating: "probably-not-exploitable", reasons: ["a read near NULL (0x8): the first page is never mapped"] },
        annotations: null,
        cut: null,
        signature: "null-dereference | parse_request | handle_client | main",
        deadlock: null,
      },
      hypotheses: [
        { id: "H1", statement: `conn is NULL ${script}`, status: "confirmed", evidenceIds: ["e1"] },
        { id: "H2", statement: `heap corruption ${markdown}`, status: "rejected", evidenceIds: ["e2"] },
      ],
      conclusion: {
        summary: `parse_request dereferenced a NULL conn. ${image}`,
        rootCause: `The disconnect path frees conn but leaves it in the table.\n\n${markdown}\n\n# Injected heading\n\n${markup}`,
        confidence: 0.85,
        recommendations: [`Clear the table entry before freeing conn ${image}`],
      },
      critique: { rounds: [{ round: 1, issues: [`H2 needs heap checks ${script}`] }], unresolved: [markdown] },
      followUpQuestions: [markup],
      evidence: [
        { id: "e1", command: `bt ${image}`, summary: `culprit parse_request ${script}`, bytes: 512, path: null },
        { id: "e2", command: "info proc mappings", summary: markdown, bytes: 90_000, path: "/tmp/sessions/browser-test/evidence/e2.txt" },
      ],
      usage: { llmCalls: 4, local: { inputTokens: 1000, outputTokens: 200 }, cloud: { inputTokens: 3000, outputTokens: 600 } },
      timings: { totalMs: 41_250, debuggerMs: 3100, llmMs: 36_900 },
    },
    details: {
      frames: [
        { level: 0, function: `parse_request|${image}`, file: "/src/server.c", line: 42, module: "/opt/server/bin/server" },
        { level: 1, function: "handle_client", file: "/src/server.c", line: 77, module: "/opt/server/bin/server" },
      ],
      registers: [{ name: "rip", value: "0x555555555139" }],
      threads: [{ id: 1, name: "server", function: "parse_request", state: script }],
      modules: [{ path: `/opt/server/bin/server${markup}`, from: "0x555555554000", to: "0x555555556000" }],
      evidenceExcerpts: { e1: `#0 parse_request (conn=0x0) at server.c:42\n\`\`\`\n${script}\n${image}`, e2: markup },
      chat: [{ question: markdown, answer: `Yes. ${script}`, evidenceIds: ["e1"] }],
    },
  };
}

describe.skipIf(!runnable)(title, () => {
  let dir: string;
  let server: Server;
  let hits: string[];
  let chromium: ChildProcess;
  let devtools: DevTools;
  let session: string;
  let reportUrl: string;

  const evaluate = async <T>(expression: string): Promise<T> => {
    const { result, exceptionDetails } = await devtools.send<{ result: { value: T }; exceptionDetails?: unknown }>(
      "Runtime.evaluate",
      { expression, returnByValue: true },
      session,
    );
    if (exceptionDetails) throw new Error(`evaluating ${expression}: ${JSON.stringify(exceptionDetails)}`);
    return result.value;
  };

  const screenshot = async (name: string): Promise<Buffer> => {
    const { data } = await devtools.send<{ data: string }>("Page.captureScreenshot", { format: "png" }, session);
    const png = Buffer.from(data, "base64");
    await writeFile(path.join(dir, name), png);
    return png;
  };

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
    dir = await mkdtemp(path.join(tmpdir(), "dumpdbg-browser-"));
    hits = [];
    server = createServer((request, response) => {
      hits.push(request.url ?? "");
      response.end("PWNED");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const [written] = await writeReports(hostileReport(origin), { outDir: path.join(dir, "reports"), formats: ["html"] });
    reportUrl = pathToFileURL(written!.file).href;

    chromium = spawn(
      CHROMIUM,
      [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        `--user-data-dir=${path.join(dir, "profile")}`,
        "--remote-debugging-pipe",
      ],
      { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] },
    );
    devtools = new DevTools(chromium.stdio[3] as Writable, chromium.stdio[4] as Readable);

    const { targetId } = await devtools.send<{ targetId: string }>("Target.createTarget", { url: "about:blank" });
    ({ sessionId: session } = await devtools.send<{ sessionId: string }>("Target.attachToTarget", { targetId, flatten: true }));
    for (const domain of ["Network", "Runtime", "Log", "Page"]) await devtools.send(`${domain}.enable`, {}, session);
    await devtools.send("Emulation.setDeviceMetricsOverride", { width: 1200, height: 1600, deviceScaleFactor: 1, mobile: false }, session);
    const loaded = devtools.waitFor("Page.loadEventFired");
    await devtools.send("Page.navigate", { url: reportUrl }, session);
    await loaded;
  });

  afterAll(async () => {
    if (chromium && chromium.exitCode === null) {
      const exited = new Promise((resolve) => chromium.once("exit", resolve));
      await devtools.send("Browser.close").catch(() => chromium.kill("SIGKILL"));
      await withTimeout("exit", exited, 10_000).catch(() => chromium.kill("SIGKILL"));
    }
    await new Promise((resolve) => server?.close(resolve));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("shows the verdict and the key sections", async () => {
    expect(await evaluate("document.querySelector('h1').textContent")).toBe(VERDICT);
    const visible = await evaluate<string[]>(
      `[...document.querySelectorAll('h2')].filter((h) => h.checkVisibility() && h.getBoundingClientRect().height > 0).map((h) => h.textContent)`,
    );
    expect(visible).toEqual(expect.arrayContaining(SECTIONS));
  });

  it("runs nothing that was planted and shows it as text", async () => {
    expect(await evaluate("document.title")).toBe(`${VERDICT} · dumpdbg`);
    expect(await evaluate("document.querySelectorAll('script, img, iframe, link, object, embed, style:not(head > style)').length")).toBe(0);
    expect(await evaluate("[...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length")).toBe(0);
    const hrefs = await evaluate<string[]>("[...document.querySelectorAll('a[href]')].map((a) => a.getAttribute('href'))");
    for (const href of hrefs) expect(href).toMatch(/^(#[\w-]+|\.\.\/[\w./-]+)$/);
    expect(await evaluate("document.body.textContent.includes('<script>document.title=\"PWNED\"')")).toBe(true);
    expect(await evaluate("[...document.querySelectorAll('h1, h2, h3')].some((h) => h.textContent.includes('Injected'))")).toBe(false);
  });

  it("screenshots legibly in light and dark mode", async () => {
    const light = await screenshot("light.png");
    const lightBackground = await evaluate<string>("getComputedStyle(document.body).backgroundColor");
    await devtools.send("Emulation.setEmulatedMedia", { features: [{ name: "prefers-color-scheme", value: "dark" }] }, session);
    const dark = await screenshot("dark.png");
    const darkBackground = await evaluate<string>("getComputedStyle(document.body).backgroundColor");
    await devtools.send("Emulation.setEmulatedMedia", { features: [] }, session);

    for (const png of [light, dark]) {
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(png.length).toBeGreaterThan(20_000);
    }
    expect(lightBackground).toBe("rgb(255, 255, 255)");
    expect(darkBackground).toBe("rgb(13, 17, 23)");
  });

  it("folds evidence away on screen, opens it on a click, and prints it whole", async () => {
    const output = "document.querySelector('details pre')";
    expect(await evaluate(`${output}.checkVisibility()`)).toBe(false);
    await devtools.send("Emulation.setEmulatedMedia", { media: "print" }, session);
    expect(await evaluate(`${output}.checkVisibility()`)).toBe(true);
    const { data } = await devtools.send<{ data: string }>("Page.printToPDF", {}, session);
    expect(Buffer.from(data, "base64").subarray(0, 5).toString()).toBe("%PDF-");
    await devtools.send("Emulation.setEmulatedMedia", { media: "" }, session);

    await evaluate("document.querySelector('details summary').click()");
    expect(await evaluate(`${output}.checkVisibility()`)).toBe(true);
  });

  it("loaded nothing but the report itself and logged no errors", async () => {
    // Late loads would show up after the page's load event: give them a moment.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const requests = devtools.events
      .filter((e) => e.method === "Network.requestWillBeSent")
      .map((e) => (e.params.request as { url: string }).url);
    expect(requests).toEqual([reportUrl]);
    expect(hits).toEqual([]);

    const errors = devtools.events.filter(
      (e) =>
        e.method === "Runtime.exceptionThrown" ||
        (e.method === "Runtime.consoleAPICalled" && ["error", "assert"].includes(e.params.type as string)) ||
        (e.method === "Log.entryAdded" && (e.params.entry as { level: string }).level === "error"),
    );
    expect(errors).toEqual([]);
  });

  it("draws a deadlock's wait-for graph inline, readable at 1280 px, with planted names shown as text", async () => {
    const doc = hostileReport("http://127.0.0.1:9");
    const planted = '"]; evil [URL="http://127.0.0.1:9/x"]; x [label="<script>';
    doc.report.crash = {
      ...doc.report.crash,
      kind: "deadlock",
      signal: null,
      signalCode: null,
      faultAddress: null,
      access: null,
      message: null,
      culprit: { function: "transfer_funds", file: "/src/bank.c", line: 25, column: null, frame: 4, module: null, language: null }, runtime: null,
      signature: "deadlock | audit_flush | transfer_funds",
      deadlock: {
        cycle: [
          { thread: 2, function: "transfer_funds", file: "/src/bank.c", line: 25, lock: "0x5555555580a0", lockName: "audit_log", heldByThread: 3 },
          { thread: 3, function: "audit_flush", file: "/src/audit.c", line: 61, lock: "0x5555555580e0", lockName: planted, heldByThread: 2 },
        ],
      },
    };
    const [written] = await writeReports(doc, { outDir: path.join(dir, "deadlock"), formats: ["html"] });
    await devtools.send("Emulation.setDeviceMetricsOverride", { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false }, session);
    const loaded = devtools.waitFor("Page.loadEventFired");
    await devtools.send("Page.navigate", { url: pathToFileURL(written!.file).href }, session);
    await loaded;
    expect(await evaluate("document.querySelector('h1').textContent")).toBe(`Deadlock in transfer_funds and audit_flush over audit_log and ${planted} (threads 2 and 3)`);
    const box = await evaluate<{ width: number; height: number }>("(() => { const r = document.querySelector('figure.picture svg').getBoundingClientRect(); return { width: r.width, height: r.height }; })()");
    expect(box.width).toBeGreaterThan(300);
    expect(box.width).toBeLessThanOrEqual(1280);
    expect(box.height).toBeGreaterThan(150);
    const labels = await evaluate<string[]>("[...document.querySelectorAll('figure.picture svg text')].map((t) => t.textContent)");
    expect(labels).toEqual(expect.arrayContaining(["thread 2", "transfer_funds", "audit_log", "waits for", "held by"]));
    // The planted label is text in the picture: no element, link or script came of it.
    expect(labels.some((label) => label.startsWith('"]; evil'))).toBe(true);
    expect(await evaluate("document.querySelectorAll('svg a, svg script, svg foreignObject, script').length")).toBe(0);
    expect(await evaluate("document.querySelector('figure.picture figcaption').textContent")).toMatch(/^Who waits for whom/);
    await screenshot("deadlock-1280.png");
  });
});
