import type { Transport } from "./http.js";
import { PageList } from "./pagination.js";
import { pageQuery, param } from "./params.js";
import type {
  CreatedWebhook,
  CreateWebhookInput,
  DeliveryListOptions,
  ListOptions,
  Page,
  UpdateWebhookInput,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryWithPayload,
} from "./types.js";

/**
 * Webhooks of a project (admin key): where its events are POSTed, signed the Standard Webhooks way, and
 * how each delivery went.
 */
export class WebhooksApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  private path(projectId: string, webhookId: string): string {
    return `/projects/${param("projectId", projectId)}/webhooks/${param("webhookId", webhookId)}`;
  }

  /**
   * Creates a webhook (`POST /projects/{projectId}/webhooks`); the answer holds the signing `secret`,
   * shown only this once. An unsafe or malformed `url` is a 400 on `/url`.
   */
  async create(projectId: string, input: CreateWebhookInput): Promise<CreatedWebhook> {
    const path = `/projects/${param("projectId", projectId)}/webhooks`;
    return (await this.http.request<CreatedWebhook>({ method: "POST", path, body: input })).body;
  }

  /** Lists the project's webhooks, oldest first, without secrets (`GET /projects/{projectId}/webhooks`). */
  list(projectId: string, options: ListOptions = {}): PageList<Webhook> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/webhooks`;
      return (await this.http.request<Page<Webhook>>({ method: "GET", path, query: pageQuery(page) })).body;
    }, options.limit);
  }

  /** Retrieves a webhook (`GET …/webhooks/{webhookId}`); 404 webhook_not_found. */
  async get(projectId: string, webhookId: string): Promise<Webhook> {
    return (await this.http.request<Webhook>({ method: "GET", path: this.path(projectId, webhookId) })).body;
  }

  /** Changes url, events, description or enabled (`PATCH …/webhooks/{webhookId}`); `enabled: true` resumes it. */
  async update(projectId: string, webhookId: string, input: UpdateWebhookInput): Promise<Webhook> {
    const path = this.path(projectId, webhookId);
    return (await this.http.request<Webhook>({ method: "PATCH", path, body: input })).body;
  }

  /** Deletes a webhook and its deliveries, pending ones included (`DELETE …/webhooks/{webhookId}`). */
  async delete(projectId: string, webhookId: string): Promise<void> {
    await this.http.request<void>({ method: "DELETE", path: this.path(projectId, webhookId) });
  }

  /**
   * Lists a webhook's deliveries, newest first, optionally of one status
   * (`GET …/webhooks/{webhookId}/deliveries`).
   */
  deliveries(projectId: string, webhookId: string, options: DeliveryListOptions = {}): PageList<WebhookDelivery> {
    return new PageList(async (page) => {
      const path = `${this.path(projectId, webhookId)}/deliveries`;
      const query = { status: options.status, ...pageQuery(page) };
      return (await this.http.request<Page<WebhookDelivery>>({ method: "GET", path, query })).body;
    }, options.limit);
  }

  /** One delivery with the JSON body it POSTs (`GET …/deliveries/{deliveryId}`); 404 delivery_not_found. */
  async delivery(projectId: string, webhookId: string, deliveryId: string): Promise<WebhookDeliveryWithPayload> {
    const path = `${this.path(projectId, webhookId)}/deliveries/${param("deliveryId", deliveryId)}`;
    return (await this.http.request<WebhookDeliveryWithPayload>({ method: "GET", path })).body;
  }

  /**
   * Queues a `ping` to the webhook, disabled or not, and answers the queued delivery
   * (`POST …/webhooks/{webhookId}/test`). It is tried once; its outcome shows in `deliveries`.
   */
  async test(projectId: string, webhookId: string): Promise<WebhookDelivery> {
    const path = `${this.path(projectId, webhookId)}/test`;
    return (await this.http.request<WebhookDelivery>({ method: "POST", path })).body;
  }
}
