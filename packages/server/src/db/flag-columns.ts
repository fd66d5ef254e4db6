// The columns of a flag joined with one environment's configuration (`flags` inner join `flag_configs`),
// named once for every query that reads them: the flags' repositories and the evaluation's feed.

/** What a flag's targeting is read from (core's FlagTargeting): its definition's and the configuration's. */
export const TARGETING_COLUMNS = [
  "flags.type",
  "flags.variants",
  "flag_configs.on_variant",
  "flag_configs.off_variant",
  "flag_configs.rules",
  "flag_configs.prerequisites",
] as const;

/** A configuration's timed rollout plan (JSON), read with its targeting but kept apart from it (planOf). */
export const PLAN_COLUMN = "flag_configs.rollout_plan";

/** What evaluating a flag in one environment reads: which flag and configuration, its status, rollouts and targeting. */
export const FLAG_EVALUATION_COLUMNS = [
  "flags.id",
  "flags.project_id",
  "flags.name",
  "flag_configs.config_id",
  "flag_configs.environment_id",
  "flag_configs.status",
  "flag_configs.percentage_actors",
  "flag_configs.percentage_calls",
  ...TARGETING_COLUMNS,
  PLAN_COLUMN,
] as const;
