import { type Static, type TSchema, type TSchemaOptions, Type } from "typebox";
import { ACTOR_ID_PATTERN, ENVIRONMENT_ID_PATTERN, FLAG_NAME_PATTERN, PROJECT_ID_PATTERN } from "../contract/ids.js";
import { ACTOR_ID_MAX_LENGTH, DESCRIPTION_MAX_LENGTH, MAX_ID_LIST } from "../contract/limits.js";

/** Field rules shared by several operations, so each limit lives in one place. */
export const Limits = {
  projectId: Type.String({
    pattern: PROJECT_ID_PATTERN,
    description: "1–64 characters of A–Z a–z 0–9 . _ -, other than . and ..",
  }),
  environmentId: Type.String({
    pattern: ENVIRONMENT_ID_PATTERN,
    description: "1–64 characters of A–Z a–z 0–9 . _ -, other than . and .. (as a project id)",
  }),
  flagName: Type.String({
    pattern: FLAG_NAME_PATTERN,
    description: "1–128 characters of A–Z a–z 0–9 . _ - :, starting with a letter or digit",
  }),
  actorId: Type.String({
    minLength: 1,
    maxLength: ACTOR_ID_MAX_LENGTH,
    pattern: ACTOR_ID_PATTERN,
    description: "1–256 characters, no control characters, other than . and ..",
  }),
  description: Type.String({ maxLength: DESCRIPTION_MAX_LENGTH }),
  idList: <T extends TSchema>(item: T, description: string) => Type.Array(item, { maxItems: MAX_ID_LIST, description }),
};

export const Timestamp = Type.String({ format: "date-time", examples: ["2026-11-22T10:00:00.000Z"] });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

/**
 * One of a list's words: a union of their literals in the list's order (as the document shows it), whose
 * static type is the list's union. Unsafe only sets that type: TypeBox infers nothing useful from a union
 * built with map, and the lists built with spreads are not tuples.
 */
export const oneOf = <const T extends readonly string[]>(values: T, options?: TSchemaOptions) =>
  Type.Unsafe<T[number]>(
    Type.Union(
      values.map((value) => Type.Literal(value)),
      options,
    ),
  );

export const PaginationSchema = Type.Object({
  before: Type.Union([Type.String(), Type.Null()], {
    description: "Cursor of the previous page; null on the first page",
  }),
  after: Type.Union([Type.String(), Type.Null()], { description: "Cursor of the next page; null on the last page" }),
});
/** The cursors of a page; `before` is null on the first page, `after` on the last. */
export type Pagination = Static<typeof PaginationSchema>;

export const Membership = Type.Object(
  {
    actorId: Type.String(),
    addedAt: { ...Timestamp, description: "When the actor was attached or added" },
  },
  { $id: "Membership" },
);
/** An actor attached to a flag, or a member of a segment, and when it was added. */
export type ActorMembership = Static<typeof Membership>;
