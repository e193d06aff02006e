/** A real redis-server on a free local port, with nothing written to disk, for one test file. */
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";

export interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startRedis(dir: string): Promise<RedisServer> {
  const port = await freePort();
  const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start in 10 s: ${output}`)), 10_000);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot start redis-server (is it installed?): ${error.message}`));
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (/Ready to accept connections/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with code ${code}: ${output}`));
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
