import { setMaxListeners } from "node:events";
import { type Kysely, sql, type Transaction } from "kysely";
import { type Clock, isoTime, type RandomSource } from "../../clock.js";
import type { Database } from "../../db/schema.js";
import { newDeliveryId } from "../../ids.js";
import type { StoredEvent } from "../history/domain-events.js";
import type { Metrics, WebhookQueueState } from "../metrics/metrics.js";
import { insertDeliveries, type NewDelivery } from "./webhook.repository.js";
import { type Attempt, keepAliveAgents, sendDelivery } from "./webhook-sender.js";

export interface DispatcherOptions {
  /** PostgreSQL: rows are claimed with FOR UPDATE SKIP LOCKED, so instances never take the same one. */
  readonly postgres: boolean;
  readonly allowPrivateNetworks: boolean;
  readonly timeoutMs: number;
  /** The first retry's delay; each next one doubles, up to MAX_RETRY_DELAY_MS, with jitter. */
  readonly retryBaseMs: number;
  /** How long after it was queued a delivery is retried before it is marked failed. */
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

/**
 * The most deliveries of one webhook in flight at once on this instance, however many slots are free: no
 * receiver is sent more than this many requests at once by one instance. Below it, a webhook gets its fair
 * share of the slots (see `fairShare`).
 */
export const PER_WEBHOOK = 16;
const MAX_RETRY_DELAY_MS = 60 * 60 * 1000;
/** How long attempt outcomes are gathered before they are stored together. */
const OUTCOME_BATCH_MS = 20;
/** How often the dispatcher looks for work it was not told about (other instances' events, lapsed leases). */
const POLL_MS = 1000;

/** A retry window in words: "24 hours", "90 minutes", "2 seconds". */
function describeWindow(ms: number): string {
  const [value, unit] =
    ms >= 7_200_000 ? [ms / 3_600_000, "hours"] : ms >= 120_000 ? [ms / 60_000, "minutes"] : [ms / 1000, "seconds"];
  return `${Math.round(value * 10) / 10} ${unit}`;
}

/**
 * How many of `concurrency` slots one webhook may hold while `active` webhooks (it included) have
 * deliveries in flight or due: an equal share of the slots with one share left over, at least 1 and at
 * most PER_WEBHOOK. The share left over is what lets a webhook that has work but no slot yet, a healthy
 * one among receivers that never answer, start at once: k webhooks at their share hold at most
 * k × concurrency / (k + 1) slots. As more webhooks get work the share shrinks; a webhook above it takes
 * no slot until its own sends end (each within the timeout), none is cut short.
 */
export function fairShare(concurrency: number, active: number): number {
  return Math.min(PER_WEBHOOK, Math.max(1, Math.floor(concurrency / (Math.max(1, active) + 1))));
}

/** Whether a webhook's patterns (`*`, `flag.*`, `flag.updated`) take an event type. */
export function matchesPatterns(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => p === "*" || p === type || (p.endsWith(".*") && type.startsWith(p.slice(0, -1))));
}

/** The columns an attempt's outcome sets. */
interface Outcome {
  readonly lease_until: null;
  readonly last_attempt_at: string;
  readonly last_status_code: number | null;
  readonly last_error: string | null;
  readonly last_duration_ms: number;
  readonly next_attempt_at: string | null;
  readonly status?: "succeeded" | "failed";
  readonly finished_at?: string;
}

interface PendingOutcome {
  readonly id: string;
  readonly lease: string | null;
  readonly values: Outcome;
  resolve(): void;
  reject(error: unknown): void;
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
  /** The lease this dispatcher holds; an outcome is stored only while it still does. */
  readonly leaseUntil: string | null;
  readonly url: string;
  readonly secret: string;
  readonly projectId: string;
}

/**
 * Delivers webhooks from the database, never from memory, so a crash loses nothing:
 * 1. queue: a write's transaction queues one delivery per event and matching enabled webhook of its
 *    project (`enqueue`, called by the unit of work), so a committed change always has them; those this
 *    instance has room for are claimed in the same insert and sent right after the commit;
 * 2. send: due deliveries are claimed under a lease (FOR UPDATE SKIP LOCKED on PostgreSQL) and POSTed;
 *    the outcome is recorded, a failure scheduled again with exponential backoff and jitter, until the
 *    retry window ends and the delivery is marked failed (and a webhook with no success since, disabled).
 * A dispatcher that dies mid-send leaves a lease that lapses: the delivery is sent again (at least once;
 * the receiver tells repeats by `webhook-id`). Sends never run inside a write, so receivers never slow
 * writes; each webhook has at most its fair share of the slots here (`fairShare`), so slow or hung
 * receivers cannot take every slot: a healthy webhook always finds one.
 */
