import {
  type CreatedWebhook,
  DELIVERY_STATUSES,
  type UpdateWebhookInput,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryStatus,
  type WebhookEventPattern,
} from "@flagstaff/sdk";
import type { Command, Context, Noun } from "../command.js";
import { firstItems, limitOf, limitOption, PAGE_MAX } from "../lists.js";
import { clip, type Column, record, table } from "../output.js";

const STATUSES: readonly WebhookDeliveryStatus[] = DELIVERY_STATUSES;

const enabled = (w: Webhook) => (w.enabled ? "yes" : w.disabledReason === null ? "no" : "no (by the service)");

const COLUMNS: Column<Webhook>[] = [
  ["ID", (w) => w.id],
  ["URL", (w) => clip(w.url, 60)],
  ["EVENTS", (w) => clip(w.events.join(","))],
  ["ENABLED", enabled],
  ["DESCRIPTION", (w) => clip(w.description)],
];

const show = (w: Webhook) =>
  record({
    id: w.id,
    projectId: w.projectId,
    url: w.url,
    events: w.events.join(", "),
    description: w.description,
    enabled: w.enabled,
    disabledReason: w.disabledReason,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  });

/** How a new webhook's signing secret is shown: once, with the warning to store it. */
const showSecret = (w: CreatedWebhook) =>
  [
    show(w),
    "",
    "Store this signing secret now. It is shown this once and cannot be retrieved again:",
    "",
    `  ${w.secret}`,
  ].join("\n");

/** The last attempt in a few words: the error (which names an HTTP status), the status, or nothing yet. */
const lastResult = (d: WebhookDelivery) =>
  d.lastError !== null ? clip(d.lastError) : d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : "-";

const DELIVERY_COLUMNS: Column<WebhookDelivery>[] = [
  ["CREATED", (d) => d.createdAt],
  ["EVENT", (d) => d.eventId],
  ["TYPE", (d) => d.eventType],
  ["STATUS", (d) => d.status],
  ["ATTEMPTS", (d) => String(d.attempts)],
  ["LAST RESULT", lastResult],
  ["NEXT ATTEMPT", (d) => d.nextAttemptAt ?? "-"],
];

const showDelivery = (d: WebhookDelivery) =>
  record({
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.nextAttemptAt,
    lastAttemptAt: d.lastAttemptAt,
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
    lastDurationMs: d.lastDurationMs,
    createdAt: d.createdAt,
    finishedAt: d.finishedAt,
  });

const eventOption = {
  type: "string",
  multiple: true,
  value: "<pattern>",
  description: "An event type such as flag.updated, a kind such as flag.*, or * for all (repeatable)",
} as const;

/** The --event patterns given, or undefined when none was. */
function patterns(ctx: Context): WebhookEventPattern[] | undefined {
  const given = ctx.strings("event");
  return given.length === 0 ? undefined : (given as WebhookEventPattern[]);
}

/** A PATCH of the webhook named by the first argument. */
async function update(ctx: Context, input: UpdateWebhookInput): Promise<void> {
  ctx.print(await ctx.client().webhooks.update(ctx.project(), ctx.arg(0), input), show);
}

const switching = (on: boolean, summary: string): Command => ({
  args: "<id>",
  summary,
  run: (ctx) => update(ctx, { enabled: on }),
});

export const webhooks: Noun = {
  name: "webhooks",
  summary: "Webhooks of a project: where its events are POSTed, and how each delivery went (admin key)",
  verbs: {
    list: {
      summary: "List the project's webhooks, oldest first (never their secrets)",
      async run(ctx) {
        const rows = await ctx.client().webhooks.list(ctx.project(), { limit: PAGE_MAX }).toArray();
        ctx.print(rows, (data) => table(data, COLUMNS, "No webhooks."));
      },
    },
    get: {
      args: "<id>",
      summary: "Show a webhook",
      async run(ctx) {
        ctx.print(await ctx.client().webhooks.get(ctx.project(), ctx.arg(0)), show);
      },
    },
    create: {
      // The URL is an argument: --url is the server's address, as in every command.
      args: "<url>",
      summary: "Create a webhook that POSTs to <url> and print its signing secret once",
      options: {
        event: { ...eventOption, description: `${eventOption.description}; default *` },
        description: { type: "string", value: "<text>", description: "What the webhook is for" },
        disabled: { type: "boolean", description: "Create it turned off" },
      },
      async run(ctx) {
        const created = await ctx.client().webhooks.create(ctx.project(), {
          url: ctx.arg(0),
          events: patterns(ctx),
          description: ctx.string("description"),
          enabled: ctx.boolean("disabled") ? false : undefined,
        });
        ctx.print(created, showSecret);
      },
    },
    update: {
      args: "<id>",
      summary: "Change a webhook's URL, events or description",
      options: {
        target: { type: "string", value: "<url>", description: "New URL that receives the POSTs" },
        event: { ...eventOption, description: `${eventOption.description}; replaces the list` },
        description: { type: "string", value: "<text>", description: "New description" },
      },
      run(ctx) {
        const input: UpdateWebhookInput = {
          url: ctx.string("target"),
          events: patterns(ctx),
          description: ctx.string("description"),
        };
        if (Object.values(input).every((v) => v === undefined)) {
          throw ctx.usage("Nothing to change: pass --target, --event or --description.");
        }
        return update(ctx, input);
      },
    },
    enable: switching(true, "Turn a webhook on (again): its pending deliveries resume"),
    disable: switching(false, "Turn a webhook off: events are not queued for it until it is on again"),
    delete: {
      args: "<id>",
      summary: "Delete a webhook and its deliveries",
      async run(ctx) {
        await ctx.client().webhooks.delete(ctx.project(), ctx.arg(0));
        ctx.done(`Deleted webhook ${ctx.arg(0)}.`);
      },
    },
    deliveries: {
      args: "<id>",
      summary: "List a webhook's deliveries, newest first: attempts, last result, next retry",
      options: {
        status: { type: "string", value: DELIVERY_STATUSES.join("|"), description: "Only deliveries in this state" },
        limit: limitOption("deliveries"),
      },
      async run(ctx) {
        const count = limitOf(ctx);
        const status = ctx.string("status");
        if (status !== undefined && !STATUSES.includes(status as WebhookDeliveryStatus)) {
          throw ctx.usage(`--status must be one of ${STATUSES.join(", ")}, got "${status}".`);
        }
        const rows = await firstItems(count, (limit) =>
          ctx.client().webhooks.deliveries(ctx.project(), ctx.arg(0), {
            status: status as WebhookDeliveryStatus | undefined,
            limit,
          }),
        );
        ctx.print(rows, (data) => table(data, DELIVERY_COLUMNS, "No deliveries."));
      },
    },
    test: {
      args: "<id>",
      summary: "Send a ping to a webhook now (tried once, even when it is off) and print the queued delivery",
      async run(ctx) {
        const delivery = await ctx.client().webhooks.test(ctx.project(), ctx.arg(0));
        ctx.print(delivery, (d) =>
          [
            showDelivery(d),
            "",
            `Queued. See how it went with: flagstaff webhooks deliveries ${ctx.arg(0)} --limit 1`,
          ].join("\n"),
        );
      },
    },
  },
};
