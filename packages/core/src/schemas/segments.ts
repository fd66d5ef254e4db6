import { type Static, Type } from "typebox";
import { Limits, Timestamp } from "./common.js";
import { ConditionSchema, ConditionsSchema } from "./targeting.js";
import type { Actor } from "./actors.js";

export const SegmentSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    createdAt: Timestamp,
    // A reference in the document (Actor is a component); an Actor in the type.
    latestActors: Type.Unsafe<Actor[]>(
      Type.Array(Type.Ref("Actor"), { description: "The 10 actors most recently added, newest first" }),
    ),
    actorsCount: Type.Integer({ minimum: 0, description: "Listed members (extension)" }),
    conditions: Type.Array(ConditionSchema, {
      description:
        "Rule-based membership: a context whose conditions all hold is in the segment too (empty: listed members only). Extension.",
    }),
  },
  {
    $id: "Segment",
    description:
      "A segment. Answers that carry one segment carry its ETag; PATCH and DELETE accept If-Match (extension)",
  },
);
/** A named list of actors; `latestActors` holds the 10 most recently added, newest first. */
export type Segment = Static<typeof SegmentSchema>;

const SegmentName = Type.String({ minLength: 1, maxLength: 1024, description: "1–128 characters after trimming" });

export const CreateSegmentBody = Type.Object(
  { name: SegmentName, description: Type.Optional(Limits.description), conditions: Type.Optional(ConditionsSchema) },
  { additionalProperties: false },
);
/** Body of a segment's create. */
export type CreateSegmentInput = Static<typeof CreateSegmentBody>;

export const UpdateSegmentBody = Type.Object(
  {
    name: Type.Optional(SegmentName),
    description: Type.Optional(Limits.description),
    addActors: Type.Optional(Limits.idList(Limits.actorId, "Actor ids to add; at most 1,000")),
    removeActors: Type.Optional(Limits.idList(Limits.actorId, "Actor ids to remove; at most 1,000")),
    conditions: Type.Optional({
      ...ConditionsSchema,
      description: "Replaces the conditions ([]: listed members only)",
    }),
  },
  { additionalProperties: false },
);
/** Body of a segment's update: every field optional. */
export type UpdateSegmentInput = Static<typeof UpdateSegmentBody>;
