import { PageQuerySchema } from "../../kernel/schemas.js";
import { DeliveryStatusSchema } from "@flagstaff/core/schemas";
import { Type } from "typebox";

// The webhook's shapes are the API's contract, shared with the clients: @flagstaff/core/schemas.
export { type DeliveryStatus, EVENT_PATTERNS } from "@flagstaff/core";
export {
  CreatedWebhookSchema,
  type CreatedWebhook,
  CreateWebhookBody,
  type CreateWebhookInput,
  DeliverySchema,
  DeliveryWithPayloadSchema,
  type WebhookDelivery as Delivery,
  type WebhookDeliveryWithPayload as DeliveryWithPayload,
  UpdateWebhookBody,
  type UpdateWebhookInput,
  type Webhook,
  type WebhookBacklog as Backlog,
  WebhookSchema,
} from "@flagstaff/core/schemas";

import type { Webhook } from "@flagstaff/core/schemas";
/** A webhook as stored: without its backlog, which is read from its deliveries. */
export type WebhookRecord = Omit<Webhook, "backlog">;

export const DeliveryParams = Type.Object({
  projectId: Type.String(),
  webhookId: Type.String(),
  deliveryId: Type.String(),
});

export const WebhookParams = Type.Object({ projectId: Type.String(), webhookId: Type.String() });

export const ListDeliveriesQuery = Type.Object(
  {
    ...PageQuerySchema,
    status: Type.Optional(DeliveryStatusSchema),
  },
  { additionalProperties: false },
);
