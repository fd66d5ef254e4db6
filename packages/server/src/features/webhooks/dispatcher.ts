import { type Kysely, sql } from "kysely";
import { monotonicFactory } from "ulid";
import { type Clock, isoTime, type RandomSource } from "../../clock.js";
import type { Database } from "../../db/schema.js";
import { toEvent } from "../history/event.repository.js";
import type { Metrics, WebhookQueueState } from "../metrics/metrics.js";
import { insertDeliveries, type NewDelivery } from "./webhook.repository.js";
import { type Attempt, sendDelivery } from "./webhook-sender.js";

export interface DispatcherOptions {
  /** PostgreSQL: rows are claimed with FOR UPDATE SKIP LOCKED, so instances never take the same one. */
  readonly postgres: boolean;
  readonly allowPrivateNetworks: boolean;
  readonly timeoutMs: number;
  /** The first retry's delay; each next one doubles, up to MAX_RETRY_DELAY_MS, with jitter. */
  readonly retryBaseMs: number;
  /** How long after its first attempt a delivery is retried before it is marked failed. */
  readonly retryWindowMs: number;
  /** Deliveries this instance sends at once, over every webhook. */
  readonly concurrency: number;
  readonly random?: RandomSource;
}

export interface DispatcherLogger {
  warn(obj: object, msg: string): void;
}

/** Turns off a webhook that failed for a whole retry window (a recorded write). */
export type DisableWebhook = (projectId: string, webhookId: string, reason: string) => Promise<void>;

/** Events turned into deliveries per transaction. */
const FAN_OUT_BATCH = 200;
/** Deliveries of one webhook in flight at once on this instance, so a slow receiver leaves room for others. */
const PER_WEBHOOK = 4;
const MAX_RETRY_DELAY_MS = 60 * 60 * 1000;
/** How often the dispatcher looks for work it was not told about (other instances' events, lapsed leases). */
const POLL_MS = 1000;

const nextUlid = monotonicFactory();

/** Whether a webhook's patterns (`*`, `flag.*`, `flag.updated`) take an event type. */
export function matchesPatterns(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => p === "*" || p === type || (p.endsWith(".*") && type.startsWith(p.slice(0, -1))));
}

interface Claimed {
  readonly id: string;
  readonly webhookId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly payload: string;
  readonly createdAt: string;
  /** Attempts so far, this one included. */
  readonly attempts: number;
  readonly url: string;
  readonly secret: string;
  readonly projectId: string;
}

/**
 * Delivers webhooks from the database, never from memory, so a crash loses nothing:
 * 1. fan-out: each event in `event_outbox` (written with the change) becomes one delivery per enabled
 *    webhook of its project whose patterns match, and leaves the outbox, in one transaction;
 * 2. send: due deliveries are claimed under a lease (FOR UPDATE SKIP LOCKED on PostgreSQL) and POSTed;
 *    the outcome is recorded, a failure scheduled again with exponential backoff and jitter, until the
 *    retry window ends and the delivery is marked failed (and a webhook with no success since, disabled).
 * A dispatcher that dies mid-send leaves a lease that lapses: the delivery is sent again (at least once;
 * the receiver tells repeats by `webhook-id`). Sends never run inside a write, so receivers never slow
 * writes; each webhook has at most PER_WEBHOOK sends in flight here, so one slow receiver cannot take
 * every slot.
 */
