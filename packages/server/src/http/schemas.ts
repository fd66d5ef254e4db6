import { Limits, PaginationSchema } from "@flagstaff/core/schemas";
import { type TSchema, Type } from "typebox";

// The field rules and shapes clients share live in @flagstaff/core (contract/ and schemas/); these are
// re-exported for the routes, beside what only the server's routes use.
export { MAX_ACTORS } from "@flagstaff/core";
export { Limits, Membership, NullableTimestamp, PaginationSchema, Timestamp } from "@flagstaff/core/schemas";

export const Problem = Type.Object(
  {
    type: Type.String({ description: "URI naming the kind of problem: urn:flagstaff:problem:<code>" }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: "Machine-readable error code" }),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), {
        description: "Present on validation errors: one entry per offending value",
      }),
    ),
  },
  { $id: "Problem", description: "RFC 9457 problem details" },
);

export const PageOf = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), pagination: PaginationSchema });

export const PageQuerySchema = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, description: "Page size, 1–100 (default 20). Extension." }),
  ),
  before: Type.Optional(Type.String({ description: "Cursor: the page before this one" })),
  after: Type.Optional(Type.String({ description: "Cursor: the page after this one" })),
};

export const PageQuery = Type.Object(PageQuerySchema, { additionalProperties: false });

/** A page of actors attached to a flag or in a segment: ordered by actor id, optionally searched. */
export const MembersQuery = Type.Object(
  {
    ...PageQuerySchema,
    q: Type.Optional(Type.String({ maxLength: 256, description: "Case-insensitive substring of the actor id" })),
  },
  { additionalProperties: false },
);

/** The `environment` query parameter of every route that reads or changes a flag's configuration. */
export const EnvironmentQuerySchema = {
  environment: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        "The environment to act on; default the key's, or the project's default environment for a key bound to none. A key bound to an environment may name only its own (403). Extension.",
    }),
  ),
};

export const EnvironmentQuery = Type.Object(EnvironmentQuerySchema, { additionalProperties: false });

/** A page of a list that depends on an environment (what is attached to a flag, what is on for an actor). */
export const EnvironmentPageQuery = Type.Object(
  { ...PageQuerySchema, ...EnvironmentQuerySchema },
  { additionalProperties: false },
);

export const ProjectParams = Type.Object({ projectId: Type.String() });

/** PATCH and DELETE of flags and segments: the optional If-Match precondition (see preconditions.ts). */
export const IfMatchHeaders = Type.Object({
  "if-match": Type.Optional(
    Type.String({
      maxLength: 1024,
      description: "ETags from a previous answer (or *): the write happens only if one is still current, 412 otherwise",
    }),
  ),
});

/** For operations that take no query parameters: any given is refused. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/** Error responses an operation may give, for the OpenAPI document: sent as application/problem+json. */
export function errorResponses(...statuses: number[]) {
  const out: Record<number, { description: string; content: { "application/problem+json": { schema: TSchema } } }> = {};
  for (const status of statuses) {
    out[status] = {
      description: "RFC 9457 problem details",
      content: { "application/problem+json": { schema: Type.Ref("Problem") } },
    };
  }
  return out;
}

export const NoContent = Type.Null({ description: "No content" });

export const ActorParams = Type.Object({ projectId: Type.String(), actorId: Limits.actorId });
