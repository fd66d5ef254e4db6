import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { track } from "./cleanup.js";

export interface ReceivedWebhook {
  /** The path the POST went to (tests give each webhook its own). */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The raw body, exactly as sent: signatures are over these bytes. */
  readonly body: string;
  readonly receivedAt: number;
}

/** How the receiver answers a request: a status (200 by default), after an optional delay, or never. */
export type Answer = { status?: number; delayMs?: number; hang?: boolean; headers?: Record<string, string> };

/**
 * A webhook receiver on 127.0.0.1 that records every request. `answer` decides the response per request
 * (so a test can fail the first attempts, be slow, or never answer). Tracked: closed when the file ends.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** Requests open at once, per path: now, and the most seen. */
  private readonly open = new Map<string, number>();
  readonly maxOpen = new Map<string, number>();
  answer: (request: ReceivedWebhook) => Answer = () => ({ status: 200 });
  private readonly server: Server;
  private readonly hanging = new Set<ServerResponse>();
  private untrack: (() => void) | undefined;
  url = "";

  private constructor() {
    this.server = createServer((request, response) => {
      const path = request.url ?? "/";
      const now = (this.open.get(path) ?? 0) + 1;
      this.open.set(path, now);
      this.maxOpen.set(path, Math.max(now, this.maxOpen.get(path) ?? 0));
      response.on("close", () => this.open.set(path, (this.open.get(path) ?? 1) - 1));
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const received: ReceivedWebhook = {
          path: request.url ?? "/",
          headers: request.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          receivedAt: Date.now(),
        };
        this.received.push(received);
        const answer = this.answer(received);
        if (answer.hang) {
          this.hanging.add(response);
          response.on("close", () => this.hanging.delete(response));
          return;
        }
        const send = () => {
          response.writeHead(answer.status ?? 200, { "content-type": "text/plain", ...(answer.headers ?? {}) });
          response.end("ok");
        };
        if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
      });
    });
  }

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    receiver.untrack = track({ label: "webhook receiver", dispose: () => receiver.close() });
    await new Promise<void>((resolve) => receiver.server.listen(0, "127.0.0.1", resolve));
    receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
    return receiver;
  }

  /** What arrived at one path, in arrival order. */
  at(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.untrack?.();
  }
}
