import { collectDefaultMetrics, Counter, Gauge, Histogram, type Metric, Registry } from "prom-client";
import { type DurationSeries, RequestDurations } from "./request-durations.js";
import type { Snapshot } from "../evaluation/snapshot.js";
import type { WebhookQueueState } from "../webhooks/delivery.repository.js";

/**
 * The service's Prometheus metrics, in a registry of its own (no global state, so several instances can
 * live in one process). Labelled children are cached, so recording a request costs two map lookups.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requestDurations: RequestDurations;
  /** Checks answered since the last scrape, added to the counter when it is read (a check costs an increment). */
  private pendingChecks = { enabled: 0, disabled: 0 };
  private readonly feedLag: Histogram;
  private readonly events: Counter<"type">;
  private readonly deliveries: Counter<"webhook" | "outcome">;
  private readonly snapshotsSent: Counter<"bytes">;
  private webhookQueue: (() => Promise<WebhookQueueState>) | undefined;
  private webhookSends: (() => ReadonlyMap<string, number>) | undefined;

  constructor(snapshot: Snapshot) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "flagstaff_" });
    this.requestDurations = new RequestDurations(
      "flagstaff_http_request_duration_seconds",
      "HTTP requests by route template, method and status; _count is the request count",
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    );
    this.registry.registerMetric(this.requestDurations as unknown as Metric);
    const pending = this.pendingChecks;
    new Counter({
      name: "flagstaff_checks_total",
      help: "Flag checks answered, by result",
      labelNames: ["result"],
      registers,
      collect() {
        this.inc({ result: "enabled" }, pending.enabled);
        this.inc({ result: "disabled" }, pending.disabled);
        pending.enabled = 0;
        pending.disabled = 0;
      },
    });
    this.feedLag = new Histogram({
      name: "flagstaff_change_feed_lag_seconds",
      help: "Time from a change's commit on another instance to its arrival in this instance's snapshot",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
      registers,
    });
    this.events = new Counter({
      name: "flagstaff_events_total",
      help: "Events (history entries) this instance's writes produced, by type",
      labelNames: ["type"],
      registers,
    });
    this.snapshotsSent = new Counter({
      name: "flagstaff_stream_snapshots_total",
      help: "Snapshots sent to project streams as they opened, by whether this one encoded the state (encoded) or reused the bytes encoded for an earlier stream at the same version (shared)",
      labelNames: ["bytes"],
      registers,
    });
    this.deliveries = new Counter({
      name: "flagstaff_webhook_deliveries_total",
      help: "Webhook delivery attempts this instance made, by webhook id and outcome (succeeded, retrying, failed)",
      labelNames: ["webhook", "outcome"],
      registers,
    });
    // A scrape while the database is away keeps the last figures rather than failing the whole page.
    let last: WebhookQueueState = { pending: 0, oldestPendingAt: undefined, pendingByWebhook: new Map() };
    // The three queue gauges are collected together: one read of the database serves them all.
    let reading: Promise<WebhookQueueState> | undefined;
    const queue = () => {
      reading ??= (async () => {
        try {
          if (this.webhookQueue) last = await this.webhookQueue();
        } catch {
          // keep the last figures
        } finally {
          reading = undefined;
        }
        return last;
      })();
      return reading;
    };
    new Gauge({
      name: "flagstaff_webhook_outbox_depth",
      help: "Webhook deliveries waiting to be sent or retried (of enabled webhooks), read from the database: the same on every instance",
      registers,
      async collect() {
        this.set((await queue()).pending);
      },
    });
    new Gauge({
      name: "flagstaff_webhook_oldest_pending_seconds",
      help: "Age of the oldest delivery waiting (of enabled webhooks); 0 when nothing waits",
      registers,
      async collect() {
        const oldest = (await queue()).oldestPendingAt;
        this.set(oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000));
      },
    });
    new Gauge({
      name: "flagstaff_webhook_backlog",
      help: "Webhook deliveries waiting, by webhook id (enabled webhooks with any waiting), read from the database: the same on every instance",
      labelNames: ["webhook"],
      registers,
      async collect() {
        const byWebhook = (await queue()).pendingByWebhook;
        this.reset();
        for (const [webhook, n] of byWebhook) this.set({ webhook }, n);
      },
    });
    const sends = () => this.webhookSends?.() ?? new Map<string, number>();
    new Gauge({
      name: "flagstaff_webhook_in_flight",
      help: "Webhook deliveries this instance is sending now, by webhook id (webhooks with any): the slots each holds",
      labelNames: ["webhook"],
      registers,
      collect() {
        this.reset();
        for (const [webhook, n] of sends()) this.set({ webhook }, n);
      },
    });
    new Gauge({
      name: "flagstaff_snapshot_size",
      help: "What the in-memory evaluation snapshot holds, by kind",
      labelNames: ["kind"],
      registers,
      collect() {
        let flags = 0;
        let memberships = 0;
        let attachments = 0;
        let environments = 0;
        for (const project of snapshot.projects.values()) {
          environments += project.environments.size;
          for (const state of project.environments.values()) {
            flags += state.flagsById.size;
            for (const flag of state.flagsById.values()) attachments += flag.actors.size + flag.segments.size;
          }
          for (const members of project.segmentMembers.values()) memberships += members.size;
        }
        this.set({ kind: "environments" }, environments);
        this.set({ kind: "projects" }, snapshot.projects.size);
        // A flag's configuration in each environment counts once per environment.
        this.set({ kind: "flags" }, flags);
        this.set({ kind: "flag_attachments" }, attachments);
        this.set({ kind: "segment_memberships" }, memberships);
        this.set({ kind: "api_keys" }, snapshot.keyCount);
      },
    });
  }

  recordRequest(method: string, route: string, status: number, seconds: number): void {
    this.requestDurations.seriesOf(method, route, status).observe(seconds);
  }

  /** One request series to record into without a lookup (the check's fast path holds its 200 series). */
  requestSeries(method: string, route: string, status: number): DurationSeries {
    return this.requestDurations.seriesOf(method, route, status);
  }

  recordCheck(enabled: boolean): void {
    if (enabled) this.pendingChecks.enabled++;
    else this.pendingChecks.disabled++;
  }

  /** Counts many checks at once (OFREP's bulk answer). */
  recordChecks(enabled: number, disabled: number): void {
    this.pendingChecks.enabled += enabled;
    this.pendingChecks.disabled += disabled;
  }

  snapshotSent(encoded: boolean): void {
    this.snapshotsSent.labels(encoded ? "encoded" : "shared").inc();
  }

  recordEvent(type: string): void {
    this.events.labels(type).inc();
  }

  recordDelivery(webhookId: string, outcome: "succeeded" | "retrying" | "failed"): void {
    this.deliveries.labels(webhookId, outcome).inc();
  }

  /** Where the webhook queue gauges read from at each scrape. */
  watchWebhookQueue(read: () => Promise<WebhookQueueState>): void {
    this.webhookQueue = read;
  }

  /** Where the in-flight gauge reads this instance's sends by webhook from at each scrape. */
  watchWebhookSends(read: () => ReadonlyMap<string, number>): void {
    this.webhookSends = read;
  }

  recordFeedLag(seconds: number): void {
    this.feedLag.observe(Math.max(0, seconds));
  }
}
