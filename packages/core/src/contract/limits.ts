// The API's limits, one home each: the server's schemas, its fast paths and the clients read them here.

/** The most actor ids one evaluation takes (check, explain, OFREP). */
export const MAX_ACTORS = 100;

/** The longest actor id, in characters (code points). */
export const ACTOR_ID_MAX_LENGTH = 256;

/** The most ids one write adds or removes (a flag's actors and segments, a segment's members). */
export const MAX_ID_LIST = 1000;

/** The longest name of a project or key, and of a segment after trimming. */
export const NAME_MAX_LENGTH = 128;

/** The longest description of a flag, segment or webhook. */
export const DESCRIPTION_MAX_LENGTH = 1024;

/** The longest comment a write carries into the history (a flag's PATCH `comment`). */
export const COMMENT_MAX_LENGTH = 1024;

/** A person's password: long enough to resist guessing without other factors, bounded so hashing stays cheap. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

/** The most seconds a check's answer may be cached for (`cache`). */
export const MAX_CACHE_SECONDS = 86400;

/** The most attribute names one check's or explain's query carries (`attributes[NAME]`, query-attributes.ts). */
export const MAX_QUERY_ATTRIBUTES = 50;

/** The most values one attribute of a check's or explain's query carries: a list's elements. */
export const MAX_QUERY_ATTRIBUTE_VALUES = 100;

/** The most environments a project may have unless ENVIRONMENTS_MAX_PER_PROJECT says otherwise. */
export const DEFAULT_MAX_ENVIRONMENTS = 20;

// Targeting (issue 25): typed variants, rules, segment conditions and prerequisites. The validator
// (src/rules/validate.ts and validate-conditions.ts) and the schemas (src/schemas/targeting.ts) both read these.

/** The fewest and the most variants a string, number or object flag declares (a boolean flag has on/off). */
export const VARIANTS_MIN = 2;
export const VARIANTS_MAX = 50;

/** The largest variant value, as UTF-8 bytes of its JSON text (an object value's limit; strings too). */
export const VARIANT_VALUE_MAX_BYTES = 32 * 1024;

/** The longest variant key or rule id, in characters. */
export const TARGETING_KEY_MAX_LENGTH = 64;

/** The most rules one configuration (a flag in one environment) holds. */
export const RULES_MAX = 100;

/** The most conditions one rule, or one segment, holds. */
export const CONDITIONS_MAX = 20;

/** The most values one condition lists (larger sets belong in a segment). */
export const CONDITION_VALUES_MAX = 100;

/** The longest value of a condition (a string, a pattern, a version, an instant, a segment id), in characters. */
export const CONDITION_VALUE_MAX_LENGTH = 1024;

/** The longest attribute name a condition or a split names, in characters. */
export const ATTRIBUTE_NAME_MAX_LENGTH = 128;

/** The most prerequisites one configuration names. */
export const PREREQUISITES_MAX = 20;

/** The longest chain of prerequisites from any flag (a → b is 1); longer chains, and cycles, are refused. */
export const PREREQUISITE_DEPTH_MAX = 5;

/** The number of split buckets: weights are percentages with up to three decimals, 1 bucket = 0.001 %. */
export const SPLIT_BUCKETS = 100_000;

// What `matches` may cost (issue 31): RE2 matches in linear time, but re2js's constant is large once a
// pattern's automaton outgrows its DFA (see src/rules/regex.ts), so the automaton is bounded where the
// pattern is written, and the text an evaluation matches is bounded where it is read.

/**
 * The largest `matches` pattern, in instructions once its bounded repetitions are expanded (`x{0,100}`
 * counts x a hundred times), read from its text before it is compiled; and the most for the patterns of
 * one configuration, or one segment, in all.
 */
export const PATTERN_SIZE_MAX = 500;
export const PATTERN_SIZE_TOTAL_MAX = 5000;

/** The most states one `matches` pattern's automaton may have (RE2's DFA, built when the pattern is written). */
export const PATTERN_STATES_MAX = 1000;

/** The most `matches` patterns one configuration (a flag in one environment), or one segment, holds. */
export const PATTERNS_MAX = 100;

/** The most automaton states the patterns of one configuration, or one segment, have in all. */
export const PATTERN_STATES_TOTAL_MAX = 5000;

/**
 * The most work (NFA states visited) that building one pattern's automaton may take where it is written,
 * and the patterns of one configuration or segment in all: what bounds a write's own cost.
 */
export const PATTERN_WORK_MAX = 100_000;
export const PATTERN_WORK_TOTAL_MAX = 2_000_000;

/**
 * The most characters one evaluation matches against patterns, over all its `matches` conditions (each
 * pattern tried on a value counts the value's length, and at least MATCHED_CHARACTERS_PER_TEST). Past it,
 * the evaluation answers ERROR (GENERAL): an ordinary context, even with a 1,000-character attribute,
 * stays far below it.
 */
export const MATCHED_CHARACTERS_MAX = 200_000;

/** What one pattern tried on a value counts toward MATCHED_CHARACTERS_MAX at least (the call's own cost). */
export const MATCHED_CHARACTERS_PER_TEST = 100;

/** The most flags one change request changes. */
export const CHANGE_REQUEST_CHANGES_MAX = 100;
/** The most approvals an environment may require. */
export const REQUIRED_APPROVALS_MAX = 5;

/** The only percentages a flag's rollouts may take. */
export const ALLOWED_PERCENTAGES = [0, 1, 2, 5, 10, 25, 50, 75, 100] as const;
export type Percentage = (typeof ALLOWED_PERCENTAGES)[number];
/** The same, as a set: whether a number is one. */
export const ALLOWED_PERCENTAGES_SET: ReadonlySet<number> = new Set(ALLOWED_PERCENTAGES);
/** The most steps a timed rollout plan holds. */
export const ROLLOUT_STEPS_MAX = 50;

/** The variant key evaluations that ended in an error are counted under in usage (no variant has it). */
export const USAGE_ERROR_VARIANT = "(error)";
/** Counts one usage report may carry. */
export const USAGE_REPORT_MAX_ENTRIES = 10_000;
/** The most buckets one usage series answers. */
export const USAGE_SERIES_MAX_POINTS = 1_500;
/** Flags one project usage read names at once (the console's sparklines: a page of the list). */
export const USAGE_FLAGS_MAX = 100;
