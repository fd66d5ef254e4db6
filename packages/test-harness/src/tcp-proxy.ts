import { once } from "node:events";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { track } from "./cleanup.js";

/**
 * A TCP proxy on loopback that tests can cut and restore, to take a database away from a server
 * and give it back without touching the database itself.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private open = true;
  private untrack: (() => void) | undefined;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<number> {
    this.untrack = track({ label: `TCP proxy to ${this.targetHost}:${this.targetPort}`, dispose: () => this.stop() });
    this.server = createServer((client) => {
      if (!this.open) {
        client.destroy();
        return;
      }
      const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
      this.sockets.add(client);
      this.sockets.add(upstream);
      const close = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on("error", close).on("close", close);
      upstream.on("error", close).on("close", close);
      client.pipe(upstream).pipe(client);
    });
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    const address = this.server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    this.port = address.port;
    return this.port;
  }

  /** Drops every open connection and refuses new ones until `restore`. */
  cut(): void {
    this.open = false;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.open = true;
  }

  async stop(): Promise<void> {
    this.cut();
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
    this.untrack?.();
  }
}
