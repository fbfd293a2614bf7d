/**
 * A scripted HTTP server on loopback, for what the local stack cannot be made to do on demand: answer 503
 * with `Retry-After`, answer slowly, answer a gateway's plain text. Each request takes the next answer of
 * the script (the last one repeats) and is recorded.
 */

import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering (to trip the client's timeout). */
  delayMs?: number;
}

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ScriptedServer {
  url: string;
  received: Received[];
  close: () => Promise<void>;
}

export async function scriptedServer(script: ScriptedAnswer[]): Promise<ScriptedServer> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const answer = script[Math.min(received.length, script.length) - 1]!;
      const text = typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body ?? {});
      const send = () => {
        if (response.destroyed) return;
        const type = typeof answer.body === "string" ? "text/plain" : "application/json";
        response.writeHead(answer.status, { "content-type": type, ...answer.headers });
        response.end(answer.status === 204 ? undefined : text);
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
