import { type Static, Type } from "typebox";
import { DELIVERY_STATUSES, EVENT_PATTERNS, type EventType, type WebhookEventPattern } from "../contract/enums.js";
import { DESCRIPTION_MAX_LENGTH } from "../contract/limits.js";
import { oneOf, NullableTimestamp, Timestamp } from "./common.js";

const EventPattern = oneOf(EVENT_PATTERNS, {
  description: "An event type, a kind's types (flag.*), or * for every event",
});
const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: "http or https URL that receives the POSTs; private and loopback addresses are refused by default",
});
const Patterns = Type.Array(EventPattern, { minItems: 1, maxItems: 50, uniqueItems: true });
const Description = Type.String({ maxLength: DESCRIPTION_MAX_LENGTH });

export const BacklogSchema = Type.Object(
  {
    pending: Type.Integer({
      minimum: 0,
      description: "Deliveries not yet succeeded or given up: queued, being sent, or waiting for a retry",
    }),
    failing: Type.Integer({
      minimum: 0,
      description: "Of those, the ones whose last attempt failed (waiting for a retry)",
    }),
    oldestPendingAt: {
      ...NullableTimestamp,
      description:
        "When the oldest of them was queued; null when none waits. Its age is how far behind the receiver is",
    },
  },
  { description: "What waits for this webhook, read from the database (the same on every instance)" },
);
/** A webhook's deliveries still to succeed or be given up: how far behind its receiver is. */
export type WebhookBacklog = Static<typeof BacklogSchema>;

const webhookFields = {
  id: Type.String({ description: "wh_ and a ULID" }),
  projectId: Type.String(),
  url: Type.String(),
  // Strings in the document (patterns a later version adds must not break older clients); patterns in the type.
  events: Type.Unsafe<WebhookEventPattern[]>(
    Type.Array(Type.String(), { description: "The event patterns this webhook receives" }),
  ),
  description: Type.String(),
  enabled: Type.Boolean({
    description: "false when turned off, by a person or after failing for a whole retry window",
  }),
  disabledReason: Type.Union([Type.String(), Type.Null()], {
    description: "Why the service turned it off; null when enabled or turned off by a person",
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  backlog: BacklogSchema,
};

export const WebhookSchema = Type.Object(webhookFields, {
  $id: "Webhook",
  description: "A webhook, without its secret",
});
/** A webhook of a project, without its secret: where the project's events are POSTed. */
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
/** A webhook as answered by the create call: the only time its signing `secret` (`whsec_…`) is shown. */
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
/** Body of a webhook's create. */
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
/** Body of a webhook's update: every field optional; `enabled: true` turns a disabled webhook back on. */
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const DeliveryStatusSchema = oneOf(DELIVERY_STATUSES);

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ description: "dlv_ and a ULID" }),
    webhookId: Type.String(),
    eventId: Type.String({ description: "The event's id: the webhook-id header, the receiver's idempotency key" }),
    eventType: Type.Unsafe<EventType | "ping">(Type.String({ description: "An event type, or ping for a test" })),
    status: {
      ...DeliveryStatusSchema,
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
/** One event's delivery to one webhook: its attempts and how the last one went. */
export type WebhookDelivery = Static<typeof DeliverySchema>;

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
/** One delivery with the JSON body it POSTs, as the server stores it. */
export type WebhookDeliveryWithPayload = Static<typeof DeliveryWithPayloadSchema>;
