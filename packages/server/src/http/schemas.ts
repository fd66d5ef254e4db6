import { type TSchema, Type } from "typebox";

/** The most actor ids one evaluation takes (check, explain, OFREP); the fast paths read it too. */
export const MAX_ACTORS = 100;

/** Field rules shared by several operations, so each limit lives in one place. */
export const Limits = {
  // "." and ".." are refused: clients resolve them as path steps, so such an id could never be addressed.
  projectId: Type.String({
    pattern: "^(?!\\.{1,2}$)[A-Za-z0-9._-]{1,64}$",
    description: "1–64 characters of A–Z a–z 0–9 . _ -, other than . and ..",
  }),
  flagName: Type.String({
    pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$",
    description: "1–128 characters of A–Z a–z 0–9 . _ - :, starting with a letter or digit",
  }),
  // The control characters (Unicode's Cc: C0, DEL and C1) are spelled out rather than written \P{Cc},
  // which needs the u flag: Ajv sets it, but Swagger UI's "Try it out" does not, and refused every id.
  actorId: Type.String({
    minLength: 1,
    maxLength: 256,
    pattern: "^(?!\\.{1,2}$)[^\\u0000-\\u001F\\u007F-\\u009F]+$",
    description: "1–256 characters, no control characters, other than . and ..",
  }),
  description: Type.String({ maxLength: 1024 }),
  idList: <T extends TSchema>(item: T, description: string) => Type.Array(item, { maxItems: 1000, description }),
};

export const Timestamp = Type.String({ format: "date-time", examples: ["2026-11-22T10:00:00.000Z"] });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

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

export const PaginationSchema = Type.Object({
  before: Type.Union([Type.String(), Type.Null()], {
    description: "Cursor of the previous page; null on the first page",
  }),
  after: Type.Union([Type.String(), Type.Null()], { description: "Cursor of the next page; null on the last page" }),
});

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

export const Membership = Type.Object(
  {
    actorId: Type.String(),
    addedAt: { ...Timestamp, description: "When the actor was attached or added" },
  },
  { $id: "Membership" },
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
