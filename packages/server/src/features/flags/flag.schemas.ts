import { ALLOWED_PERCENTAGES } from "@flagstaff/core";
import { type Static, Type } from "typebox";
import { Limits, NullableTimestamp, PageQuerySchema, Timestamp } from "../../http/schemas.js";

export const FlagStatusSchema = Type.Union(
  [Type.Literal("enabled"), Type.Literal("disabled"), Type.Literal("conditional")],
  { description: "enabled: on for everyone; disabled: off for everyone; conditional: on by the targeting rules" },
);

const Percentage = Type.Integer({
  enum: [...ALLOWED_PERCENTAGES],
  description: "One of 0, 1, 2, 5, 10, 25, 50, 75, 100",
});

export const FlagSchema = Type.Object(
  {
    id: Type.String(),
    projectId: Type.String(),
    name: Type.String(),
    description: Type.String(),
    status: FlagStatusSchema,
    percentageActors: Type.Integer(),
    percentageCalls: Type.Integer(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    latestCheckedAt: NullableTimestamp,
    statusChangedAt: Timestamp,
    actorsCount: Type.Integer({ minimum: 0, description: "Actors attached directly (extension)" }),
    segmentsCount: Type.Integer({ minimum: 0, description: "Segments attached (extension)" }),
  },
  {
    $id: "Flag",
    description: "A flag. Answers that carry one flag carry its ETag; PATCH and DELETE accept If-Match (extension)",
  },
);
/** A flag as the API shows it, plus the revision its ETag is made of (not serialised). */
export type Flag = Static<typeof FlagSchema> & { revision: number };

export const FlagParams = Type.Object({ projectId: Type.String(), flagName: Type.String() });
export const CreateFlagParams = Type.Object({ projectId: Type.String(), flagName: Limits.flagName });

export const CreateFlagBody = Type.Object(
  { description: Type.Optional(Limits.description) },
  { additionalProperties: false },
);
export type CreateFlagInput = Static<typeof CreateFlagBody>;

const SegmentId = Type.String({ minLength: 1, maxLength: 128 });

export const UpdateFlagBody = Type.Object(
  {
    description: Type.Optional(Limits.description),
    status: Type.Optional(FlagStatusSchema),
    percentageActors: Type.Optional(Percentage),
    percentageCalls: Type.Optional(Percentage),
    addActors: Type.Optional(Limits.idList(Limits.actorId, "Actor ids to attach; at most 1,000")),
    removeActors: Type.Optional(Limits.idList(Limits.actorId, "Actor ids to detach; at most 1,000")),
    addSegments: Type.Optional(Limits.idList(SegmentId, "Segment ids to attach; each must exist")),
    removeSegments: Type.Optional(Limits.idList(SegmentId, "Segment ids to detach")),
  },
  { additionalProperties: false },
);
export type UpdateFlagInput = Static<typeof UpdateFlagBody>;

/** The orders the project's flag list offers; each also descending with a leading "-". */
export const FLAG_SORTS = ["name", "createdAt", "updatedAt", "latestCheckedAt"] as const;
export type FlagSort = (typeof FLAG_SORTS)[number] | `-${(typeof FLAG_SORTS)[number]}`;

export const ListFlagsQuery = Type.Object(
  {
    ...PageQuerySchema,
    name: Type.Optional(Type.String({ maxLength: 128, description: "Case-insensitive substring of the name" })),
    q: Type.Optional(
      Type.String({ maxLength: 1024, description: "Case-insensitive substring of name or description" }),
    ),
    status: Type.Optional(
      Type.Union([Type.Literal("enabled"), Type.Literal("disabled"), Type.Literal("conditional")], {
        description: "Only flags of this status. Extension.",
      }),
    ),
    sort: Type.Optional(
      Type.Union(
        FLAG_SORTS.flatMap((s) => [Type.Literal(s), Type.Literal(`-${s}`)]),
        {
          description:
            "Order: name (default), createdAt, updatedAt or latestCheckedAt; a leading - for descending. Ties by name; never-checked flags count as checked earliest. Extension.",
        },
      ),
    ),
    total: Type.Optional(
      Type.Boolean({ description: "true: the answer also holds `total`, the number of flags that match. Extension." }),
    ),
  },
  { additionalProperties: false },
);
export type FlagFilter = { name?: string; q?: string; status?: Flag["status"] };
