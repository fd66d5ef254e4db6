import { Type } from "typebox";
import { errorResponses, pageRead } from "../schemas.js";
import { PageOf } from "../../kernel/schemas.js";
import type { TypedApp } from "../typed-app.js";
import { toPageQuery } from "../../kernel/pagination.js";
import { FlagParams } from "../../features/flags/flag.schemas.js";
import { ListEventsQuery, ListFlagEventsQuery } from "../../features/history/event.schemas.js";
import type { EventService } from "../../features/history/event.service.js";

const Event = Type.Ref("Event");

export function eventRoutes(app: TypedApp, events: EventService): void {
  app.get(
    "/projects/:projectId/events",
    {
      config: { access: "read" },
      schema: {
        tags: ["history"],
        summary: "List a project's events (its history), newest first",
        description:
          "Webhook events (`webhook.*`) are listed to admin keys only, as the webhooks themselves are; other " +
          "keys get the rest of the history. Webhook URLs are recorded without credentials, query or fragment.",
        params: Type.Object({ projectId: Type.String() }),
        querystring: ListEventsQuery,
        response: { 200: PageOf(Event), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => {
      const { limit, before, after, ...filters } = request.query;
      const { projectId } = request.params;
      // The webhooks API is admin-only: its events are too, or they would show the webhooks to other keys.
      const principal = request.principal;
      const seesWebhooks = request.projectRole === "admin";
      const boundTo = principal?.environment ?? null;
      return events.list(projectId, filters, toPageQuery({ limit, before, after }, 1), seesWebhooks, boundTo);
    },
  );

  app.get(
    "/projects/:projectId/flags/:flagName/events",
    pageRead({
      tags: ["history", "flags"],
      summary: "List the events of a flag name, newest first, across deletes and re-creates",
      params: FlagParams,
      querystring: ListFlagEventsQuery,
      item: Event,
    }),
    async (request) => {
      const { limit, before, after, ...filters } = request.query;
      const { projectId, flagName } = request.params;
      const boundTo = request.principal?.environment ?? null;
      return events.listForFlag(projectId, flagName, filters, toPageQuery({ limit, before, after }, 1), boundTo);
    },
  );
}
