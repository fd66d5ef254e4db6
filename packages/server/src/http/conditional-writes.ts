import type { FastifyRequest } from "fastify";
import type { Static, TObject, TSchema } from "typebox";
import type { WriteContext } from "../write-path/domain-events.js";
import { entityTag } from "../write-path/preconditions.js";
import { errorResponses } from "./schemas.js";
import { IfMatchHeaders, NoContent } from "../kernel/schemas.js";
import type { TypedApp } from "./typed-app.js";
import { writeContext } from "./write-context.js";

/** An entity with a revision: its answers carry an ETag, and its writes honour If-Match (write-path/preconditions.ts). */
interface Revised {
  readonly id: string;
  readonly revision: number;
}

export interface ConditionalResource<P extends TObject, B extends TSchema, E extends Revised = Revised> {
  /** The one entity's path, e.g. `/projects/:projectId/flags/:flagName`. */
  readonly path: string;
  /** "flag", "segment": as the summaries and descriptions name it; its plural is the routes' tag. */
  readonly noun: string;
  readonly params: P;
  readonly entity: TSchema;
  readonly updateBody: B;
  /** What PATCH and DELETE do, as their summaries say it (GET's says the same for every entity). */
  readonly summaries: { readonly update: string; readonly delete: string };
  /** Where DELETE's description differs from the usual one. */
  readonly deleteDescription?: string;
  /** Statuses PATCH may answer beyond those of every conditional write (409 for a name taken). */
  readonly updateErrors?: readonly number[];
  /** Statuses DELETE may answer beyond those of every conditional write (409 for a segment in use). */
  readonly deleteErrors?: readonly number[];
  /** The query every route of the entity takes (a flag's `environment`); none when absent. */
  readonly query?: TObject;
  /** The entity's ETag; by default made of its id and revision. */
  readonly tag?: (entity: E) => string;
  readonly get: (params: Static<P>, request: FastifyRequest) => Promise<E>;
  readonly update: (
    context: WriteContext,
    params: Static<P>,
    body: Static<B>,
    ifMatch: string | undefined,
    request: FastifyRequest,
  ) => Promise<E>;
  readonly delete: (
    context: WriteContext,
    params: Static<P>,
    ifMatch: string | undefined,
    request: FastifyRequest,
  ) => Promise<void>;
}

/**
 * GET (with the ETag), PATCH and DELETE (with If-Match, 412 when it does not match) of one entity that
 * has a revision: the routes every such entity has, written once.
 */
export function conditionalResourceRoutes<P extends TObject, B extends TSchema, E extends Revised = Revised>(
  app: TypedApp,
  resource: ConditionalResource<P, B, E>,
): void {
  const precondition = `With If-Match, only when the ${resource.noun} still has that ETag; 412 otherwise (extension).`;
  const writeErrors = [400, 401, 403, 404, 412, 413, 415, 429, 500, 503];
  const withEtag = resource.tag ?? ((entity: E) => entityTag(entity.id, entity.revision));
  const querystring = resource.query ? { querystring: resource.query } : {};
  const tags = [`${resource.noun}s`];

  app.get(
    resource.path,
    {
      config: { access: "read" },
      schema: {
        tags,
        summary: `Retrieve a ${resource.noun} (with its ETag)`,
        params: resource.params,
        ...querystring,
        response: { 200: resource.entity, ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const entity = await resource.get(request.params as Static<P>, request);
      return reply.header("etag", withEtag(entity)).send(entity);
    },
  );

  app.patch(
    resource.path,
    {
      config: { access: "write" },
      schema: {
        tags,
        summary: resource.summaries.update,
        description: precondition,
        params: resource.params,
        ...querystring,
        headers: IfMatchHeaders,
        body: resource.updateBody,
        response: {
          200: resource.entity,
          ...errorResponses(...[...writeErrors, ...(resource.updateErrors ?? [])].sort((a, b) => a - b)),
        },
      },
    },
    async (request, reply) => {
      const body = (request.body ?? {}) as Static<B>;
      const ifMatch = request.headers["if-match"];
      const entity = await resource.update(writeContext(request), request.params as Static<P>, body, ifMatch, request);
      return reply.header("etag", withEtag(entity)).send(entity);
    },
  );

  app.delete(
    resource.path,
    {
      config: { access: "write" },
      schema: {
        tags,
        summary: resource.summaries.delete,
        description: resource.deleteDescription ?? precondition,
        params: resource.params,
        ...querystring,
        headers: IfMatchHeaders,
        response: {
          204: NoContent,
          ...errorResponses(...[...writeErrors, ...(resource.deleteErrors ?? [])].sort((a, b) => a - b)),
        },
      },
    },
    async (request, reply) => {
      const ifMatch = request.headers["if-match"];
      await resource.delete(writeContext(request), request.params as Static<P>, ifMatch, request);
      return reply.code(204).send(null);
    },
  );
}
