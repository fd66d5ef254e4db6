import { CHANGE_REQUEST_STATES, type ChangeRequestState } from "@flagstaff/core";
import { Type } from "typebox";
import { errorResponses } from "../schemas.js";
import { PageOf, PageQuerySchema, ProjectParams } from "../../kernel/schemas.js";
import type { TypedApp } from "../typed-app.js";
import { writeContext } from "../write-context.js";
import { invalid } from "../../kernel/errors.js";
import { toPageQuery } from "../../kernel/pagination.js";
import { refuseOtherEnvironment } from "../../access/environment-scope.js";
import {
  ApplyChangeRequestBody,
  ChangeRequestSchema,
  CreateChangeRequestBody,
  ReviewBody,
  ScheduleEntrySchema,
  UpdateChangeRequestBody,
} from "../../features/change-requests/change-request.schemas.js";
import type { ChangeRequestService } from "../../features/change-requests/change-request.service.js";
import type { ScheduleService } from "../../features/change-requests/schedule.service.js";

const ChangeRequest = Type.Ref("ChangeRequest");
const RequestParams = Type.Object({ projectId: Type.String(), changeRequestId: Type.String() });
const WRITE_ERRORS = [400, 401, 403, 404, 409, 413, 415, 429, 500, 503] as const;

const ListQuery = Type.Object(
  {
    ...PageQuerySchema,
    state: Type.Optional(
      Type.String({
        maxLength: 200,
        description: `States to list, comma-separated (${CHANGE_REQUEST_STATES.join(", ")}); default every state`,
      }),
    ),
    environment: Type.Optional(Type.String({ minLength: 1, description: "Requests of this environment" })),
    author: Type.Optional(Type.String({ minLength: 1, description: "Requests by this person (usr_…) or key (key_…)" })),
  },
  { additionalProperties: false },
);

