import {
  DESCRIPTION_MAX_LENGTH,
  FLAG_NAME_MAX_LENGTH,
  FLAG_KINDS,
  FLAG_SORTS,
  FLAG_STATUSES,
  type RolloutPlan,
} from "@flagstaff/core";
import { oneOf } from "@flagstaff/core/schemas";
import type { Flag as FlagShape } from "@flagstaff/core/schemas";
import { Type } from "typebox";
import { EnvironmentQuerySchema, PageQuerySchema } from "../../kernel/schemas.js";
import { Limits } from "@flagstaff/core/schemas";

export type { FlagSort } from "@flagstaff/core";

// The flag's shapes are the API's contract, shared with the clients: @flagstaff/core/schemas.
export {
  CopyFlagBody,
  type CopyFlagInput,
  CreateFlagBody,
  type FlagEnvironmentConfiguration,
  type CreateFlagInput,
  ExplanationSchema,
  FlagSchema,
  FlagStatusSchema,
  UpdateFlagBody,
  type UpdateFlagInput,
} from "@flagstaff/core/schemas";

/**
 * A flag in one environment as the API shows it, plus the revision its ETag is made of, the id of its
 * configuration there and its timed rollout plan as stored (none of them serialised: the presenter shows
 * the plan as `rolloutPlan`, with where it stands now).
 */
export type Flag = FlagShape & { revision: number; configId: string; plan: RolloutPlan | null };

export const FlagParams = Type.Object({ projectId: Type.String(), flagName: Type.String() });
export const CreateFlagParams = Type.Object({ projectId: Type.String(), flagName: Limits.flagName });
export const ListFlagsQuery = Type.Object(
  {
    ...PageQuerySchema,
    ...EnvironmentQuerySchema,
    name: Type.Optional(
      Type.String({ maxLength: FLAG_NAME_MAX_LENGTH, description: "Case-insensitive substring of the name" }),
    ),
    q: Type.Optional(
      Type.String({
        maxLength: DESCRIPTION_MAX_LENGTH,
        description: "Case-insensitive substring of name or description",
      }),
    ),
    status: Type.Optional(oneOf(FLAG_STATUSES, { description: "Only flags of this status. Extension." })),
    sort: Type.Optional(
      oneOf(
        FLAG_SORTS.flatMap((s) => [s, `-${s}` as const]),
        {
          description:
            "Order: name (default), createdAt, updatedAt or latestCheckedAt; a leading - for descending. Ties by name; never-checked flags count as checked earliest. Extension.",
        },
      ),
    ),
    total: Type.Optional(
      Type.Boolean({ description: "true: the answer also holds `total`, the number of flags that match. Extension." }),
    ),
    kind: Type.Optional(oneOf(FLAG_KINDS, { description: "Only flags of this kind. Extension." })),
    stale: Type.Optional(
      Type.Boolean({ description: "true: only stale flags; false: only flags that are not. Extension." }),
    ),
    archived: Type.Optional(
      Type.Boolean({ description: "true: only archived flags (left out otherwise). Extension." }),
    ),
  },
  { additionalProperties: false },
);
/**
 * What a list keeps: by name, text, status, kind and staleness; archived flags only with `archived`
 * (and then only they).
 */
export type FlagFilter = {
  name?: string;
  q?: string;
  status?: Flag["status"];
  kind?: Flag["kind"];
  stale?: boolean;
  archived?: boolean;
};
