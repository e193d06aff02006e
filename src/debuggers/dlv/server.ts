/**
 * Starting Delve's DAP server: `dlv dap --listen=127.0.0.1:0` picks a free port and prints it
 * (`DAP server listening at: 127.0.0.1:40191`); the client connects to it over TCP. Delve is spawned
 * through `process.ts`, so it is tracked in `live.ts` and ended with dumpdbg.
 */
import { connect, type Socket } from "node:net";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { DapClient } from "../dap.js";
import { DebuggerMissing, SessionDead } from "../errors.js";
import { spawnDebugger, type DebuggerProcess } from "../process.js";

/** How long Delve gets to print its port and accept the connection. */
const START_TIMEOUT_MS = 15_000;
const LISTENING = /DAP server listening at: ([\d.]+):(\d+)/;

export interface DelveServer {
  proc: DebuggerProcess;
  socket: Socket;
  client: DapClient;
}

export async function startDelve(binary: string, onEvent: (event: DebugProtocol.Event) => void): Promise<DelveServer> {
  let said = "";
  let listening: (where: { host: string; port: number }) => void = () => undefined;
  const where = new Promise<{ host: string; port: number }>((resolve) => (listening = resolve));
  const proc = await spawnDebugger(binary, ["dap", "--listen=127.0.0.1:0"], {
    onLine: (line) => {
      const found = LISTENING.exec(line);
      if (found?.[1] && found[2]) listening({ host: found[1], port: Number(found[2]) });
    },
    onStderr: (text) => {
      said = (said + text).slice(-2000);
    },
  });
  const gone = proc.exited.then((how) => {
    throw new DebuggerMissing(`${binary} ${how} before its DAP server listened${said.trim() ? `: ${said.trim().split("\n").pop()}` : ""}`);
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DebuggerMissing(`${binary} did not start a DAP server within ${START_TIMEOUT_MS / 1000} s (is it Delve?)`)), START_TIMEOUT_MS);
  });
  try {
    const { host, port } = await Promise.race([where, gone, late]);
    const socket = await Promise.race([connected(host, port), gone, late]);
    const client = new DapClient({
      write: (bytes) => {
        if (socket.destroyed) return false;
        socket.write(bytes);
        return true;
      },
      onEvent,
      onBroken: () => proc.kill(),
    });
    socket.on("data", (chunk: Buffer) => client.receive(chunk));
    // A reset connection is noticed as its close.
    socket.on("error", () => undefined);
    socket.on("close", () => client.close(new SessionDead(`${binary}'s DAP connection closed`)));
    void proc.exited.then((how) => {
      client.close(new SessionDead(`${binary} ${how}`));
      socket.destroy();
    });
    return { proc, socket, client };
  } catch (error) {
    proc.kill();
    throw error;
  } finally {
    clearTimeout(timer);
    gone.catch(() => undefined);
  }
}

function connected(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    socket.once("connect", () => resolve(socket));
    socket.once("error", (error) => reject(new DebuggerMissing(`cannot connect to Delve's DAP server at ${host}:${port}: ${error.message}`)));
  });
}
