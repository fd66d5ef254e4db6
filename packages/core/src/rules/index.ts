// The targeting engine of issue 25: typed variants, ordered rules on context attributes, rule-based
// segments and prerequisites. docs/targeting.md describes the model; the server, the SDK's local evaluator
// and the OpenFeature providers are to call this, so a rule is written once.
export { evaluateFlag, servedToActor } from "./evaluate.js";
export { type ConfigurationReferences, referencesOf } from "./references.js";
export {
  CONFIGURATION_PROBLEM_CODES,
  type ConfigurationProblem,
  type ConfigurationProblemCode,
  type TargetingInput,
  type ValidationOptions,
  type ValidationProject,
  validateConfiguration,
  validateSegmentConditions,
  validateVariants,
} from "./validate.js";
export type { PrerequisiteNode } from "./prerequisites.js";
export { compareSemver, parseSemver, type SemVer } from "./semver.js";
export { parseInstant } from "./values.js";
export { splitBucket } from "./split.js";
export { BOOLEAN_VARIANTS } from "./variants.js";
export { OPERATOR_KIND, type OperatorKind } from "./operators.js";
export { expandedSize, type PatternCost, patternCost } from "./regex.js";
export type * from "./types.js";
