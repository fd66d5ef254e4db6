import { Type } from "typebox";
import { errorResponses } from "../schemas.js";
import { NoContent, PageOf, PageQuery, ProjectParams } from "../../kernel/schemas.js";
import type { TypedApp } from "../typed-app.js";
import { writeContext } from "../write-context.js";
import { toPageQuery } from "../../kernel/pagination.js";
import {
  CreateWebhookBody,
  DeliveryParams,
  ListDeliveriesQuery,
  UpdateWebhookBody,
  WebhookParams,
} from "../../features/webhooks/webhook.schemas.js";
import type { WebhookService } from "../../features/webhooks/webhook.service.js";

const tags = ["webhooks"];

/**
 * Webhooks belong to the whole project: each one receives every environment's events, and cannot be
 * limited to one. A key bound to an environment uses none of these routes (see mayReach).
 */
const WEBHOOKS = "use the project's webhooks (each receives every environment's events)";

export function webhookRoutes(app: TypedApp, webhooks: WebhookService): void {
  app.post(
    "/projects/:projectId/webhooks",
    {
      config: { access: "admin", projectWide: WEBHOOKS },
      schema: {
        tags,
        summary: "Create a webhook (extension; admin)",
        description:
          "Every event of the project matching `events` is POSTed to `url`, signed the Standard Webhooks way " +
          "with `secret`, which is in this answer only.",
        params: ProjectParams,
        body: CreateWebhookBody,
        response: {
          201: Type.Ref("CreatedWebhook"),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await webhooks.create(writeContext(request), request.params.projectId, request.body)),
  );

  app.get(
    "/projects/:projectId/webhooks",
    {
      config: { access: "admin", projectWide: WEBHOOKS },
      schema: {
        tags,
        summary: "List a project's webhooks, oldest first, without secrets (extension; admin)",
        params: ProjectParams,
        querystring: PageQuery,
        response: { 200: PageOf(Type.Ref("Webhook")), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => webhooks.list(request.params.projectId, toPageQuery(request.query, 1)),
  );

  app.get(
    "/projects/:projectId/webhooks/:webhookId",
    {
      config: { access: "admin", projectWide: WEBHOOKS },
      schema: {
        tags,
        summary: "Get a webhook (extension; admin)",
        params: WebhookParams,
        response: { 200: Type.Ref("Webhook"), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => webhooks.get(request.params.projectId, request.params.webhookId),
  );

  app.patch(
    "/projects/:projectId/webhooks/:webhookId",
    {
      config: { access: "admin", projectWide: WEBHOOKS },
      schema: {
        tags,
        summary: "Change a webhook's url, events, description or enabled (extension; admin)",
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: Type.Ref("Webhook"), ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request) =>
      webhooks.update(writeContext(request), request.params.projectId, request.params.webhookId, request.body),
  );

  app.delete(
    "/projects/:projectId/webhooks/:webhookId",
    {
      config: { access: "admin", projectWide: WEBHOOKS },
      schema: {
        tags,
        summary: "Delete a webhook and its deliveries (extension; admin)",
        params: WebhookParams,
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      await webhooks.delete(writeContext(request), request.params.projectId, request.params.webhookId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/projects/:projectId/webhooks/:webhookId/deliveries",
    {
      config: { access: "admin", projectWide: WEBHOOKS },
      schema: {
        tags,
        summary: "A webhook's deliveries, newest first: attempts, last status, error, next retry (extension; admin)",
        params: WebhookParams,
        querystring: ListDeliveriesQuery,
        response: {
          200: PageOf(Type.Ref("WebhookDelivery")),
          ...errorResponses(400, 401, 403, 404, 429, 500, 503),
        },
      },
    },
    async (request) =>
      webhooks.deliveries(
        request.params.projectId,
        request.params.webhookId,
        request.query.status,
        toPageQuery(request.query, 1),
      ),
  );

  app.get(
    "/projects/:projectId/webhooks/:webhookId/deliveries/:deliveryId",
    {
      config: { access: "admin", projectWide: WEBHOOKS },
      schema: {
        tags,
        summary: "One delivery with the JSON body it POSTs (extension; admin)",
        params: DeliveryParams,
        response: {
          200: Type.Ref("WebhookDeliveryWithPayload"),
          ...errorResponses(400, 401, 403, 404, 429, 500, 503),
        },
      },
    },
    async (request) => webhooks.delivery(request.params.projectId, request.params.webhookId, request.params.deliveryId),
  );

  app.post(
    "/projects/:projectId/webhooks/:webhookId/test",
    {
      config: { access: "admin", projectWide: WEBHOOKS },
      schema: {
        tags,
        summary: "Send a ping event to a webhook now (extension; admin)",
        description:
          "Queues one `ping` delivery, tried once (disabled webhooks included); its outcome shows in the deliveries.",
        params: WebhookParams,
        response: { 202: Type.Ref("WebhookDelivery"), ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(await webhooks.ping(writeContext(request), request.params.projectId, request.params.webhookId)),
  );
}