export class WebhookDispatcher {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perWebhook = new Map<string, number>();
  private readonly abort = new AbortController();
  private readonly random: RandomSource;
  private readonly leaseMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: DispatcherLogger,
    private readonly metrics: Metrics,
    private readonly disable: DisableWebhook,
    private readonly options: DispatcherOptions,
  ) {
    this.random = options.random ?? Math.random;
    // Longer than any attempt can last, so a lease only lapses when its dispatcher is gone.
    this.leaseMs = options.timeoutMs + 5000;
    metrics.watchWebhookQueue(() => this.queueState());
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), POLL_MS);
    this.timer.unref();
    this.kick();
  }

  /** Looks for work now (a write was committed, a delivery queued, a send finished). Coalesced. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.cycle()
      .catch((error) => this.logger.warn({ err: error }, "webhook dispatch failed; will retry"))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Stops claiming, aborts sends in flight and hands their deliveries back (not counted as attempts). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.abort.abort();
    await this.running;
    await Promise.allSettled(this.inFlight.values());
  }

  private async cycle(): Promise<void> {
    while ((await this.fanOut()) === FAN_OUT_BATCH && !this.stopped) {}
    if (!this.stopped) await this.claimAndSend();
  }

  /** Matches a batch of outbox events to webhooks; answers how many events it took. */
  async fanOut(): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      let outbox = trx.selectFrom("event_outbox").select("event_id").orderBy("event_id").limit(FAN_OUT_BATCH);
      if (this.options.postgres) outbox = outbox.forUpdate().skipLocked();
      const ids = (await outbox.execute()).map((r) => r.event_id);
      if (ids.length === 0) return 0;
      const events = (await trx.selectFrom("events").selectAll().where("id", "in", ids).execute()).map(toEvent);
      const projects = [...new Set(events.flatMap((e) => (e.projectId === null ? [] : [e.projectId])))];
      const hooks =
        projects.length === 0
          ? []
          : await trx
              .selectFrom("webhooks")
              .select(["id", "project_id", "events", "created_at"])
              .where("project_id", "in", projects)
              .where("enabled", "=", 1)
              .execute();
      const createdAt = isoTime(this.clock.now());
      const deliveries: NewDelivery[] = [];
      for (const event of events) {
        for (const hook of hooks) {
          // A webhook hears of events from its own creation on, that one included.
          if (hook.project_id !== event.projectId || hook.created_at > event.createdAt) continue;
          if (!matchesPatterns(JSON.parse(hook.events) as string[], event.type)) continue;
          deliveries.push({
            id: `dlv_${nextUlid(this.clock.now())}`,
            webhookId: hook.id,
            eventId: event.id,
            eventType: event.type,
            payload: JSON.stringify(event),
            createdAt,
          });
        }
      }
      await insertDeliveries(trx, deliveries);
      await trx.deleteFrom("event_outbox").where("event_id", "in", ids).execute();
      return ids.length;
    });
  }

  /** Claims due deliveries for the free slots and starts sending them. */
  private async claimAndSend(): Promise<void> {
    const free = this.options.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const now = this.clock.now();
    const nowIso = isoTime(now);
    const claimed: Claimed[] = await this.db.transaction().execute(async (trx) => {
      let due = trx
        .selectFrom("webhook_deliveries")
        .select(["id", "webhook_id"])
        .where("status", "=", "pending")
        .where("next_attempt_at", "<=", nowIso)
        .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", nowIso)]))
        // Pings are sent to disabled webhooks too: they are how one checks a receiver is back.
        .where((eb) =>
          eb.or([
            eb("event_type", "=", "ping"),
            eb("webhook_id", "in", eb.selectFrom("webhooks").select("id").where("enabled", "=", 1)),
          ]),
        )
        .orderBy("next_attempt_at")
        .limit(free * PER_WEBHOOK);
      // Webhooks with every slot taken here are left out of the scan: otherwise the oldest due rows, all
      // of one slow receiver's backlog, would fill the limit and hide every other webhook's deliveries.
      const full = [...this.perWebhook].filter(([, n]) => n >= PER_WEBHOOK).map(([id]) => id);
      if (full.length > 0) due = due.where("webhook_id", "not in", full);
      if (this.options.postgres) due = due.forUpdate().skipLocked();
      const chosen: string[] = [];
      const counts = new Map(this.perWebhook);
      for (const row of await due.execute()) {
        const taken = counts.get(row.webhook_id) ?? 0;
        if (taken >= PER_WEBHOOK || chosen.length >= free) continue;
        counts.set(row.webhook_id, taken + 1);
        chosen.push(row.id);
      }
      if (chosen.length === 0) return [];
      await trx
        .updateTable("webhook_deliveries")
        .set({ lease_until: isoTime(now + this.leaseMs), attempts: sql`attempts + 1` })
        .where("id", "in", chosen)
        .execute();
      return trx
        .selectFrom("webhook_deliveries as d")
        .innerJoin("webhooks as w", "w.id", "d.webhook_id")
        .select([
          "d.id",
          "d.webhook_id as webhookId",
          "d.event_id as eventId",
          "d.event_type as eventType",
          "d.payload",
          "d.created_at as createdAt",
          "d.attempts",
          "w.url",
          "w.secret",
          "w.project_id as projectId",
        ])
        .where("d.id", "in", chosen)
        .execute();
    });
    for (const delivery of claimed) this.send({ ...delivery, attempts: Number(delivery.attempts) });
  }

  private send(delivery: Claimed): void {
    this.perWebhook.set(delivery.webhookId, (this.perWebhook.get(delivery.webhookId) ?? 0) + 1);
    const sending = (async () => {
      const attempt = await sendDelivery(delivery.url, delivery.secret, delivery.eventId, delivery.payload, {
        timeoutMs: this.options.timeoutMs,
        allowPrivateNetworks: this.options.allowPrivateNetworks,
        signal: this.abort.signal,
      });
      if (this.abort.signal.aborted && attempt.statusCode === undefined) await this.handBack(delivery);
      else await this.record(delivery, attempt);
    })()
      .catch((error) => this.logger.warn({ err: error, delivery: delivery.id }, "could not record a webhook delivery"))
      .finally(() => {
        this.inFlight.delete(delivery.id);
        const left = (this.perWebhook.get(delivery.webhookId) ?? 1) - 1;
        if (left === 0) this.perWebhook.delete(delivery.webhookId);
        else this.perWebhook.set(delivery.webhookId, left);
        this.kick();
      });
    this.inFlight.set(delivery.id, sending);
  }

  /** An attempt cut short by shutdown is not the receiver's failure: the next dispatcher sends it again. */
  private async handBack(delivery: Claimed): Promise<void> {
    await this.db
      .updateTable("webhook_deliveries")
      .set({ lease_until: null, attempts: sql`attempts - 1` })
      .where("id", "=", delivery.id)
      .execute();
  }

  private async record(delivery: Claimed, attempt: Attempt): Promise<void> {
    const now = this.clock.now();
    const last = {
      lease_until: null,
      last_attempt_at: isoTime(now),
      last_status_code: attempt.statusCode ?? null,
      last_error: attempt.error ?? null,
      last_duration_ms: attempt.durationMs,
    };
    const row = this.db.updateTable("webhook_deliveries").where("id", "=", delivery.id);
    if (attempt.error === undefined) {
      await row.set({ ...last, status: "succeeded", next_attempt_at: null, finished_at: isoTime(now) }).execute();
      this.metrics.recordDelivery(delivery.webhookId, "succeeded");
      return;
    }
    const deadline = Date.parse(delivery.createdAt) + this.options.retryWindowMs;
    // A ping is tried once: it answers "does the receiver work now?".
    if (delivery.eventType === "ping" || now >= deadline) {
      await row.set({ ...last, status: "failed", next_attempt_at: null, finished_at: isoTime(now) }).execute();
      this.metrics.recordDelivery(delivery.webhookId, "failed");
      if (delivery.eventType !== "ping") await this.disableIfDead(delivery, attempt);
      return;
    }
    const next = Math.min(now + this.retryDelay(delivery.attempts), deadline);
    await row.set({ ...last, next_attempt_at: isoTime(next) }).execute();
    this.metrics.recordDelivery(delivery.webhookId, "retrying");
    // Due before the next poll: wake up for it.
    const wait = next - this.clock.now();
    if (wait < POLL_MS) setTimeout(() => this.kick(), Math.max(0, wait)).unref();
  }

  /** The delay after the n-th failed attempt: base × 2^(n−1), at most an hour, jittered to 50–100 %. */
  retryDelay(attempts: number): number {
    const full = Math.min(MAX_RETRY_DELAY_MS, this.options.retryBaseMs * 2 ** Math.min(30, attempts - 1));
    return Math.round(full * (0.5 + this.random() / 2));
  }

  /** A webhook whose deliveries have all failed since this one was created has failed for a whole window. */
  private async disableIfDead(delivery: Claimed, attempt: Attempt): Promise<void> {
    const success = await this.db
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("webhook_id", "=", delivery.webhookId)
      .where("status", "=", "succeeded")
      .where("finished_at", ">=", delivery.createdAt)
      .limit(1)
      .executeTakeFirst();
    if (success) return;
    const hours = Math.round((this.options.retryWindowMs / 3_600_000) * 10) / 10;
    const reason = `Every delivery failed for ${hours} hours (last attempt: ${attempt.error ?? "failed"}); turned off by the service. Set enabled to true to turn it back on.`;
    await this.disable(delivery.projectId, delivery.webhookId, reason);
  }

  private async queueState(): Promise<WebhookQueueState> {
    const outbox = await this.db
      .selectFrom("event_outbox")
      .select((eb) => [eb.fn.countAll<number>().as("count"), eb.fn.min("created_at").as("oldest")])
      .executeTakeFirstOrThrow();
    const pending = await this.db
      .selectFrom("webhook_deliveries")
      .select((eb) => [eb.fn.countAll<number>().as("count"), eb.fn.min("created_at").as("oldest")])
      .where("status", "=", "pending")
      // A disabled webhook's deliveries wait for it to be turned back on; they are not a backlog.
      .where("webhook_id", "in", (eb) => eb.selectFrom("webhooks").select("id").where("enabled", "=", 1))
      .executeTakeFirstOrThrow();
    const oldest = [outbox.oldest, pending.oldest].filter((t): t is string => typeof t === "string").sort()[0];
    return {
      outbox: Number(outbox.count),
      pending: Number(pending.count),
      oldestPendingAt: oldest === undefined ? undefined : Date.parse(oldest),
    };
  }
}