/** `?state=open,approved` as the states it names; an unknown one is a 400 naming it. */
function statesOf(parameter: string | undefined): ChangeRequestState[] | undefined {
  if (parameter === undefined) return undefined;
  const states = parameter
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const unknown = states.filter((s) => !(CHANGE_REQUEST_STATES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw invalid(`Unknown change request state "${unknown[0]}".`, [
      { path: "/query/state", message: `must be among ${CHANGE_REQUEST_STATES.join(", ")}` },
    ]);
  }
  return states as ChangeRequestState[];
}

/**
 * Change requests (docs/change-requests.md) and the project's schedule. Anyone with write on the project
 * opens, applies (once approved) and cancels (their own) requests; reviews are people's; what each may do
 * beyond the route's role is the service's to decide.
 */
export function changeRequestRoutes(app: TypedApp, requests: ChangeRequestService, schedule: ScheduleService): void {
  app.addSchema(ChangeRequestSchema);

  app.get(
    "/projects/:projectId/change-requests",
    {
      config: { access: "read" },
      schema: {
        tags: ["change requests"],
        summary: "List a project's change requests, newest first (extension)",
        params: ProjectParams,
        querystring: ListQuery,
        response: { 200: PageOf(ChangeRequest), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => {
      const { limit, before, after, state, environment, author } = request.query;
      if (environment !== undefined) refuseOtherEnvironment(request.principal, environment);
      const bound = request.principal?.environment ?? null;
      return requests.list(
        {
          projectId: request.params.projectId,
          states: statesOf(state),
          environment: environment ?? bound ?? undefined,
          author,
        },
        toPageQuery({ limit, before, after }, 1),
      );
    },
  );

  app.post(
    "/projects/:projectId/change-requests",
    {
      config: { access: "write" },
      schema: {
        tags: ["change requests"],
        summary: "Open a change request (extension)",
        description:
          "Each change is a flag's PATCH body. The changes are checked now as their PATCH would be (400, 404, 409 as it " +
          "answers), and applied together once the request is approved (or at scheduledAt). Without approvals required " +
          "and without scheduledAt, the request is approved at once.",
        params: ProjectParams,
        body: CreateChangeRequestBody,
        response: { 201: ChangeRequest, ...errorResponses(400, 401, 403, 404, 409, 412, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const { projectId } = request.params;
      const created = await requests.create(writeContext(request), projectId, request.body);
      return reply
        .code(201)
        .header("location", `/projects/${encodeURIComponent(projectId)}/change-requests/${created.id}`)
        .send(created);
    },
  );

  app.get(
    "/projects/:projectId/change-requests/:changeRequestId",
    {
      config: { access: "read" },
      schema: {
        tags: ["change requests"],
        summary: "Retrieve a change request, with the diff of each change against the flag now (extension)",
        params: RequestParams,
        response: { 200: ChangeRequest, ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => {
      const found = await requests.get(request.params.projectId, request.params.changeRequestId);
      refuseOtherEnvironment(request.principal, found.environment);
      return found;
    },
  );

  app.patch(
    "/projects/:projectId/change-requests/:changeRequestId",
    {
      config: { access: "write" },
      schema: {
        tags: ["change requests"],
        summary: "Change your change request: its reviews are cleared (extension)",
        params: RequestParams,
        body: UpdateChangeRequestBody,
        response: { 200: ChangeRequest, ...errorResponses(...WRITE_ERRORS) },
      },
    },
    async (request) =>
      requests.update(
        writeContext(request),
        request.params.projectId,
        request.params.changeRequestId,
        request.body ?? {},
      ),
  );

  app.post(
    "/projects/:projectId/change-requests/:changeRequestId/reviews",
    {
      config: { access: "write" },
      schema: {
        tags: ["change requests"],
        summary: "Approve or reject a change request (extension; people only)",
        description:
          "An approval counts from a person with write or admin on the project (admin for a protected environment), " +
          "never from a service key; the author's own only where the environment allows self-approval. A person's " +
          "latest decision replaces their earlier one; one rejection rejects the request.",
        params: RequestParams,
        body: ReviewBody,
        response: { 200: ChangeRequest, ...errorResponses(...WRITE_ERRORS) },
      },
    },
    async (request) =>
      requests.review(writeContext(request), request.params.projectId, request.params.changeRequestId, request.body),
  );

  app.post(
    "/projects/:projectId/change-requests/:changeRequestId/apply",
    {
      config: { access: "write" },
      schema: {
        tags: ["change requests"],
        summary: "Apply a change request now (extension)",
        description:
          "An approved (or scheduled) request applies in one write. One not approved needs a project admin's override " +
          "with a reason (409 approval_required otherwise). A flag that changed since the request was made: 409 " +
          "change_request_conflict, nothing applied, and the request is in conflict.",
        params: RequestParams,
        body: Type.Optional(ApplyChangeRequestBody),
        response: { 200: ChangeRequest, ...errorResponses(...WRITE_ERRORS) },
      },
    },
    async (request) =>
      requests.apply(
        writeContext(request),
        request.params.projectId,
        request.params.changeRequestId,
        request.body?.override,
      ),
  );

  app.post(
    "/projects/:projectId/change-requests/:changeRequestId/cancel",
    {
      config: { access: "write" },
      schema: {
        tags: ["change requests"],
        summary: "Cancel a change request: its author or a project admin (extension)",
        params: RequestParams,
        response: { 200: ChangeRequest, ...errorResponses(...WRITE_ERRORS) },
      },
    },
    async (request) => requests.cancel(writeContext(request), request.params.projectId, request.params.changeRequestId),
  );

  app.get(
    "/projects/:projectId/schedule",
    {
      config: { access: "read" },
      schema: {
        tags: ["change requests"],
        summary: "What is due, soonest first: scheduled change requests and rollout steps (extension)",
        params: ProjectParams,
        querystring: Type.Object(
          { environment: Type.Optional(Type.String({ minLength: 1, description: "One environment's only" })) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ data: Type.Array(ScheduleEntrySchema) }),
          ...errorResponses(400, 401, 403, 404, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const environment = request.query.environment ?? request.principal?.environment ?? undefined;
      if (environment !== undefined) refuseOtherEnvironment(request.principal, environment);
      return { data: await schedule.upcoming(request.params.projectId, environment) };
    },
  );
}
