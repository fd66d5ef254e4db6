import { Limits, PaginationSchema } from "@flagstaff/core/schemas";
import { type TSchema, Type } from "typebox";

// The API's request and page shapes the features share, built on @flagstaff/core's contract and schemas
// (where the field rules and shapes clients share live). Wire shapes, not HTTP: features' schemas compose
// them as routes do. The problem details every error answers with are the HTTP shell's (http/schemas.ts).

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

export const ActorParams = Type.Object({ projectId: Type.String(), actorId: Limits.actorId });

/** PATCH and DELETE of flags and segments: the optional If-Match precondition (see write-path/preconditions.ts). */
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

export const NoContent = Type.Null({ description: "No content" });
