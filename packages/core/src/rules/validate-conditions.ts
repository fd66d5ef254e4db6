import { NOW_ATTRIBUTE, isAttributeName } from "../contract/ids.js";
import {
  CONDITION_VALUE_MAX_LENGTH,
  CONDITION_VALUES_MAX,
  CONDITIONS_MAX,
  PATTERN_SIZE_MAX,
  PATTERN_SIZE_TOTAL_MAX,
  PATTERN_STATES_MAX,
  PATTERN_STATES_TOTAL_MAX,
  PATTERN_WORK_TOTAL_MAX,
  PATTERNS_MAX,
} from "../contract/limits.js";
import { isOperator, OPERATOR_KIND, valueProblem } from "./operators.js";
import {
  at,
  type ConfigurationProblem,
  type ConfigurationProblemCode,
  isObject,
  type Place,
  Problems,
  show,
  top,
  type ValidationOptions,
  type ValidationProject,
} from "./problems.js";
import { expandedSize, type PatternCost, patternCost } from "./regex.js";

// Validation of conditions, a rule's or a segment's: each one's attribute, operator and values, and the
// cost of their `matches` patterns, alone and in all.

export interface ConditionOptions {
  /** Conditions of a segment: in_segment and not_in_segment are refused there (no segment refers to another). */
  readonly segment: boolean;
  readonly project: ValidationProject | undefined;
}

function checkCondition(condition: unknown, place: Place, options: ConditionOptions, problems: Problems): void {
  if (!isObject(condition)) {
    problems.add("invalid", place, "must be an object {attribute, operator, values, negate?, caseInsensitive?}");
    return;
  }
  problems.fields(condition, ["attribute", "operator", "values", "negate", "caseInsensitive"], place);
  const { attribute, operator, values, negate, caseInsensitive } = condition;
  if (!isOperator(operator)) {
    problems.add("invalid", at(place, "operator"), `${show(operator)} is not an operator`);
    return;
  }
  const kind = OPERATOR_KIND[operator];
  if (kind === "segment") {
    if (options.segment)
      problems.add("invalid", at(place, "operator"), `${operator} cannot be used in a segment's conditions`);
    if (attribute !== undefined) problems.add("invalid", at(place, "attribute"), `${operator} takes no attribute`);
  } else if (!isAttributeName(attribute)) {
    problems.add(
      "invalid",
      at(place, "attribute"),
      'must be an attribute name: 1–128 characters, no control characters, not starting with "$" (except $now)',
    );
  } else if (attribute === NOW_ATTRIBUTE && kind !== "instant") {
    problems.add(
      "invalid",
      at(place, "attribute"),
      `${NOW_ATTRIBUTE} is the evaluation time: only before and after read it`,
    );
  }
  if (negate !== undefined && typeof negate !== "boolean")
    problems.add("invalid", at(place, "negate"), "must be a boolean");
  if (caseInsensitive !== undefined) {
    if (typeof caseInsensitive !== "boolean")
      problems.add("invalid", at(place, "caseInsensitive"), "must be a boolean");
    else if (caseInsensitive && kind !== "text") {
      problems.add("invalid", at(place, "caseInsensitive"), `applies to string operators only, not to ${operator}`);
    }
  }
  const vp = at(place, "values");
  if (!Array.isArray(values)) {
    problems.add("invalid", vp, "must be an array");
    return;
  }
  if (kind === "present") {
    if (values.length > 0) problems.add("invalid_value", vp, "present takes no values");
    return;
  }
  if (values.length === 0) {
    problems.add("invalid_value", vp, `${operator} takes at least one value`);
    return;
  }
  if (values.length > CONDITION_VALUES_MAX) {
    problems.add("limit", vp, `holds more than ${CONDITION_VALUES_MAX} values (larger sets belong in a segment)`);
  }
  for (const [i, value] of values.entries()) {
    if (typeof value === "string" && value.length > CONDITION_VALUE_MAX_LENGTH) {
      problems.add("limit", at(vp, i), `is longer than ${CONDITION_VALUE_MAX_LENGTH} characters`);
      continue;
    }
    if (operator === "matches" && typeof value === "string" && problems.patterns) {
      // Before it is compiled (which expands repetitions, the slow part): see PATTERN_SIZE_MAX.
      const tooLarge = sizeProblem(value, caseInsensitive === true, problems);
      if (tooLarge) {
        problems.add(tooLarge.code, at(vp, i), tooLarge.message);
        continue;
      }
    }
    const problem = valueProblem(operator, value, caseInsensitive === true);
    if (problem) {
      problems.add(
        operator === "matches" && typeof value === "string" ? "invalid_regex" : "invalid_value",
        at(vp, i),
        problem,
      );
      continue;
    }
    if (operator === "matches" && problems.patterns) {
      const costProblem = countPattern(value as string, caseInsensitive === true, problems.patterns);
      if (costProblem) problems.add("invalid_regex", at(vp, i), costProblem);
    }
    if (kind === "segment" && options.project?.segmentExists && !options.project.segmentExists(value as string)) {
      problems.add("unknown_segment", at(vp, i), `there is no segment ${show(value)}`);
    }
  }
}

