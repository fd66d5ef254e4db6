import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { type Clock, isoTime } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";
import { AppError, invalid, projectNotFound } from "../../kernel/errors.js";
import { newDeliveryId, newEventId, newWebhookId } from "../../kernel/ids.js";
import { assemblePage, type Page, type PageQuery } from "../../kernel/pagination.js";
import {
  type DomainEvent,
  WEBHOOK_DISPATCHER,
  type WebhookRecord as WebhookState,
  type WriteContext,
} from "../../write-path/domain-events.js";
import { EventBus } from "../../write-path/event-bus.js";
import type { UnitOfWork } from "../../write-path/unit-of-work.js";
import { findProject } from "../projects/project.repository.js";
import * as repo from "./webhook.repository.js";
import { redactUrl } from "../../write-path/redacted-url.js";
import { checkTarget, UnsafeTargetError } from "./safe-target.js";
import type {
  CreatedWebhook,
  CreateWebhookInput,
  Delivery,
  DeliveryWithPayload,
  DeliveryStatus,
  UpdateWebhookInput,
  Webhook,
  WebhookRecord,
} from "./webhook.schemas.js";

export const webhookNotFound = (projectId: string, id: string) =>
  new AppError(404, "webhook_not_found", `Webhook "${id}" does not exist in project "${projectId}".`);

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64 (the spec asks for 24 to 64). */
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

/** The state a webhook event records: everything but the secret, and the URL without its secrets. */
const state = (hook: WebhookRecord): WebhookState => ({
  id: hook.id,
  url: redactUrl(hook.url),
  events: hook.events,
  description: hook.description,
  enabled: hook.enabled,
  disabledReason: hook.disabledReason,
});

const target = (hook: WebhookRecord) => ({ kind: "webhook", id: hook.id, name: redactUrl(hook.url) }) as const;

const webhookCreated = (hook: WebhookRecord): DomainEvent => ({
  type: "webhook.created",
  projectId: hook.projectId,
  target: target(hook),
  before: null,
  after: state(hook),
});

const webhookUpdated = (before: WebhookRecord, after: WebhookRecord): DomainEvent => ({
  type: "webhook.updated",
  projectId: after.projectId,
  target: target(after),
  before: state(before),
  after: state(after),
});

const webhookDeleted = (hook: WebhookRecord): DomainEvent => ({
  type: "webhook.deleted",
  projectId: hook.projectId,
  target: target(hook),
  before: state(hook),
  after: null,
});

export interface WebhookServiceOptions {
  readonly allowPrivateNetworks: boolean;
}

/**
 * Webhooks: who gets told about a project's changes. Delivery itself is the dispatcher's: this service
 * only says, on `queued`, that deliveries may be due (a ping, a webhook turned back on), and turns off a
 * webhook the dispatcher found dead (`disable`).
 */
