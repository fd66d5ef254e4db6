import { type Static, Type } from "typebox";
import { USAGE_STEPS } from "../contract/enums.js";
import { USAGE_FLAGS_MAX, USAGE_REPORT_MAX_ENTRIES } from "../contract/limits.js";
import { Limits, oneOf, Timestamp } from "./common.js";

// Usage (docs/usage.md): evaluations counted per flag, environment, variant and minute, by the server for
// its checks and OFREP answers, and by the SDK's local evaluators, which report theirs.

export const UsageStepSchema = oneOf(USAGE_STEPS, {
  description: "The buckets: minute (kept 48 hours), hour (kept 90 days) or day (kept for ever); settings",
});

/** One count an SDK reports: evaluations of a flag that answered one variant, in one minute. */
export const UsageCountSchema = Type.Object(
  {
    flag: Limits.flagName,
    variant: Type.String({
      minLength: 1,
      maxLength: 128,
      description: "The variant answered; `(error)` for evaluations that ended in an error",
    }),
    minute: { ...Timestamp, description: "The minute the evaluations were made in (any time within it)" },
    count: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
  },
  { additionalProperties: false },
);
export type UsageCount = Static<typeof UsageCountSchema>;

export const UsageReportBody = Type.Object(
  {
    id: Type.Optional(
      Type.String({
        minLength: 8,
        maxLength: 64,
        pattern: "^[A-Za-z0-9_-]+$",
        description:
          "The report's own id, the same when it is sent again: a report whose id was recorded already (in the minutes kept) is not counted twice",
      }),
    ),
    counts: Type.Array(UsageCountSchema, {
      maxItems: USAGE_REPORT_MAX_ENTRIES,
      description: `At most ${USAGE_REPORT_MAX_ENTRIES.toLocaleString("en")} counts`,
    }),
  },
  { additionalProperties: false },
);
export type UsageReport = Static<typeof UsageReportBody>;

export const UsageReportResultSchema = Type.Object({
  accepted: Type.Integer({ minimum: 0, description: "Counts recorded" }),
  dropped: Type.Integer({
    minimum: 0,
    description:
      "Counts left out: of a flag the environment does not have (deleted, archived), or of a minute older than the minutes kept or more than 5 minutes ahead",
  }),
  duplicate: Type.Boolean({
    description: "true: a report of this id was recorded already, and nothing of this one was (accepted 0)",
  }),
});
export type UsageReportResult = Static<typeof UsageReportResultSchema>;

const Evaluations = Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
  description:
    "Evaluations by the variant they answered (`(error)`: ended in an error); variants with none are left out",
});

export const UsagePointSchema = Type.Object({
  at: { ...Timestamp, description: "The bucket's start" },
  evaluations: Evaluations,
});
export type UsagePoint = Static<typeof UsagePointSchema>;

export const UsageSeriesSchema = Type.Object({
  flag: Type.String(),
  environment: Type.String(),
  step: UsageStepSchema,
  from: { ...Timestamp, description: "The first bucket's start" },
  to: { ...Timestamp, description: "The end of the last bucket" },
  points: Type.Array(UsagePointSchema, { description: "Every bucket from `from` to `to`, in time order" }),
  totals: { ...Evaluations, description: "The points' evaluations added up, by variant" },
});
export type UsageSeries = Static<typeof UsageSeriesSchema>;

export const UsageQuerySchema = {
  step: Type.Optional({ ...UsageStepSchema, description: "The buckets; default hour" }),
  from: Type.Optional({
    ...Timestamp,
    description:
      "The start (rounded down to the step); default: an hour (minute), a day (hour), 30 days (day) before `to`",
  }),
  to: Type.Optional({ ...Timestamp, description: "The end (rounded up to the step); default now" }),
};

/** Several flags' series at once, for the flag list's sparklines. */
export const ProjectUsageSchema = Type.Object({
  environment: Type.String(),
  step: UsageStepSchema,
  from: Timestamp,
  to: Timestamp,
  flags: Type.Record(
    Type.String(),
    Type.Array(Type.Integer({ minimum: 0 }), {
      description: "Evaluations per bucket from `from` to `to`, every variant added up",
    }),
    { description: `By flag name; at most ${USAGE_FLAGS_MAX}` },
  ),
});
export type ProjectUsage = Static<typeof ProjectUsageSchema>;