/** Why a pattern is too large to compile, alone or with the configuration's patterns before it; or null. */
function sizeProblem(
  source: string,
  caseInsensitive: boolean,
  problems: Problems,
): { code: ConfigurationProblemCode; message: string } | null {
  const size = expandedSize(source);
  if (size > PATTERN_SIZE_MAX) {
    return {
      code: "invalid_regex",
      message: `${show(source)} is too large: its repetitions expand it to about ${size.toLocaleString("en-US")} instructions, more than ${PATTERN_SIZE_MAX} (write * or + rather than large bounds such as {0,1000})`,
    };
  }
  const key = `${caseInsensitive ? "i" : "s"}${source}`;
  if (!problems.sized.has(key)) {
    problems.sized.add(key);
    problems.patternSize += size;
  }
  if (problems.patternSize > PATTERN_SIZE_TOTAL_MAX) {
    return {
      code: "limit",
      message: `the matches patterns up to here expand to about ${problems.patternSize.toLocaleString("en-US")} instructions in all, more than ${PATTERN_SIZE_TOTAL_MAX.toLocaleString("en-US")}: simplify them, or use fewer`,
    };
  }
  return null;
}

/**
 * Counts a pattern RE2 accepts toward its configuration's limits in all; answers why it is refused on its
 * own, or null.
 */
function countPattern(source: string, caseInsensitive: boolean, patterns: Map<string, PatternCost>): string | null {
  const cost = patternCost(source, caseInsensitive);
  if (cost.states > PATTERN_STATES_MAX) {
    return `${show(source)} is too complex to match in bounded time: its automaton needs more than ${PATTERN_STATES_MAX.toLocaleString("en-US")} states (bounded repetitions multiply them: write .* or [^@]+ rather than .{0,100} or .{1,64}, or split the pattern over several conditions)`;
  }
  patterns.set(`${caseInsensitive ? "i" : "s"}${source}`, cost);
  return null;
}

/**
 * Refuses a configuration's (or a segment's) patterns beyond their limits in all: each one's automaton is
 * bounded where it is checked, and so is their number and their states together (what one evaluation may
 * have to match, and what they hold in memory).
 */
export function checkPatternTotals(place: Place, problems: Problems): void {
  const patterns = problems.patterns;
  if (patterns === null) return;
  if (patterns.size > PATTERNS_MAX) {
    problems.add("limit", place, `holds more than ${PATTERNS_MAX} distinct matches patterns in all`);
  }
  let states = 0;
  let work = 0;
  for (const cost of patterns.values()) {
    states += cost.states;
    work += cost.work;
  }
  if (states > PATTERN_STATES_TOTAL_MAX || work > PATTERN_WORK_TOTAL_MAX) {
    problems.add(
      "limit",
      place,
      states > PATTERN_STATES_TOTAL_MAX
        ? `its matches patterns need ${states.toLocaleString("en-US")} automaton states in all, more than ${PATTERN_STATES_TOTAL_MAX.toLocaleString("en-US")}: simplify them, or use fewer`
        : "its matches patterns are too complex in all: simplify them, or use fewer",
    );
  }
}

export function checkConditions(
  conditions: unknown,
  place: Place,
  options: ConditionOptions,
  problems: Problems,
): void {
  if (!Array.isArray(conditions)) {
    problems.add("invalid", place, "must be an array of conditions");
    return;
  }
  if (conditions.length > CONDITIONS_MAX) problems.add("limit", place, `holds more than ${CONDITIONS_MAX} conditions`);
  for (const [i, condition] of conditions.entries()) {
    checkCondition(condition, { ...place, path: `${place.path}/${i}`, condition: i, tail: "" }, options, problems);
  }
}

/**
 * Everything wrong with a segment's conditions (paths under "/conditions"). They are rule conditions,
 * except that in_segment and not_in_segment are refused: segments do not refer to segments.
 */
export function validateSegmentConditions(
  conditions: unknown,
  project?: ValidationProject,
  options: ValidationOptions = {},
): ConfigurationProblem[] {
  const problems = new Problems(options);
  checkConditions(conditions, top("conditions"), { segment: true, project }, problems);
  checkPatternTotals(top("conditions"), problems);
  return problems.list;
}
