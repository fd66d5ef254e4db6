import { sql, type Transaction } from "kysely";
// pg-listen is CommonJS with an `exports.default`: under Node's ESM interop that is `.default.default`.
import * as pgListen from "pg-listen";
import type { Database } from "../../db/schema.js";
import type { ChangeFeed, FeedLogger } from "./change-feed.js";
import type { ChangeSet } from "./changes.js";

export const CHANNEL = "flagstaff_changes";

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; larger change sets send only their version. */
const MAX_PAYLOAD_BYTES = 7900;

/**
 * Announces a change set to every listening instance. Runs inside the write transaction, so PostgreSQL
 * delivers it exactly when (and only if) the transaction commits.
 */
export async function notifyChangeSet(trx: Transaction<Database>, set: ChangeSet): Promise<void> {
  let payload = JSON.stringify(set);
  if (Buffer.byteLength(payload, "utf8") > MAX_PAYLOAD_BYTES) {
    payload = JSON.stringify({ stream: set.stream, version: set.version });
  }
  await sql`select pg_notify(${CHANNEL}, ${payload})`.execute(trx);
}

/**
 * Listens for change sets on one dedicated connection (pg-listen) and hands them to the feed. pg-listen
 * reconnects with backoff for as long as it takes and probes the connection every few seconds; after a
 * reconnect the feed reconciles, because notifications sent while nobody listened are only in the log.
 */
export class PostgresListener {
  private readonly subscriber: pgListen.Subscriber;
  private everConnected = false;

  constructor(
    connectionString: string,
    private readonly feed: ChangeFeed,
    private readonly logger: FeedLogger,
    /** Called when an announced change set from another instance is in the snapshot. */
    private readonly onApplied: (set: ChangeSet) => void = () => {},
  ) {
    this.subscriber = pgListen.default.default(
      { connectionString, connectionTimeoutMillis: 3000 },
      {
        paranoidChecking: 5000,
        retryInterval: (attempt: number) => Math.min(5000, 100 * 2 ** attempt),
        retryTimeout: Number.POSITIVE_INFINITY,
      },
    );
    this.subscriber.notifications.on(CHANNEL, (payload: unknown) => this.receive(payload));
    this.subscriber.events.on("connected", () => {
      if (this.everConnected) {
        this.feed.reconcile().catch((error) => this.logger.warn({ err: error }, "reconcile after reconnect failed"));
      }
      this.everConnected = true;
    });
    this.subscriber.events.on("reconnect", (attempt) => {
      if (attempt === 1 || attempt % 10 === 0) this.logger.warn({ attempt }, "change notifications lost; reconnecting");
    });
    this.subscriber.events.on("error", (error) => this.logger.error({ err: error }, "change notifications failed"));
  }

  async start(): Promise<void> {
    await this.subscriber.connect();
    await this.subscriber.listenTo(CHANNEL);
  }

  private receive(payload: unknown): void {
    const set = payload as Partial<ChangeSet> | null;
    if (!set || typeof set.stream !== "string" || typeof set.version !== "number") return;
    if (Array.isArray(set.changes)) {
      const full = set as ChangeSet;
      this.feed.deliver(full).then((fresh) => {
        if (fresh) this.onApplied(full);
      });
    } else {
      this.feed.catchUp(set.stream).catch((error) => this.logger.warn({ err: error }, "feed catch-up failed"));
    }
  }

  async stop(): Promise<void> {
    await this.subscriber.close();
  }
}