export class WebhookDispatcher {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perWebhook = new Map<string, number>();
  private readonly abort = new AbortController();
  private readonly agents: ReturnType<typeof keepAliveAgents>;
  private readonly random: RandomSource;
  private readonly leaseMs: number;
  private timer: NodeJS.Timeout | undefined;
  private readonly outcomes: PendingOutcome[] = [];
  private flushing: Promise<void> | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  /** Deliveries claimed inside writes not yet published, by event id. */
  private readonly reserved = new Map<string, { claimed: Claimed; at: number }[]>();
  private readonly reservedPerWebhook = new Map<string, number>();
  private reservedCount = 0;
  /**
   * Deliveries chosen by a claim whose transaction has not ended yet, by webhook: they hold their slots
   * until they are sent, so a write's reservation meanwhile cannot take a webhook past its share.
   */
  private readonly claiming = new Map<string, number>();
  private claimingCount = 0;
  /** Sends and the storing of their outcomes, awaited at shutdown. */
  private readonly storing = new Set<Promise<void>>();
  /**
   * Whether due deliveries may wait unclaimed: one was queued without a slot, a claim filled every slot or
   * met a webhook's cap. Only then does a freed slot look for work at once (else the poll finds it).
   */
  private backlog = true;
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
    // Every send in flight listens for shutdown on this one signal: as many listeners as slots.
    setMaxListeners(0, this.abort.signal);
    // Longer than any attempt can last, so a lease only lapses when its dispatcher is gone.
    this.leaseMs = options.timeoutMs + 5000;
    // Sockets per origin as many as the instance's slots: webhooks to one host (several paths of one
    // service) share an origin, and the agent must not queue one webhook's request behind another's
    // hung ones; the dispatcher's own shares bound what each webhook holds.
    this.agents = keepAliveAgents(options.concurrency);
    metrics.watchWebhookQueue(() => this.queueState());
    metrics.watchWebhookSends(() => this.sendsInFlight());
  }

  /**
   * Queues, in a write's transaction, one delivery per event and enabled webhook of the event's project
   * whose patterns match (a webhook created by this very write hears of its own creation): one indexed
   * read of the project's webhooks, nothing more when it has none. Deliveries this instance has room to
   * send now are claimed in the same insert (lease and first attempt), and sent as soon as the write is
   * published after its commit: no claim transaction of their own. Should the write roll back, the
   * reservation lapses with the lease.
   */
  async enqueue(trx: Transaction<Database>, events: readonly StoredEvent[]): Promise<void> {
    const projects = [...new Set(events.flatMap((e) => (e.projectId === null ? [] : [e.projectId])))];
    if (projects.length === 0) return;
    const hooks = await trx
      .selectFrom("webhooks")
      .select(["id", "project_id", "events", "url", "secret"])
      .where("project_id", "in", projects)
      .where("enabled", "=", 1)
      .execute();
    if (hooks.length === 0) return;
    const now = this.clock.now();
    const createdAt = isoTime(now);
    const leaseUntil = isoTime(now + this.leaseMs);
    const deliveries: NewDelivery[] = [];
    for (const event of events) {
      for (const hook of hooks) {
        if (hook.project_id !== event.projectId) continue;
        if (!matchesPatterns(JSON.parse(hook.events) as string[], event.type)) continue;
        const delivery = {
          id: newDeliveryId(now),
          webhookId: hook.id,
          eventId: event.id,
          eventType: event.type,
          payload: JSON.stringify(event),
          createdAt,
        };
        const claimNow = !this.stopped && this.reserve(hook.id, now);
        if (!claimNow) this.backlog = true;
        deliveries.push(claimNow ? { ...delivery, leaseUntil } : delivery);
        if (claimNow) {
          const claimed = {
            ...delivery,
            attempts: 1,
            leaseUntil,
            url: hook.url,
            secret: hook.secret,
            projectId: hook.project_id,
          };
          this.reserved.set(event.id, [...(this.reserved.get(event.id) ?? []), { claimed, at: now }]);
        }
      }
    }
    await insertDeliveries(trx, deliveries);
  }

  /** After a write's commit: sends what its transaction claimed, then looks for more. */
  onCommitted(events: readonly StoredEvent[]): void {
    for (const event of events) {
      const reservations = this.reserved.get(event.id);
      if (!reservations) continue;
      this.reserved.delete(event.id);
      for (const { claimed } of reservations) {
        this.release(claimed.webhookId);
        if (!this.stopped) this.send(claimed);
      }
    }
    if (this.backlog) this.kick();
  }

  /** Deliveries of each webhook in flight here, reserved by writes still to commit, or being claimed. */
  private holding(): Map<string, number> {
    const held = new Map(this.perWebhook);
    for (const [id, n] of this.reservedPerWebhook) held.set(id, (held.get(id) ?? 0) + n);
    for (const [id, n] of this.claiming) held.set(id, (held.get(id) ?? 0) + n);
    return held;
  }

  /** Slots not in flight, reserved or being claimed. */
  private freeSlots(): number {
    return this.options.concurrency - this.inFlight.size - this.reservedCount - this.claimingCount;
  }

  /** Gives back the slots a claim held for its chosen deliveries (once they are sent, or it failed). */
  private unclaim(webhookIds: readonly string[]): void {
    for (const id of webhookIds) {
      const left = (this.claiming.get(id) ?? 1) - 1;
      if (left <= 0) this.claiming.delete(id);
      else this.claiming.set(id, left);
    }
    this.claimingCount = Math.max(0, this.claimingCount - webhookIds.length);
  }

  /** Sends in flight here, by webhook (for the metrics). */
  private sendsInFlight(): ReadonlyMap<string, number> {
    return this.perWebhook;
  }

  /** Takes a slot for a delivery queued in a write still to commit, if the webhook and the instance have room. */
  private reserve(webhookId: string, now: number): boolean {
    this.dropLapsedReservations(now);
    const held = this.holding();
    const forHook = held.get(webhookId) ?? 0;
    const share = fairShare(this.options.concurrency, held.size + (forHook === 0 ? 1 : 0));
    if (forHook >= share || this.freeSlots() <= 0) return false;
    this.reservedPerWebhook.set(webhookId, (this.reservedPerWebhook.get(webhookId) ?? 0) + 1);
    this.reservedCount++;
    return true;
  }

  private release(webhookId: string): void {
    const left = (this.reservedPerWebhook.get(webhookId) ?? 1) - 1;
    if (left <= 0) this.reservedPerWebhook.delete(webhookId);
    else this.reservedPerWebhook.set(webhookId, left);
    this.reservedCount = Math.max(0, this.reservedCount - 1);
  }

  /** Reservations of writes that rolled back are never published: their slots come back with the lease. */
  private dropLapsedReservations(now: number): void {
    if (this.reservedCount === 0) return;
    for (const [eventId, reservations] of this.reserved) {
      if (now - (reservations[0]?.at ?? now) < this.leaseMs) continue;
      this.reserved.delete(eventId);
      for (const { claimed } of reservations) this.release(claimed.webhookId);
    }
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
    await Promise.allSettled(this.storing);
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private async cycle(): Promise<void> {
    if (!this.stopped) await this.claimAndSend();
  }

  /**
   * Claims due deliveries for the free slots and starts sending them. Webhooks already at their fair share
   * of sends here are left out of the query, and it is asked again while slots stay free, so the backlog
   * of one slow webhook never hides the due deliveries of the others.
   */
  private async claimAndSend(): Promise<void> {
    for (let round = 0; round < 8 && !this.stopped; round++) {
      const free = this.freeSlots();
      if (free <= 0) return;
      const { claimed, capped, excluded, held } = await this.claim(free);
      for (const delivery of claimed) this.send({ ...delivery, attempts: Number(delivery.attempts) });
      // Sent (their slots now count in flight): the claim's hold goes, in the same turn.
      this.unclaim(held);
      // Slots left and nothing skipped for a webhook's cap: nothing else is due now, but for the webhooks
      // left out as saturated (their sends, as they finish, look again). Otherwise ask again, without the
      // webhooks that just reached their cap.
      if (claimed.length < free && !capped) {
        this.backlog = excluded;
        return;
      }
      if (claimed.length === 0) return;
    }
  }

  private async claim(free: number) {
    const now = this.clock.now();
    const nowIso = isoTime(now);
    const busy = this.holding();
    // Left out of the query: webhooks at their share already counting only those busy here (the share
    // can only shrink once the query shows webhooks with due work).
    const busyShare = fairShare(this.options.concurrency, busy.size);
    const saturated = [...busy].filter(([, n]) => n >= busyShare).map(([id]) => id);
    /** Webhook ids of the deliveries chosen, one per delivery: slots held until they are sent. */
    const held: string[] = [];
    try {
      const result = await this.claimIn(now, nowIso, free, saturated, held);
      return { ...result, held };
    } catch (error) {
      this.unclaim(held);
      throw error;
    }
  }

  private claimIn(now: number, nowIso: string, free: number, saturated: readonly string[], held: string[]) {
    return this.db.transaction().execute(async (trx) => {
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
      if (saturated.length > 0) due = due.where("webhook_id", "not in", saturated);
      if (this.options.postgres) due = due.forUpdate().skipLocked();
      const rows = await due.execute();
      // Read again now, in the same turn as the choice: writes may have reserved slots meanwhile.
      const counts = this.holding();
      const room = Math.min(free, this.freeSlots());
      // The share counts every webhook with work: those busy here and those with due deliveries.
      const share = fairShare(
        this.options.concurrency,
        new Set([...counts.keys(), ...rows.map((r) => r.webhook_id)]).size,
      );
      const chosen: string[] = [];
      let capped = false;
      for (const row of rows) {
        const taken = counts.get(row.webhook_id) ?? 0;
        if (taken >= share) capped = true;
        if (taken >= share || chosen.length >= room) continue;
        counts.set(row.webhook_id, taken + 1);
        chosen.push(row.id);
        held.push(row.webhook_id);
        this.claiming.set(row.webhook_id, (this.claiming.get(row.webhook_id) ?? 0) + 1);
        this.claimingCount++;
      }
      // Writes took slots while the query ran: more may be due than there was room for; look again.
      if (room < free && rows.length > chosen.length) capped = true;
      const excluded = saturated.length > 0;
      if (chosen.length === 0) return { claimed: [], capped, excluded };
      await trx
        .updateTable("webhook_deliveries")
        .set({ lease_until: isoTime(now + this.leaseMs), attempts: sql`attempts + 1` })
        .where("id", "in", chosen)
        .execute();
      const claimed = await trx
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
          "d.lease_until as leaseUntil",
          "w.url",
          "w.secret",
          "w.project_id as projectId",
        ])
        .where("d.id", "in", chosen)
        .execute();
      return { claimed, capped, excluded };
    });
  }

  private send(delivery: Claimed): void {
    this.perWebhook.set(delivery.webhookId, (this.perWebhook.get(delivery.webhookId) ?? 0) + 1);
    // The slot is the HTTP request: it is given back as soon as the answer is in. The lease stays until
    // the outcome is stored, so no dispatcher sends the delivery again meanwhile.
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      this.inFlight.delete(delivery.id);
      const left = (this.perWebhook.get(delivery.webhookId) ?? 1) - 1;
      if (left === 0) this.perWebhook.delete(delivery.webhookId);
      else this.perWebhook.set(delivery.webhookId, left);
      if (this.backlog) this.kick();
    };
    const sending = (async () => {
      const attempt = await sendDelivery(delivery.url, delivery.secret, delivery.eventId, delivery.payload, {
        timeoutMs: this.options.timeoutMs,
        allowPrivateNetworks: this.options.allowPrivateNetworks,
        signal: this.abort.signal,
        agents: this.agents,
      });
      free();
      if (this.abort.signal.aborted && attempt.statusCode === undefined) await this.handBack(delivery);
      else await this.record(delivery, attempt);
    })()
      .catch((error) => this.logger.warn({ err: error, delivery: delivery.id }, "could not record a webhook delivery"))
      .finally(() => {
        free();
        this.storing.delete(sending);
      });
    this.inFlight.set(delivery.id, sending);
    this.storing.add(sending);
  }

  /** An attempt cut short by shutdown is not the receiver's failure: the next dispatcher sends it again. */
  private async handBack(delivery: Claimed): Promise<void> {
    await this.db
      .updateTable("webhook_deliveries")
      .set({ lease_until: null, attempts: sql`attempts - 1` })
      .where("id", "=", delivery.id)
      .where("lease_until", "=", delivery.leaseUntil)
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
    const row = { set: (values: Outcome) => this.save(delivery, values) };
    if (attempt.error === undefined) {
      await row.set({ ...last, status: "succeeded", next_attempt_at: null, finished_at: isoTime(now) });
      this.metrics.recordDelivery(delivery.webhookId, "succeeded");
      return;
    }
    const deadline = Date.parse(delivery.createdAt) + this.options.retryWindowMs;
    // A ping is tried once: it answers "does the receiver work now?".
    if (delivery.eventType === "ping" || now >= deadline) {
      await row.set({ ...last, status: "failed", next_attempt_at: null, finished_at: isoTime(now) });
      this.metrics.recordDelivery(delivery.webhookId, "failed");
      if (delivery.eventType !== "ping") await this.disableIfDead(delivery, attempt);
      return;
    }
    const next = Math.min(now + this.retryDelay(delivery.attempts), deadline);
    await row.set({ ...last, next_attempt_at: isoTime(next) });
    this.metrics.recordDelivery(delivery.webhookId, "retrying");
    // Due before the next poll: wake up for it.
    const wait = next - this.clock.now();
    if (wait < POLL_MS) setTimeout(() => this.kick(), Math.max(0, wait)).unref();
  }

  /**
   * Stores an attempt's outcome. Outcomes are gathered for OUTCOME_BATCH_MS and written in one transaction:
   * on SQLite every commit is a sync to disk, and one per delivery tripled what a write with a webhook cost
   * the server. The lease is held until then, so nothing is sent twice meanwhile; a crash before the write
   * only means the delivery is sent again once its lease lapses (at least once, as always).
   */
  private save(delivery: Claimed, values: Outcome): Promise<void> {
    return new Promise((resolve, reject) => {
      this.outcomes.push({ id: delivery.id, lease: delivery.leaseUntil, values, resolve, reject });
      if (this.flushing || this.flushTimer) return;
      const flush = () => {
        this.flushTimer = undefined;
        this.flushing = this.flushOutcomes().finally(() => {
          this.flushing = undefined;
          if (this.outcomes.length > 0) this.flushTimer = setTimeout(flush, this.stopped ? 0 : OUTCOME_BATCH_MS);
        });
      };
      this.flushTimer = setTimeout(flush, this.stopped ? 0 : OUTCOME_BATCH_MS);
    });
  }

  private async flushOutcomes(): Promise<void> {
    while (this.outcomes.length > 0) {
      const batch = this.outcomes.splice(0);
      try {
        await this.db.transaction().execute(async (trx) => {
          // Only under our own lease: one that lapsed (a stalled process) may have been taken over by
          // another dispatcher, whose outcome must not be overwritten by this late one.
          for (const { id, lease, values } of batch) {
            await trx
              .updateTable("webhook_deliveries")
              .set(values)
              .where("id", "=", id)
              .where("lease_until", "=", lease)
              .execute();
          }
        });
        for (const outcome of batch) outcome.resolve();
      } catch (error) {
        for (const outcome of batch) outcome.reject(error);
      }
    }
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
    const reason = `Every delivery failed for ${describeWindow(this.options.retryWindowMs)} (last attempt: ${attempt.error ?? "failed"}); turned off by the service. Set enabled to true to turn it back on.`;
    await this.disable(delivery.projectId, delivery.webhookId, reason);
  }

  private async queueState(): Promise<WebhookQueueState> {
    const rows = await this.db
      .selectFrom("webhook_deliveries")
      .select((eb) => ["webhook_id", eb.fn.countAll<number>().as("count"), eb.fn.min("created_at").as("oldest")])
      .where("status", "=", "pending")
      // A disabled webhook's deliveries wait for it to be turned back on; they are not a backlog.
      .where("webhook_id", "in", (eb) => eb.selectFrom("webhooks").select("id").where("enabled", "=", 1))
      .groupBy("webhook_id")
      .execute();
    const pendingByWebhook = new Map(rows.map((row) => [row.webhook_id, Number(row.count)]));
    const oldest = rows.flatMap((row) => (typeof row.oldest === "string" ? [Date.parse(row.oldest)] : []));
    return {
      pending: [...pendingByWebhook.values()].reduce((sum, n) => sum + n, 0),
      oldestPendingAt: oldest.length > 0 ? Math.min(...oldest) : undefined,
      pendingByWebhook,
    };
  }
}
