import type { Variant } from "./types.js";

/** A boolean flag's variants, fixed: `on` serves true and `off` serves false. */
export const BOOLEAN_VARIANTS: readonly Variant[] = Object.freeze([
  Object.freeze({ key: "on", value: true }),
  Object.freeze({ key: "off", value: false }),
]);
