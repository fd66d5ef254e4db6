import { Socket } from "node:net";
// pg-listen is CommonJS with an `exports.default`: under Node's ESM interop that is `.default.default`.
import * as pgListen from "pg-listen";
import type { ChangeFeed, FeedLogger } from "./change-feed.js";
import { CHANNEL } from "../../write-path/change-log.js";

/** Longer notifications are not ours: ours name a stream (a project id or "") and a version. */
const MAX_PAYLOAD_CHARS = 1024;

/**
 * The stream (and version) a notification names, or undefined when it is not one of ours. Any database login may
 * NOTIFY on the channel, so the payload is only ever a hint of where to look; what changed is read from
 * the change log, which needs table rights.
 */
export function readNotification(payload: unknown): { stream: string; version: number | undefined } | undefined {
  if (typeof payload !== "string" || payload.length > MAX_PAYLOAD_CHARS) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  const { stream, version } = (parsed ?? {}) as { stream?: unknown; version?: unknown };
  if (typeof stream !== "string" || stream.length > 256) return undefined;
  return { stream, version: Number.isSafeInteger(version) ? (version as number) : undefined };
}

/**
 * Listens for change notifications on one dedicated connection (pg-listen) and has the feed catch up
 * from the log. pg-listen reconnects with backoff for as long as it takes and probes the connection
 * every few seconds; after a reconnect the feed reconciles, because notifications sent while nobody
 * listened are only in the log. Nothing a notification says can change the snapshot by itself, and no
 * failure here ends the process: it leads to a reconcile instead.
 */
export class PostgresListener {
  private readonly subscriber: pgListen.Subscriber;
  private everConnected = false;
  private stopped = false;
  /** The listener's sockets, a reconnect attempt's included: stop cuts them, so none connects after it. */
  private readonly sockets = new Set<Socket>();

  constructor(
    connectionString: string,
    private readonly feed: ChangeFeed,
    private readonly logger: FeedLogger,
  ) {
    this.subscriber = pgListen.default.default(
      // pg-listen gives no way to cancel a reconnect attempt already under way: one whose connection is
      // accepted just after stop would open a session after the server closed. Owning the sockets lets stop
      // cut every attempt, and any attempt that starts later fails at once.
      { connectionString, connectionTimeoutMillis: 3000, stream: () => this.socket() },
      {
        paranoidChecking: 5000,
        // pg-listen's reconnect loop never looks at close(): throwing here, or from the "reconnect"
        // event below, is what ends it once stopped.
        retryInterval: (attempt: number) => {
          if (this.stopped) throw new Error("change notifications were stopped");
          return Math.min(5000, 100 * 2 ** attempt);
        },
        retryTimeout: Number.POSITIVE_INFINITY,
        // Payloads are read by readNotification, never parsed blindly.
        parse: (text: string) => text,
      },
    );
    this.subscriber.notifications.on(CHANNEL, (payload: unknown) => this.receive(payload));
    this.subscriber.events.on("connected", () => {
      if (this.stopped) {
        // A reconnect that was under way when the listener stopped: let the connection go at once.
        this.subscriber.close().catch(() => {});
        return;
      }
      if (this.everConnected) this.reconcile("reconnected");
      this.everConnected = true;
    });
    this.subscriber.events.on("reconnect", (attempt) => {
      // Emitted just before each attempt: once stopped, no attempt may be made (the throw ends the loop).
      if (this.stopped) throw new Error("change notifications were stopped");
      if (attempt === 1 || attempt % 10 === 0) this.logger.warn({ attempt }, "change notifications lost; reconnecting");
    });
    this.subscriber.events.on("error", (error) => {
      if (this.stopped) return;
      this.logger.error({ err: error }, "change notifications failed");
      this.reconcile("listener error");
    });
  }

  async start(): Promise<void> {
    await this.subscriber.connect();
    await this.subscriber.listenTo(CHANNEL);
  }

  private receive(payload: unknown): void {
    try {
      const notice = readNotification(payload);
      if (notice === undefined) {
        const text = typeof payload === "string" ? payload : String(payload);
        this.logger.warn(
          { payload: text.slice(0, 200), length: text.length },
          "ignored a change notification that is not ours",
        );
        return;
      }
      this.feed.catchUpSoon(notice.stream, notice.version);
    } catch (error) {
      this.logger.error({ err: error }, "could not handle a change notification");
      this.reconcile("notification failure");
    }
  }

  private reconcile(why: string): void {
    this.feed.reconcile().catch((error) => this.logger.warn({ err: error, why }, "reconcile failed; the poll retries"));
  }

  private socket(): Socket {
    const socket = new Socket();
    if (this.stopped) {
      // connect() would undo a destroy done before it, so the refusal comes in its place.
      socket.connect = (() => {
        process.nextTick(() => socket.destroy(new Error("change notifications were stopped")));
        return socket;
      }) as Socket["connect"];
      return socket;
    }
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    return socket;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const socket of this.sockets) socket.destroy();
    await this.subscriber.close();
  }
}
