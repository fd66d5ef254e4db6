import { type Static, Type } from "typebox";
import { CHANGE_REQUEST_STATES, REVIEW_DECISIONS } from "../contract/enums.js";
import {
  CHANGE_REQUEST_CHANGES_MAX,
  COMMENT_MAX_LENGTH,
  DESCRIPTION_MAX_LENGTH,
  NAME_MAX_LENGTH,
} from "../contract/limits.js";
import { Limits, NullableTimestamp, oneOf, Timestamp } from "./common.js";
import { UpdateFlagBody } from "./flags.js";

// Change requests (docs/change-requests.md): a reviewed, optionally scheduled set of changes to flags'
// configurations in one environment, applied in one write.

export const ChangeRequestStateSchema = oneOf(CHANGE_REQUEST_STATES, {
  description:
    "open (waiting for approvals), approved, rejected, scheduled (approved, applied at scheduledAt), applied, cancelled, conflict (a flag moved since the request was made; nothing applied), failed (could not be applied; see failureReason)",
});

/** A flag's PATCH as a change request holds it: the flag's PATCH body without its comment (the request's title says why). */
const ChangePatch = Type.Omit(UpdateFlagBody, ["comment"], {
  additionalProperties: false,
  description: "The flag's PATCH body (without comment): what the change does to the flag's configuration",
});

export const NewChangeSchema = Type.Object(
  {
    flag: Limits.flagName,
    patch: ChangePatch,
    ifMatch: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "The flag's ETag the change was made against; without it, the flag as it is when the request is made. Applying finds a conflict when the flag moved since",
      }),
    ),
  },
  { additionalProperties: false },
);
export type NewChange = Static<typeof NewChangeSchema>;

const Changes = Type.Array(NewChangeSchema, {
  minItems: 1,
  maxItems: CHANGE_REQUEST_CHANGES_MAX,
  description: "The changes, at most one per flag; applied together or not at all",
});
const Title = Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH });
const Description = Type.String({ maxLength: DESCRIPTION_MAX_LENGTH });
const ScheduledAt = {
  ...Timestamp,
  description: "When the service applies the request by itself, once it is approved (ISO 8601, in the future)",
};

export const CreateChangeRequestBody = Type.Object(
  {
    environment: Limits.environmentId,
    title: Title,
    description: Type.Optional(Description),
    changes: Changes,
    scheduledAt: Type.Optional(ScheduledAt),
  },
  { additionalProperties: false },
);
export type CreateChangeRequestInput = Static<typeof CreateChangeRequestBody>;

export const UpdateChangeRequestBody = Type.Object(
  {
    title: Type.Optional(Title),
    description: Type.Optional(Description),
    changes: Type.Optional(Changes),
    scheduledAt: Type.Optional(Type.Union([ScheduledAt, Type.Null()], { description: "null: apply by hand" })),
  },
  { additionalProperties: false },
);
export type UpdateChangeRequestInput = Static<typeof UpdateChangeRequestBody>;

export const ReviewBody = Type.Object(
  {
    decision: oneOf(REVIEW_DECISIONS),
    comment: Type.Optional(Type.String({ minLength: 1, maxLength: COMMENT_MAX_LENGTH })),
  },
  { additionalProperties: false },
);
export type ReviewInput = Static<typeof ReviewBody>;

export const ApplyChangeRequestBody = Type.Object(
  {
    override: Type.Optional(
      Type.Object(
        {
          reason: Type.String({ minLength: 1, maxLength: COMMENT_MAX_LENGTH }),
        },
        {
          additionalProperties: false,
          description:
            "A project admin applies a request that is not approved: recorded with the reason, and announced as change_request.overridden",
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ApplyChangeRequestInput = Static<typeof ApplyChangeRequestBody>;

/** A person or key as a change request names them. */
export const ChangeRequestPersonSchema = Type.Object({
  type: oneOf(["user", "key", "system"] as const),
  id: Type.Union([Type.String(), Type.Null()], { description: "The person's id (usr_…) or the key's id" }),
  name: Type.String(),
  email: Type.Optional(Type.String()),
});
export type ChangeRequestPerson = Static<typeof ChangeRequestPersonSchema>;

export const ReviewSchema = Type.Object({
  reviewer: ChangeRequestPersonSchema,
  decision: oneOf(REVIEW_DECISIONS),
  comment: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  counts: Type.Boolean({
    description:
      "Whether this approval counts towards requiredApprovals now (the reviewer still has the right to approve; not the author unless allowSelfApproval)",
  }),
});
export type Review = Static<typeof ReviewSchema>;

export const ChangeSchema = Type.Object({
  flag: Type.String(),
  patch: Type.Record(Type.String(), Type.Unknown()),
  baseRevision: Type.Integer({ description: "The flag's configuration revision the change was made against" }),
  diff: Type.Optional(
    Type.Array(
      Type.Object({
        field: Type.String(),
        current: Type.Unknown({ description: "The field's value now" }),
        proposed: Type.Unknown({ description: "The value the change sets" }),
      }),
      {
        description:
          "The fields the change would change, against the flag's configuration now (in a single request's answer)",
      },
    ),
  ),
  stale: Type.Optional(
    Type.Boolean({ description: "The flag moved since the change was made: applying now finds a conflict" }),
  ),
});
export type Change = Static<typeof ChangeSchema>;

export const ChangeRequestSchema = Type.Object(
  {
    id: Type.String(),
    projectId: Type.String(),
    environment: Type.String(),
    title: Type.String(),
    description: Type.String(),
    state: ChangeRequestStateSchema,
    author: ChangeRequestPersonSchema,
    changes: Type.Array(ChangeSchema),
    scheduledAt: NullableTimestamp,
    requiredApprovals: Type.Integer({ description: "The environment's policy now" }),
    approvals: Type.Integer({ description: "Approvals that count now" }),
    reviews: Type.Array(ReviewSchema),
    appliedAt: NullableTimestamp,
    appliedBy: Type.Union([ChangeRequestPersonSchema, Type.Null()]),
    overrideReason: Type.Union([Type.String(), Type.Null()]),
    failureReason: Type.Union([Type.String(), Type.Null()]),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "ChangeRequest", description: "A reviewed set of changes to flags in one environment. Extension." },
);
export type ChangeRequest = Static<typeof ChangeRequestSchema>;

export const ScheduleEntrySchema = Type.Object({
  at: Timestamp,
  environment: Type.String(),
  kind: oneOf(["change_request", "rollout_step"] as const),
  changeRequest: Type.Optional(
    Type.Object({ id: Type.String(), title: Type.String(), state: ChangeRequestStateSchema }),
  ),
  flag: Type.Optional(Type.String({ description: "A rollout step's flag" })),
  description: Type.String({ description: "What happens then, in words" }),
});
export type ScheduleEntry = Static<typeof ScheduleEntrySchema>;
