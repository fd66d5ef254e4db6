import { type Static, Type } from "typebox";
import { Limits, Timestamp } from "../../http/schemas.js";
import type { Actor } from "../actors/actor.schemas.js";

export const SegmentSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    createdAt: Timestamp,
    latestActors: Type.Array(Type.Ref("Actor"), { description: "The 10 actors most recently added, newest first" }),
    actorsCount: Type.Integer({ minimum: 0, description: "Members (extension)" }),
  },
  {
    $id: "Segment",
    description:
      "A segment. Answers that carry one segment carry its ETag; PATCH and DELETE accept If-Match (extension)",
  },
);
export interface Segment {
  id: string;
  name: string;
  description: string;
  createdAt: string;
  latestActors: Actor[];
  actorsCount: number;
  /** The revision its ETag is made of (not serialised). */
  revision: number;
}

const SegmentName = Type.String({ minLength: 1, maxLength: 1024, description: "1–128 characters after trimming" });

export const CreateSegmentBody = Type.Object(
  { name: SegmentName, description: Type.Optional(Limits.description) },
  { additionalProperties: false },
);
export type CreateSegmentInput = Static<typeof CreateSegmentBody>;

export const UpdateSegmentBody = Type.Object(
  {
    name: Type.Optional(SegmentName),
    description: Type.Optional(Limits.description),
    addActors: Type.Optional(Limits.idList(Limits.actorId, "Actor ids to add; at most 1,000")),
    removeActors: Type.Optional(Limits.idList(Limits.actorId, "Actor ids to remove; at most 1,000")),
  },
  { additionalProperties: false },
);
export type UpdateSegmentInput = Static<typeof UpdateSegmentBody>;

export const SegmentParams = Type.Object({ projectId: Type.String(), segmentId: Type.String() });
