import type { FeatureDeps, FeatureModule } from "./feature-module.js";
import type { WebhookDispatcher } from "../features/webhooks/dispatcher.js";
import { webhookRoutes } from "../http/routes/webhook.routes.js";
import { WebhookService } from "../features/webhooks/webhook.service.js";

export interface WebhooksModuleDeps extends FeatureDeps {
  /** Built by app.ts before the unit of work, whose outbox enqueues into it. */
  readonly dispatcher: WebhookDispatcher;
  readonly allowPrivateNetworks: boolean;
}

export function webhooksModule({
  db,
  work,
  clock,
  dispatcher,
  allowPrivateNetworks,
}: WebhooksModuleDeps): FeatureModule<{ webhooks: WebhookService }> {
  const webhooks = new WebhookService(db, work, clock, { allowPrivateNetworks });
  // Signals, not calls, between the two: the dispatcher knows nothing of the service, nor it of the dispatcher.
  webhooks.queued.subscribe(() => dispatcher.kick());
  dispatcher.deadWebhooks.subscribe((dead) => webhooks.disable(dead.projectId, dead.webhookId, dead.reason));
  return { services: { webhooks }, routes: (app) => webhookRoutes(app, webhooks) };
}