export class WebhookService {
  /** Deliveries may be due now (committed): the dispatcher looks now rather than at its next poll. */
  readonly queued = new EventBus<void>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: UnitOfWork,
    private readonly clock: Clock,
    private readonly options: WebhookServiceOptions,
  ) {}

  /** Checks a URL's scheme and addresses; an unsafe one is a 400 on `/url`. */
  private async target(url: string): Promise<string> {
    try {
      return (await checkTarget(url, this.options.allowPrivateNetworks)).href;
    } catch (error) {
      if (error instanceof UnsafeTargetError) throw invalid(error.message, [{ path: "/url", message: error.message }]);
      throw error;
    }
  }

  /** Webhooks as the API shows them: with their backlogs, read after the write that changed them. */
  private async withBacklogs<T extends WebhookRecord>(hooks: readonly T[]): Promise<(T & Pick<Webhook, "backlog">)[]> {
    const found = await repo.backlogs(
      this.db,
      hooks.map((h) => h.id),
    );
    return hooks.map((hook) => ({ ...hook, backlog: found.get(hook.id) as Webhook["backlog"] }));
  }

  private async withBacklog<T extends WebhookRecord>(hook: T): Promise<T & Pick<Webhook, "backlog">> {
    return (await this.withBacklogs([hook]))[0] as T & Pick<Webhook, "backlog">;
  }

  async create(context: WriteContext, projectId: string, input: CreateWebhookInput): Promise<CreatedWebhook> {
    // Resolved before the write's transaction: a slow DNS answer must not hold the project's write turn.
    const url = await this.target(input.url);
    const created = await this.work.write(context, projectId, async (trx) => {
      if (!(await findProject(trx, projectId))) throw projectNotFound(projectId);
      const now = this.clock.now();
      const hook: repo.StoredWebhook = {
        id: newWebhookId(now),
        projectId,
        url,
        events: input.events ?? ["*"],
        description: input.description ?? "",
        enabled: input.enabled ?? true,
        disabledReason: null,
        createdAt: isoTime(now),
        updatedAt: isoTime(now),
        secret: newSecret(),
      };
      await repo.insertWebhook(trx, hook);
      return { result: hook, events: [webhookCreated(repo.publicWebhook(hook))] };
    });
    return this.withBacklog(created);
  }

  async list(projectId: string, page: PageQuery): Promise<Page<Webhook>> {
    if (!(await findProject(this.db, projectId))) throw projectNotFound(projectId);
    const rows = await repo.listWebhooks(this.db, projectId, page);
    return assemblePage(
      page,
      await this.withBacklogs(rows.map(repo.publicWebhook)),
      (w) => [w.id],
      (side, key) => repo.webhooksBeyond(this.db, projectId, side, key),
    );
  }

  async get(projectId: string, id: string): Promise<Webhook> {
    return this.withBacklog(repo.publicWebhook(await this.find(projectId, id)));
  }

  private async find(projectId: string, id: string): Promise<repo.StoredWebhook> {
    const hook = await repo.findWebhook(this.db, projectId, id);
    if (hook) return hook;
    if (!(await findProject(this.db, projectId))) throw projectNotFound(projectId);
    throw webhookNotFound(projectId, id);
  }

  /** Changes a webhook; an update that changes nothing records nothing. */
  async update(context: WriteContext, projectId: string, id: string, input: UpdateWebhookInput): Promise<Webhook> {
    const url = input.url === undefined ? undefined : await this.target(input.url);
    const updated = await this.work.write(context, projectId, async (trx, hooks) => {
      if (!(await findProject(trx, projectId))) throw projectNotFound(projectId);
      const before = await repo.findWebhook(trx, projectId, id);
      if (!before) throw webhookNotFound(projectId, id);
      const enabled = input.enabled ?? before.enabled;
      const after: repo.StoredWebhook = {
        ...before,
        url: url ?? before.url,
        events: input.events ?? before.events,
        description: input.description ?? before.description,
        enabled,
        // Turning a webhook back on (or off by hand) clears the service's reason.
        disabledReason: input.enabled === undefined ? before.disabledReason : null,
      };
      const unchanged = JSON.stringify(state(before)) === JSON.stringify(state(after));
      if (unchanged) return { result: repo.publicWebhook(before), events: [] };
      const updated = { ...after, updatedAt: isoTime(this.clock.now()) };
      await repo.updateWebhook(trx, updated);
      // Its waiting deliveries are due again, once the write is committed.
      if (enabled && !before.enabled) hooks.afterCommit(() => this.announceQueued());
      const [b, a] = [repo.publicWebhook(before), repo.publicWebhook(updated)];
      return { result: a, events: [webhookUpdated(b, a)] };
    });
    return this.withBacklog(updated);
  }

  /** Deletes a webhook and its deliveries, pending ones included. */
  async delete(context: WriteContext, projectId: string, id: string): Promise<void> {
    await this.work.write(context, projectId, async (trx) => {
      if (!(await findProject(trx, projectId))) throw projectNotFound(projectId);
      const before = await repo.findWebhook(trx, projectId, id);
      if (!before) throw webhookNotFound(projectId, id);
      await repo.deleteWebhook(trx, id);
      return { result: undefined, events: [webhookDeleted(repo.publicWebhook(before))] };
    });
  }

  /**
   * Turns off a webhook that failed for a whole retry window, recorded in the history as the
   * dispatcher's change. Nothing happens when it was deleted or turned off meanwhile.
   */
  async disable(projectId: string, id: string, reason: string): Promise<void> {
    await this.work.write(WEBHOOK_DISPATCHER, projectId, async (trx) => {
      const before = await repo.findWebhook(trx, projectId, id);
      if (!before?.enabled) return { result: undefined, events: [] };
      const after = { ...before, enabled: false, disabledReason: reason, updatedAt: isoTime(this.clock.now()) };
      await repo.updateWebhook(trx, after);
      const [b, a] = [repo.publicWebhook(before), repo.publicWebhook(after)];
      return { result: undefined, events: [webhookUpdated(b, a)] };
    });
  }

  async deliveries(
    projectId: string,
    id: string,
    status: DeliveryStatus | undefined,
    page: PageQuery,
  ): Promise<Page<Delivery>> {
    await this.find(projectId, id);
    const rows = await repo.listDeliveries(this.db, id, status, page);
    return assemblePage(
      page,
      rows,
      (d) => [d.id],
      (side, key) => repo.deliveriesBeyond(this.db, id, status, side, key),
    );
  }

  /** One delivery of the webhook, with the body it POSTs. */
  async delivery(projectId: string, id: string, deliveryId: string): Promise<DeliveryWithPayload> {
    await this.find(projectId, id);
    const delivery = await repo.findDeliveryWithPayload(this.db, id, deliveryId);
    if (!delivery) {
      throw new AppError(404, "delivery_not_found", `Delivery "${deliveryId}" does not exist for webhook "${id}".`);
    }
    return delivery;
  }

  /**
   * Queues a `ping` for one webhook, signed like any event and tried once, enabled or not; not part of
   * the history. Answers the queued delivery.
   */
  async ping(context: WriteContext, projectId: string, id: string): Promise<Delivery> {
    const hook = await this.find(projectId, id);
    const now = this.clock.now();
    const eventId = newEventId(now);
    const body = {
      id: eventId,
      type: "ping",
      projectId,
      createdAt: isoTime(now),
      actor: context.actor,
      target: { kind: "webhook", id: hook.id, name: redactUrl(hook.url) },
      before: null,
      after: null,
      requestId: context.requestId,
    };
    const delivery: repo.NewDelivery = {
      id: newDeliveryId(now),
      webhookId: hook.id,
      eventId,
      eventType: "ping",
      payload: JSON.stringify(body),
      createdAt: isoTime(now),
    };
    await repo.insertDeliveries(this.db, [delivery]);
    // Read back before the dispatcher is told, so the answer shows it as queued, not already claimed.
    const queued = await repo.findDelivery(this.db, delivery.id);
    if (!queued) throw new Error("a queued ping delivery could not be read back");
    this.announceQueued();
    return queued;
  }

  private announceQueued(): void {
    this.queued.publish().catch(() => {
      // A listener only hurries the dispatcher along: its poll finds the deliveries all the same.
    });
  }
}
