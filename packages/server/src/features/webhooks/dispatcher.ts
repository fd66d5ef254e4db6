import { setMaxListeners } from "node:events";
import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime, type RandomSource } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";
import { newDeliveryId } from "../../kernel/ids.js";
import type { StoredEvent } from "../../write-path/domain-events.js";
import { EventBus } from "../../write-path/event-bus.js";
import type { JobRunner, RunningJob } from "../../kernel/job-runner.js";
import type { WriteHooks } from "../../write-path/unit-of-work.js";
import * as deliveries from "./delivery.repository.js";
import type { Claimed, LeasedOutcome, Outcome, WebhookQueueState } from "./delivery.repository.js";
import { DeliveryScheduler, PER_WEBHOOK } from "./delivery-scheduler.js";
import { OutcomeBatcher } from "./outcome-batcher.js";
import { disabledReason, judgeAttempt, type RetryPolicy } from "./retry-policy.js";
import { insertDeliveries, type NewDelivery } from "./webhook.repository.js";
import { type Attempt, keepAliveAgents, sendDelivery } from "./webhook-sender.js";

export { fairShare, PER_WEBHOOK } from "./delivery-scheduler.js";

export interface DispatcherOptions {
  /** PostgreSQL: rows are claimed with FOR UPDATE SKIP LOCKED, so instances never take the same one. */
  readonly postgres: boolean;
  readonly allowPrivateNetworks: boolean;
  readonly timeoutMs: number;
  /** The first retry's delay; each next one doubles, up to an hour, with jitter. */
  readonly retryBaseMs: number;
  /** How long after it was queued a delivery is retried before it is marked failed. */
  readonly retryWindowMs: number;
  /** Deliveries this instance sends at once, over every webhook. */
  readonly concurrency: number;
  readonly random?: RandomSource;
}

/**
 * What the dispatcher tells the service's metrics (features/metrics' Metrics is one): each delivery's
 * outcome, and where to read the queue and the sends in flight when they are scraped.
 */
export interface DeliveryMetrics {
  recordDelivery(webhookId: string, outcome: "succeeded" | "retrying" | "failed"): void;
  watchWebhookQueue(read: () => Promise<WebhookQueueState>): void;
  watchWebhookSends(read: () => ReadonlyMap<string, number>): void;
}

export interface DispatcherLogger {
  warn(obj: object, msg: string): void;
}

/** A webhook every delivery of which failed for a whole retry window: the webhook service turns it off. */
export interface DeadWebhook {
  readonly projectId: string;
  readonly webhookId: string;
  readonly reason: string;
}

/** How long attempt outcomes are gathered before they are stored together. */
const OUTCOME_BATCH_MS = 20;
/** A retry due sooner than this is woken up for by a timer of its own, rather than left to the runner's poll. */
const POLL_MS = 1000;

/** Whether a webhook's patterns (`*`, `flag.*`, `flag.updated`) take an event type. */
export function matchesPatterns(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => p === "*" || p === type || (p.endsWith(".*") && type.startsWith(p.slice(0, -1))));
}

/**
 * Delivers webhooks from the database, never from memory, so a crash loses nothing:
 * 1. queue: a write's transaction queues one delivery per event and matching enabled webhook of its
 *    project (`enqueue`, called by the unit of work), so a committed change always has them; those this
 *    instance has room for are claimed in the same insert and sent by the write's after-commit hook;
 * 2. send: due deliveries are claimed under a lease (FOR UPDATE SKIP LOCKED on PostgreSQL) and POSTed;
 *    the outcome is recorded (`OutcomeBatcher`), a failure scheduled again by the `RetryPolicy`, until the
 *    retry window ends and the delivery is marked failed (and a webhook with no success since is
 *    announced on `deadWebhooks`, which the webhook service handles by turning it off).
 * A dispatcher that dies mid-send leaves a lease that lapses: the delivery is sent again (at least once;
 * the receiver tells repeats by `webhook-id`). Sends never run inside a write, so receivers never slow
 * writes; which delivery may take a slot is the `DeliveryScheduler`'s (each webhook its fair share). The
 * SQL is in `delivery.repository.ts`.
 */
