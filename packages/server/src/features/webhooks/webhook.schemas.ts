import { type Static, Type } from "typebox";
import { NullableTimestamp, PageQuerySchema, Timestamp } from "../../http/schemas.js";
import { EVENT_TYPES } from "../history/domain-events.js";

const KINDS = ["project", "key", "flag", "segment", "actor", "webhook"] as const;

/** What a webhook may subscribe to: an event type, every type of a kind (`flag.*`), or everything (`*`). */
export const EVENT_PATTERNS = ["*", ...KINDS.map((k) => `${k}.*`), ...EVENT_TYPES] as const;

const EventPattern = Type.Union(
  EVENT_PATTERNS.map((p) => Type.Literal(p)),
  { description: "An event type, a kind's types (flag.*), or * for every event" },
);
const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: "http or https URL that receives the POSTs; private and loopback addresses are refused by default",
});
const Patterns = Type.Array(EventPattern, { minItems: 1, maxItems: 50, uniqueItems: true });
const Description = Type.String({ maxLength: 1024 });

const webhookFields = {
  id: Type.String({ description: "wh_ and a ULID" }),
  projectId: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String(), { description: "The event patterns this webhook receives" }),
  description: Type.String(),
  enabled: Type.Boolean({
    description: "false when turned off, by a person or after failing for a whole retry window",
  }),
  disabledReason: Type.Union([Type.String(), Type.Null()], {
    description: "Why the service turned it off; null when enabled or turned off by a person",
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

export const WebhookSchema = Type.Object(webhookFields, {
  $id: "Webhook",
  description: "A webhook, without its secret",
});
export type Webhook = Static<typeof WebhookSchema>;

export const CreatedWebhookSchema = Type.Object(
  {
    ...webhookFields,
    secret: Type.String({
      description: "The Standard Webhooks signing secret (whsec_…). Shown in this answer only; store it now.",
    }),
  },
  { $id: "CreatedWebhook" },
);
export type CreatedWebhook = Static<typeof CreatedWebhookSchema>;

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: Type.Optional({ ...Patterns, description: 'Event patterns; default ["*"]' }),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ description: "Default true" })),
  },
  { additionalProperties: false },
);
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Patterns),
    description: Type.Optional(Description),
    enabled: Type.Optional(
      Type.Boolean({ description: "true turns a disabled webhook back on; its pending deliveries resume" }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export type DeliveryStatus = "pending" | "succeeded" | "failed";
const Status = Type.Union([Type.Literal("pending"), Type.Literal("succeeded"), Type.Literal("failed")]);

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ description: "dlv_ and a ULID" }),
    webhookId: Type.String(),
    eventId: Type.String({ description: "The event's id: the webhook-id header, the receiver's idempotency key" }),
    eventType: Type.String({ description: "An event type, or ping for a test" }),
    status: {
      ...Status,
      description: "pending (not sent yet, or waiting for a retry), succeeded (a 2xx answer), failed (gave up)",
    },
    attempts: Type.Integer({ minimum: 0 }),
    nextAttemptAt: { ...NullableTimestamp, description: "When the next attempt is due; null once finished" },
    lastAttemptAt: NullableTimestamp,
    lastStatusCode: Type.Union([Type.Integer(), Type.Null()], {
      description: "The HTTP status of the last attempt; null when it got none (refused, timeout, unsafe target)",
    }),
    lastError: Type.Union([Type.String(), Type.Null()]),
    lastDurationMs: Type.Union([Type.Integer(), Type.Null()]),
    createdAt: Timestamp,
    finishedAt: NullableTimestamp,
  },
  { $id: "WebhookDelivery" },
);
export type Delivery = Static<typeof DeliverySchema>;

/** One delivery with the JSON body it POSTs (the same on every attempt). */
export const DeliveryWithPayloadSchema = Type.Object(
  {
    ...DeliverySchema.properties,
    payload: Type.Object(
      {},
      {
        additionalProperties: true,
        description: "The JSON body POSTed: the event as the history shows it, or a ping",
      },
    ),
  },
  { $id: "WebhookDeliveryWithPayload" },
);
export type DeliveryWithPayload = Static<typeof DeliveryWithPayloadSchema>;

export const DeliveryParams = Type.Object({
  projectId: Type.String(),
  webhookId: Type.String(),
  deliveryId: Type.String(),
});

export const WebhookParams = Type.Object({ projectId: Type.String(), webhookId: Type.String() });

export const ListDeliveriesQuery = Type.Object(
  {
    ...PageQuerySchema,
    status: Type.Optional(Status),
  },
  { additionalProperties: false },
);
