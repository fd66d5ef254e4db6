// `@flagstaff/core/flagd`: flagd's flag-definition format both ways (docs/flagd.md).
export { flagEvaluator, segmentEvaluator, toFlagd } from "./export.js";
export { type FlagdImport, fromFlagd, type ImportedFlag } from "./import.js";
export { FLAGD_SCHEMA_URL, type FlagdDocument, type FlagdFlag, type Logic } from "./logic.js";
