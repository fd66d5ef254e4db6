import { type Static, Type } from "typebox";
import { CONDITION_OPERATORS, FLAG_TYPES } from "../contract/enums.js";
import { ATTRIBUTE_NAME_PATTERN, TARGETING_KEY_PATTERN } from "../contract/ids.js";
import {
  ATTRIBUTE_NAME_MAX_LENGTH,
  CONDITION_VALUE_MAX_LENGTH,
  CONDITION_VALUES_MAX,
  CONDITIONS_MAX,
  PREREQUISITES_MAX,
  RULES_MAX,
  VARIANTS_MAX,
  VARIANTS_MIN,
} from "../contract/limits.js";
import type { VariantValue } from "../rules/types.js";
import { Limits, oneOf } from "./common.js";

// The shapes of issue 25's targeting, for the server to validate requests with and publish in its
// OpenAPI document. They say what a schema can; `validateConfiguration` (@flagstaff/core) says the rest
// (values against their operator and the flag's type, variant keys, weights summing to 100, regular
// expressions, duplicate ids, prerequisite cycles) and also checks everything these do, so a client
// without a schema validator can rely on it alone.

export const FlagTypeSchema = oneOf(FLAG_TYPES, {
  description: "The type of the flag's values, set at creation and fixed (default boolean)",
});

export const TargetingKey = Type.String({
  pattern: TARGETING_KEY_PATTERN,
  description: "1–64 characters of A–Z a–z 0–9 . _ -, starting with a letter or digit",
});

const AttributeName = Type.String({
  maxLength: ATTRIBUTE_NAME_MAX_LENGTH,
  pattern: ATTRIBUTE_NAME_PATTERN,
  description: 'A context attribute: 1–128 characters, no control characters, not starting with "$" except $now',
});

export const VariantSchema = Type.Object(
  {
    key: TargetingKey,
    value: Type.Unsafe<VariantValue>(
      // additionalProperties: an object value's members are the value: without it, the server's response
      // serializer (fast-json-stringify) writes every object value as {}.
      Type.Union(
        [
          Type.Boolean(),
          Type.String(),
          Type.Number(),
          Type.Object({}, { additionalProperties: true }),
          Type.Array(Type.Unknown()),
        ],
        {
          description: "A value of the flag's type (object: a JSON object or array, at most 32 KiB as JSON)",
        },
      ),
    ),
    description: Type.Optional(Limits.description),
  },
  { additionalProperties: false },
);
export type VariantInput = Static<typeof VariantSchema>;

export const VariantsSchema = Type.Array(VariantSchema, {
  minItems: VARIANTS_MIN,
  maxItems: VARIANTS_MAX,
  description: "2–50 variants with distinct keys (a boolean flag's are fixed: on and off)",
});

export const ConditionSchema = Type.Object(
  {
    attribute: Type.Optional({
      ...AttributeName,
      description: "The attribute read; none for in_segment and not_in_segment",
    }),
    operator: oneOf(CONDITION_OPERATORS),
    values: Type.Array(Type.Union([Type.String({ maxLength: CONDITION_VALUE_MAX_LENGTH }), Type.Number()]), {
      maxItems: CONDITION_VALUES_MAX,
      description: "Numbers for eq/gt/gte/lt/lte, strings for the others (at least one), none for present",
    }),
    negate: Type.Optional(Type.Boolean({ description: "Inverts the condition; a missing attribute still fails it" })),
    caseInsensitive: Type.Optional(Type.Boolean({ description: "For the string operators" })),
  },
  { additionalProperties: false },
);
export type ConditionInput = Static<typeof ConditionSchema>;

export const ConditionsSchema = Type.Array(ConditionSchema, {
  maxItems: CONDITIONS_MAX,
  description: "All must hold; at most 20",
});

/** A split's weights: one per variant, summing to 100 (a rule's split, a timed rollout's step of one). */
export const SplitWeightsSchema = Type.Array(
  Type.Object(
    {
      variant: TargetingKey,
      weight: Type.Number({ minimum: 0, maximum: 100, description: "Percent, at most three decimals" }),
    },
    { additionalProperties: false },
  ),
  { minItems: 1, maxItems: VARIANTS_MAX, description: "Weights summing to 100" },
);

const SplitSchema = Type.Object(
  {
    bucketBy: Type.Optional({ ...AttributeName, description: "The attribute bucketed on; default the first actor id" }),
    weights: SplitWeightsSchema,
  },
  { additionalProperties: false },
);

export const ServeSchema = Type.Union(
  [
    Type.Object({ variant: TargetingKey }, { additionalProperties: false }),
    Type.Object({ split: SplitSchema }, { additionalProperties: false }),
  ],
  { description: "One variant, or a sticky percentage split between variants" },
);

export const RuleSchema = Type.Object(
  {
    id: TargetingKey,
    description: Type.Optional(Limits.description),
    conditions: ConditionsSchema,
    serve: ServeSchema,
  },
  { additionalProperties: false },
);
export type RuleInput = Static<typeof RuleSchema>;

export const PrerequisiteSchema = Type.Object(
  {
    flag: Limits.flagName,
    variants: Type.Array(TargetingKey, {
      minItems: 1,
      maxItems: VARIANTS_MAX,
      description: "The prerequisite must serve one of these",
    }),
  },
  { additionalProperties: false },
);
export type PrerequisiteInput = Static<typeof PrerequisiteSchema>;

/** A flag's targeting in one environment, beside the seed's status, rollouts, actors and segments. */
export const TargetingConfigurationSchema = Type.Object(
  {
    onVariant: Type.Optional({
      ...TargetingKey,
      description: "Served by enabled, targeting and rollouts (boolean: on)",
    }),
    offVariant: Type.Optional({ ...TargetingKey, description: "Served by disabled and by default (boolean: off)" }),
    rules: Type.Optional(
      Type.Array(RuleSchema, { maxItems: RULES_MAX, description: "In order; the first that holds decides" }),
    ),
    prerequisites: Type.Optional(Type.Array(PrerequisiteSchema, { maxItems: PREREQUISITES_MAX })),
  },
  { additionalProperties: false },
);
export type TargetingConfigurationInput = Static<typeof TargetingConfigurationSchema>;