export class WebhookDispatcher {
  /** Webhooks that failed for a whole retry window; published once per delivery that found it so. */
  readonly deadWebhooks = new EventBus<DeadWebhook>();
  private readonly slots: DeliveryScheduler;
  private readonly outcomes: OutcomeBatcher<LeasedOutcome>;
  private readonly policy: RetryPolicy;
  private readonly abort = new AbortController();
  private readonly agents: ReturnType<typeof keepAliveAgents>;
  private readonly leaseMs: number;
  /** The dispatcher's job in the service's job runner: it polls for work it was not told about. */
  private readonly job: RunningJob;
  /** Sends and the storing of their outcomes, awaited at shutdown. */
  private readonly storing = new Set<Promise<void>>();
  /**
   * Whether due deliveries may wait unclaimed: one was queued without a slot, a claim filled every slot or
   * met a webhook's cap. Only then does a freed slot look for work at once (else the poll finds it).
   */
  private backlog = true;
  private stopped = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: DispatcherLogger,
    private readonly metrics: DeliveryMetrics,
    private readonly options: DispatcherOptions,
    jobs: JobRunner,
  ) {
    this.policy = {
      retryBaseMs: options.retryBaseMs,
      retryWindowMs: options.retryWindowMs,
      random: options.random ?? Math.random,
    };
    this.slots = new DeliveryScheduler(options.concurrency);
    this.outcomes = new OutcomeBatcher((batch) => deliveries.storeOutcomes(db, batch), OUTCOME_BATCH_MS);
    // Every send in flight listens for shutdown on this one signal: as many listeners as slots.
    setMaxListeners(0, this.abort.signal);
    // Longer than any attempt can last, so a lease only lapses when its dispatcher is gone.
    this.leaseMs = options.timeoutMs + 5000;
    // Sockets per origin as many as the instance's slots: webhooks to one host (several paths of one
    // service) share an origin, and the agent must not queue one webhook's request behind another's
    // hung ones; the scheduler's shares bound what each webhook holds.
    this.agents = keepAliveAgents(options.concurrency);
    metrics.watchWebhookQueue(() => deliveries.queueState(db));
    metrics.watchWebhookSends(() => this.slots.sends());
    // Polled by the runner for work it was not told about (other instances' events, lapsed leases).
    this.job = jobs.add({
      name: "webhook-deliveries",
      run: async () => {
        if (!this.stopped) await this.claimAndSend();
      },
    });
  }

  /**
   * Queues, in a write's transaction, one delivery per event and enabled webhook of the event's project
   * whose patterns match (a webhook created by this very write hears of its own creation): one indexed
   * read of the project's webhooks, nothing more when it has none. Deliveries this instance has room to
   * send now are claimed in the same insert (lease and first attempt): their slots are reserved until the
   * write is over, and sent by its after-commit hook, with no claim transaction of their own. Should the
   * write roll back, the reservations are given back.
   */
  async enqueue(trx: Transaction<Database>, events: readonly StoredEvent[], hooks: WriteHooks): Promise<void> {
    const projects = [...new Set(events.flatMap((e) => (e.projectId === null ? [] : [e.projectId])))];
    if (projects.length === 0) return;
    const hooksOfProjects = await deliveries.enabledHooksOf(trx, projects);
    if (hooksOfProjects.length === 0) return;
    const now = this.clock.now();
    const createdAt = isoTime(now);
    const leaseUntil = isoTime(now + this.leaseMs);
    const queued: NewDelivery[] = [];
    const reserved: Claimed[] = [];
    for (const event of events) {
      for (const hook of hooksOfProjects) {
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
        const claimNow = !this.stopped && this.slots.reserve(hook.id);
        if (!claimNow) this.backlog = true;
        queued.push(claimNow ? { ...delivery, leaseUntil } : delivery);
        if (claimNow) {
          reserved.push({
            ...delivery,
            attempts: 1,
            leaseUntil,
            url: hook.url,
            secret: hook.secret,
            projectId: hook.project_id,
          });
        }
      }
    }
    // Added before the insert: should it fail, the write rolls back and the slots come back.
    hooks.afterRollback(() => {
      for (const claimed of reserved) this.slots.unreserve(claimed.webhookId);
    });
    hooks.afterCommit(() => {
      for (const claimed of reserved) {
        this.slots.unreserve(claimed.webhookId);
        if (!this.stopped) this.send(claimed);
      }
      if (this.backlog) this.kick();
    });
    await insertDeliveries(trx, queued);
  }

  /** Looks for work now (a write was committed, a delivery queued, a send finished). Coalesced. */
  kick(): void {
    if (!this.stopped) this.job.kick();
  }

  /** Stops claiming, aborts sends in flight and hands their deliveries back (not counted as attempts). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.outcomes.hurry();
    this.abort.abort();
    await this.job.stop();
    await Promise.allSettled(this.storing);
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /**
   * Claims due deliveries for the free slots and starts sending them. Webhooks already at their fair share
   * of sends here are left out of the query, and it is asked again while slots stay free, so the backlog
   * of one slow webhook never hides the due deliveries of the others.
   */
  private async claimAndSend(): Promise<void> {
    for (let round = 0; round < 8 && !this.stopped; round++) {
      const free = this.slots.free();
      if (free <= 0) return;
      const saturated = this.slots.saturated();
      let choice = { chosen: [] as readonly string[], held: [] as readonly string[], capped: false };
      const now = this.clock.now();
      let claimed: Claimed[];
      try {
        claimed = await deliveries.claimDue(
          this.db,
          {
            now: isoTime(now),
            leaseUntil: isoTime(now + this.leaseMs),
            limit: free * PER_WEBHOOK,
            excluding: saturated,
            skipLocked: this.options.postgres,
          },
          (rows) => {
            choice = this.slots.choose(rows, free);
            return choice.chosen;
          },
        );
      } catch (error) {
        this.slots.unhold(choice.held);
        throw error;
      }
      for (const delivery of claimed) this.send(delivery);
      // Sent (their slots now count in flight): the claim's hold goes, in the same turn.
      this.slots.unhold(choice.held);
      // Slots left and nothing skipped for a webhook's cap: nothing else is due now, but for the webhooks
      // left out as saturated (their sends, as they finish, look again). Otherwise ask again, without the
      // webhooks that just reached their cap.
      if (claimed.length < free && !choice.capped) {
        this.backlog = saturated.length > 0;
        return;
      }
      if (claimed.length === 0) return;
    }
  }

  private send(delivery: Claimed): void {
    this.slots.started(delivery.webhookId);
    // The slot is the HTTP request: it is given back as soon as the answer is in. The lease stays until
    // the outcome is stored, so no dispatcher sends the delivery again meanwhile.
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      this.slots.finished(delivery.webhookId);
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
      // An attempt cut short by shutdown is not the receiver's failure: the next dispatcher sends it again.
      if (this.abort.signal.aborted && attempt.statusCode === undefined) {
        await deliveries.handBack(this.db, delivery.id, delivery.leaseUntil);
      } else await this.record(delivery, attempt);
    })()
      .catch((error) => this.logger.warn({ err: error, delivery: delivery.id }, "could not record a webhook delivery"))
      .finally(() => {
        free();
        this.storing.delete(sending);
      });
    this.storing.add(sending);
  }

  /**
   * Stores an attempt's outcome as the retry policy judges it. Outcomes are stored in batches (see
   * `OutcomeBatcher`); the lease is held until then, so nothing is sent twice meanwhile, and a crash before
   * the write only means the delivery is sent again once its lease lapses (at least once, as always).
   */
  private async record(delivery: Claimed, attempt: Attempt): Promise<void> {
    const now = this.clock.now();
    const verdict = judgeAttempt(this.policy, delivery, attempt.error !== undefined, now);
    const last = {
      lease_until: null,
      last_attempt_at: isoTime(now),
      last_status_code: attempt.statusCode ?? null,
      last_error: attempt.error ?? null,
      last_duration_ms: attempt.durationMs,
    };
    const store = (values: Outcome) => this.outcomes.add({ id: delivery.id, lease: delivery.leaseUntil, values });
    if (verdict.status === "retrying") {
      await store({ ...last, next_attempt_at: isoTime(verdict.nextAttemptAt) });
      this.metrics.recordDelivery(delivery.webhookId, "retrying");
      // Due before the next poll: wake up for it.
      const wait = verdict.nextAttemptAt - this.clock.now();
      if (wait < POLL_MS) setTimeout(() => this.kick(), Math.max(0, wait)).unref();
      return;
    }
    await store({ ...last, status: verdict.status, next_attempt_at: null, finished_at: isoTime(now) });
    this.metrics.recordDelivery(delivery.webhookId, verdict.status);
    if (verdict.status === "failed" && verdict.deadWebhook) await this.announceIfDead(delivery, attempt);
  }

  /** A webhook whose deliveries have all failed since this one was created has failed for a whole window. */
  private async announceIfDead(delivery: Claimed, attempt: Attempt): Promise<void> {
    if (await deliveries.succeededSince(this.db, delivery.webhookId, delivery.createdAt)) return;
    const reason = disabledReason(this.options.retryWindowMs, attempt.error);
    await this.deadWebhooks.publish({ projectId: delivery.projectId, webhookId: delivery.webhookId, reason });
  }
}
