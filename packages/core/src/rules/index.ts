// The evaluation engine (issue 25's targeting, issue 33's one engine): typed variants, ordered rules on
// context attributes, rule-based segments and prerequisites, and the seed's rules as their boolean case.
// docs/targeting.md describes the model. The server (check, explain, OFREP), the SDK's local evaluator and
// the OpenFeature providers call `evaluateFlag` and map its answer with `resolutionOf`: a rule is written
// once, and so is the answer.
export { constantAnswer, evaluateFlag, servedToActor } from "./evaluate.js";
export { failedResolution, resolutionOf } from "./resolution.js";
export { type ConfigurationReferences, dependenciesOf, type FlagDependencies, referencesOf } from "./references.js";
export {
  CONFIGURATION_PROBLEM_CODES,
  type ConfigurationProblem,
  type ConfigurationProblemCode,
  type ValidationOptions,
  type ValidationProject,
} from "./problems.js";
export { type TargetingInput, validateConfiguration, validateVariants } from "./validate.js";
export { validateSegmentConditions } from "./validate-conditions.js";
export type { PrerequisiteNode } from "./prerequisites.js";
export { compareSemver, parseSemver, type SemVer } from "./semver.js";
export { parseInstant } from "./values.js";
export {
  isWeightsStep,
  nextPlan,
  planInstants,
  planStanding,
  type PlanStanding,
  planTime,
  planView,
  stepsInForce,
  type StepsInForce,
} from "./rollout-plan.js";
export { splitBucket } from "./split.js";
export { BOOLEAN_VARIANTS } from "./variants.js";
export { OPERATOR_KIND, type OperatorKind } from "./operators.js";
export { expandedSize, type PatternCost, patternCost } from "./regex.js";
export type * from "./types.js";
